"""Issue 20, section 2, seen afterwards: a person's My work and review API show a gold copy they
submitted as they show a real unit (submitted, awaiting review, reopenable, counted in their
units), while no reviewer is ever given the copy."""

from __future__ import annotations

import re

from django.test import Client
from rest_framework.test import APIClient

from annotator.gold import services as gold
from annotator.gold.models import Result, Source
from annotator.qa.models import QAPair, QueueItem
from annotator.review.selectors import review_queue
from tests.conftest import qh, row_id, uh, without_random_tokens
from tests.gold.conftest import seed_for


def _row(html: str, unit_id: int) -> str:
    return re.search(rf"<tr data-item=\"[a-z2-7]{{13}}\"><td>unit {uh(unit_id)}</td>.*?</tr>", html, re.S).group(0)


def test_my_work_shows_a_gold_copy_as_a_real_unit(project, make_verified, make_unit, annotator):
    make_verified(2)
    assert len(gold.make_sources(project, Source.Role.GOLD, 2)) == 2
    gold.set_policy(project, gold_rate=0.5, seed=seed_for(project, annotator, [False, True]))
    real = make_unit()
    make_unit()  # a real unit left: gold is drawn only then
    api = APIClient()
    api.force_authenticate(annotator)
    for key in ("real", "gold"):
        unit = api.post(f"/api/projects/{project.slug}/queue/next/").json()
        pairs = QAPair.objects.filter(unit_id=row_id("unit", unit["id"]), status="draft").order_by("id")
        res = api.post(
            f"/api/units/{uh(unit['id'])}/submit/",
            {
                "idempotency_key": key,
                "time_spent_ms": 100,
                "decisions": [{"qa_id": qh(p), "action": "keep", "version": p.version} for p in pairs],
            },
            format="json",
        )
        assert res.status_code == 200, res.content
    copy_id = QueueItem.objects.filter(completed_by=annotator).exclude(unit=real).get().unit_id
    assert Result.objects.filter(user=annotator).count() == 1  # the copy was scored

    page = Client()
    page.force_login(annotator)
    html = page.get(f"/projects/{project.slug}/my-work/").content.decode()
    # Units and items by handle (issue 20): no row id, no file name.
    assert f"unit {copy_id}" not in html and "clip" not in without_random_tokens(html)[0]
    strip = lambda row: re.sub(r"[a-z2-7]{12}[acegikmoqsuwy246]|\d\d:\d\d", "", row)  # noqa: E731
    assert strip(_row(html, copy_id)) == strip(_row(html, real.pk))
    assert "submitted, awaiting review" in _row(html, copy_id) and ">Reopen</button>" in _row(html, copy_id)
    assert "<dt>Units</dt><dd>2</dd>" in html  # both units, as the person saw them
    assert "Gold accuracy" not in html  # it would change right after the gold unit (admins see it)
    # The review API answers the same for both.
    shapes = [api.get(f"/api/units/{uh(u)}/review/").json() for u in (real.pk, copy_id)]
    assert [(s["state"], s["can_reopen"], s["reviews"]) for s in shapes] == [("submitted", True, [])] * 2
    # No reviewer gets the copy (the verifier's two source units and the real one await review).
    queue = [s.unit_id for s in review_queue(project)]
    assert real.pk in queue and copy_id not in queue and len(queue) == 3
    # Reopened and resubmitted, the copy is not scored twice.
    res = page.post(f"/projects/{project.slug}/my-work/reopen/", {"unit": uh(copy_id)}, follow=True)
    assert f"unit {uh(copy_id)} reopened".encode() in res.content
    item = QueueItem.objects.get(unit_id=copy_id, kind="rework")
    served = api.post(f"/api/projects/{project.slug}/queue/next/").json()
    assert (served["id"], served["queue"]["kind"]) == (uh(copy_id), "rework")
    res = api.post(
        f"/api/units/{uh(copy_id)}/submit/",
        {
            "idempotency_key": "again",
            "time_spent_ms": 100,
            "decisions": [
                {"qa_id": qh(p), "action": "keep", "version": p.version}
                for p in QAPair.objects.filter(unit_id=copy_id, status="verified")
            ],
        },
        format="json",
    )
    assert res.status_code == 200, res.content
    assert QueueItem.objects.get(pk=item.pk).status == "done" and Result.objects.filter(user=annotator).count() == 1


def test_an_overlap_policy_set_later_gives_no_gold_copy_an_overlap_pass(project, make_verified, make_unit, annotator):
    from annotator.qa.services import set_queue_policy

    make_verified(1)
    assert len(gold.make_sources(project, Source.Role.GOLD, 1)) == 1
    gold.set_policy(project, gold_rate=0.5, seed=seed_for(project, annotator, [True]))
    real = make_unit()
    api = APIClient()
    api.force_authenticate(annotator)
    copy_id = api.post(f"/api/projects/{project.slug}/queue/next/").json()["id"]
    assert copy_id != real.pk  # a gold copy, held by the annotator
    set_queue_policy(project, overlap_share=1.0, overlap_k=2)
    overlaps = set(QueueItem.objects.filter(kind="overlap").values_list("unit_id", flat=True))
    assert real.pk in overlaps and copy_id not in overlaps
