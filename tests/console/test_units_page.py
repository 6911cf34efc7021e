"""Issue 20, section 7: the units list for admins (filters, keyset paging, assign, release, reopen),
"My work" for annotators, and the home page grouped by task."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotator.qa.models import QueueItem
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, set_queue_policy, submit_unit
from annotator.review.services import Comment, review_unit
from tests.conftest import ih, uh


def _client(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def _items(html: bytes) -> list[int]:
    return [int(x) for x in re.findall(rb'<tr data-item="(\d+)"', html)]


def _submit(project, user, key):
    item = claim_next(project, user)
    submit_unit(
        item.unit_id,
        user,
        idempotency_key=key,
        time_spent_ms=1000,
        additions=[],
        decisions=[Decision(p.pk, "keep") for p in item.unit.qa_pairs.filter(status="draft")],
    )
    return item


def test_the_list_pages_by_keyset_and_filters(project, make_unit, admin_user, annotator):
    set_queue_policy(project, double_check_share=0)
    units = [make_unit(1) for _ in range(55)]
    done = _submit(project, annotator, "a")
    admin = _client(admin_user)
    first = admin.get("/projects/proj/units/")
    assert first.status_code == 200
    ids = _items(first.content)
    everything = list(QueueItem.objects.order_by("-id").values_list("id", flat=True))
    assert ids == everything[:50]
    older = re.search(rb'href="\?([^"]+)" rel="next"', first.content).group(1).decode().replace("&amp;", "&")
    second = admin.get("/projects/proj/units/?" + older)
    assert _items(second.content) == everything[50:] and b'rel="next"' not in second.content
    # Filters: status, annotator, video file name.
    assert _items(admin.get("/projects/proj/units/?status=done").content) == [done.pk]
    assert _items(admin.get("/projects/proj/units/?annotator=ann").content) == [done.pk]
    assert _items(admin.get("/projects/proj/units/?review=submitted").content) == [done.pk]
    assert len(_items(admin.get("/projects/proj/units/?review=none").content)) == 50
    name = units[3].video.filename
    assert _items(admin.get(f"/projects/proj/units/?video={name}").content) == list(
        QueueItem.objects.filter(unit__video__filename__icontains=name).order_by("-id").values_list("id", flat=True)
    )
    # A bad filter is refused in words, never a 500; a bad cursor too.
    bad = admin.get("/projects/proj/units/?status=finished&before=abc")
    assert bad.status_code == 400
    assert (
        b"status: one of open, done" in bad.content and b"before: the page cursor must be a whole number" in bad.content
    )
    assert admin.get("/projects/proj/units/?before=" + "9" * 30).status_code == 400


def test_only_admins_see_the_list(project, make_unit, annotator):
    make_unit(1)
    assert _client(annotator).get("/projects/proj/units/").status_code == 403


def test_assign_release_and_reopen(project, make_unit, admin_user, annotator, annotator2):
    set_queue_policy(project, double_check_share=0)
    plain, kept = make_unit(1), make_unit(1)
    admin = _client(admin_user)
    target = QueueItem.objects.get(unit=kept)
    res = admin.post(
        "/projects/proj/units/action/", {"action": "assign", "item": target.pk, "username": "ann2"}, follow=True
    )
    assert b"is now served to ann2 only, first" in res.content
    assert claim_next(project, annotator).unit_id == plain.pk  # not the assigned one
    held = claim_next(project, annotator2)
    assert held.unit_id == kept.pk
    # Release: the holder loses it, the item is open and free again.
    res = admin.post("/projects/proj/units/action/", {"action": "release", "item": held.pk}, follow=True)
    assert b"is back in the queue" in res.content
    assert QueueItem.objects.filter(pk=held.pk, leased_by__isnull=True, status="open").exists()
    # Bad input: nothing done, said in words.
    res = admin.post(
        "/projects/proj/units/action/", {"action": "assign", "item": held.pk, "username": "nobody"}, follow=True
    )
    assert b"nothing done: &#x27;nobody&#x27; is not an annotator" in res.content
    res = admin.post("/projects/proj/units/action/", {"action": "reopen", "item": "x"}, follow=True)
    assert b"nothing done: the queue item must be a whole number" in res.content
    # Nobody gets a pass of a unit they already did a pass of.
    res = admin.post(
        "/projects/proj/units/action/", {"action": "assign", "item": held.pk, "username": "ann2"}, follow=True
    )
    assert b"is now served to ann2 only, first" in res.content  # ann2 held it but did not submit
    # Reopen a done unit: a rework pass served first to its annotator.
    first = _submit(project, annotator, "p")
    res = admin.post("/projects/proj/units/action/", {"action": "reopen", "item": first.pk}, follow=True)
    assert f"unit {first.unit_id} reopened: a rework pass is served first to ann".encode() in res.content
    again = claim_next(project, annotator)
    assert (again.unit_id, again.kind, again.assigned_to_id) == (first.unit_id, "rework", annotator.pk)
    res = admin.post("/projects/proj/units/action/", {"action": "reopen", "item": first.pk}, follow=True)
    assert b"nothing done: a rework of this unit is open already" in res.content
    assert (
        _client(annotator).post("/projects/proj/units/action/", {"action": "release", "item": again.pk}).status_code
        == 403
    )


def test_my_work_lists_my_passes_with_their_review_and_lets_me_reopen(
    project, make_unit, admin_user, annotator, annotator2
):
    set_queue_policy(project, double_check_share=0)
    make_unit(1), make_unit(1), make_unit(1)
    mine = _submit(project, annotator, "m")
    theirs = _submit(project, annotator2, "n")
    me = _client(annotator)
    page = me.get("/projects/proj/my-work/")
    assert page.status_code == 200 and re.findall(rb'<tr data-item="([a-z2-7]{13})"', page.content) == [
        ih(mine).encode()
    ]
    assert b"submitted, awaiting review" in page.content and b"Sent back to you" not in page.content
    assert b"<dt>Units</dt><dd>1</dd>" in page.content  # own figures this month
    # Someone else's unit cannot be reopened by me; mine can, until it is reviewed.
    res = me.post("/projects/proj/my-work/reopen/", {"unit": uh(theirs.unit_id)}, follow=True)
    assert b"not reopened: only the person who submitted" in res.content
    assert (
        me.post("/projects/proj/my-work/reopen/", {"unit": mine.unit_id}, follow=True).content.count(
            b"not reopened: no such unit"
        )
        == 1
    )  # a row id is no unit here: the page names units by handle (issue 20)
    res = me.post("/projects/proj/my-work/reopen/", {"unit": uh(mine.unit_id)}, follow=True)
    assert f"unit {uh(mine.unit_id)} reopened".encode() in res.content and b"Sent back to you" in res.content
    # A reviewer's rejection shows with its comment.
    again = claim_next(project, annotator)
    assert (again.unit_id, again.kind) == (mine.unit_id, "rework")
    submit_unit(
        again.unit_id,
        annotator,
        idempotency_key="r",
        time_spent_ms=1000,
        additions=[],
        decisions=[Decision(p.pk, "keep") for p in again.unit.qa_pairs.filter(status="verified")],
    )
    pair = again.unit.qa_pairs.first()
    review_unit(mine.unit_id, admin_user, "reject", [Comment(pair.pk, "the cup is a mug", ["wrong_answer"])], "rv1")
    page = me.get("/projects/proj/my-work/").content
    assert b"rejected, rework open" in page and b"the cup is a mug" in page and b"[wrong_answer]" in page
    assert me.get("/projects/proj/my-work/?period=forever").status_code == 400


@pytest.mark.parametrize(
    "who, groups", [("admin_user", ["Verify", "Models", "Results", "Export", "Team"]), ("annotator", ["Verify"])]
)
def test_home_groups_pages_by_task(request, project, who, groups):
    html = _client(request.getfixturevalue(who)).get("/").content.decode()
    assert re.findall(r"<h3>([^<]+)</h3>", html) == groups
    team = ["Review", "Units", "Team figures and pay", "Qualification and gold"]
    assert [name for name in team if f">{name}</a>" in html] == (team if "Team" in groups else [])
    assert ">Tutorial</a>" in html and ">My work</a>" in html


def test_a_reviewer_holding_a_blind_pass_cannot_read_the_first_pass_on_the_review_page(
    project, make_unit, annotator, admin_user
):
    from rest_framework.test import APIClient

    from annotator.projects.services import ensure_member

    set_queue_policy(project, double_check_share=0, overlap_share=1.0, overlap_k=2)
    unit = make_unit(1)
    first = claim_next(project, annotator)
    pair = first.unit.qa_pairs.filter(origin="machine", options__isnull=True).first()
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="f",
        time_spent_ms=1000,
        additions=[],
        decisions=[
            Decision(p.pk, "modify", question=p.question, answer="SECRET answer")
            if p.pk == pair.pk
            else Decision(p.pk, "keep")
            for p in first.unit.qa_pairs.all()
        ],
    )
    reviewer = ensure_member("rev", role="reviewer", project=project)[0]
    assert claim_next(project, reviewer).kind == "overlap"
    page = _client(reviewer)
    assert page.get(f"/projects/proj/review/?unit={unit.pk}").status_code == 403
    assert b"SECRET answer" not in page.get("/projects/proj/review/").content  # not offered as the first unit
    api = APIClient()
    api.force_authenticate(reviewer)
    assert api.get(f"/api/units/{unit.pk}/review/").status_code == 403
    assert (
        api.post(
            f"/api/units/{unit.pk}/review/",
            {"decision": "accept", "comments": [], "idempotency_key": "x"},
            format="json",
        ).status_code
        == 403
    )
    # An admin may not hand the overlap pass to the person who did the first pass.
    overlap = QueueItem.objects.get(unit=unit, kind="overlap")
    QueueItem.objects.filter(pk=overlap.pk).update(leased_by=None, lease_expires_at=None)
    res = _client(admin_user).post(
        "/projects/proj/units/action/", {"action": "assign", "item": overlap.pk, "username": "ann"}, follow=True
    )
    assert b"nothing done: ann already did a pass of this unit" in res.content


def test_what_the_review_page_shows_goes_in_the_reviewers_exposure_ledger_once(project, make_unit, annotator):
    from annotator.exposure.models import Exposure
    from annotator.projects.services import ensure_member

    set_queue_policy(project, double_check_share=0)
    unit = make_unit(1)
    _submit(project, annotator, "s")
    reviewer = ensure_member("rev", role="reviewer", project=project)[0]
    page = _client(reviewer)
    assert page.get(f"/projects/proj/review/?unit={unit.pk}").status_code == 200
    rows = Exposure.objects.filter(ref=f"unit:{unit.pk}", person=f"user:{reviewer.pk}")
    shown = sorted((e.kind, e.video_id, e.qa_pair_id) for e in rows)
    assert ("footage", unit.video_id, None) in shown
    assert {q for k, _, q in shown if k == "answer"} == set(unit.qa_pairs.values_list("id", flat=True))
    page.get(f"/projects/proj/review/?unit={unit.pk}")
    assert rows.count() == len(shown)  # once per unit


def test_the_review_api_answers_an_annotator_the_same_for_others_units_and_unsubmitted_ones(
    project, make_unit, annotator, annotator2
):
    from rest_framework.test import APIClient

    set_queue_policy(project, double_check_share=0)
    theirs, untouched = make_unit(1), make_unit(1)
    _submit(project, annotator2, "t")
    api = APIClient()
    api.force_authenticate(annotator)
    answers = [api.get(f"/api/units/{u.pk}/review/") for u in (theirs, untouched)]
    assert [a.status_code for a in answers] == [404, 404]
    assert answers[0].json() == answers[1].json()


def test_a_reviewer_who_saw_a_unit_on_the_review_page_is_not_served_its_blind_overlap_pass(
    project, make_unit, annotator
):
    """Issue 20 (security review, finding 4): the review page shows the first pass's work; the unit's
    blind overlap pass must then go to someone else. Anyone else still gets it."""
    from annotator.exposure.models import Exposure
    from annotator.projects.services import ensure_member

    set_queue_policy(project, double_check_share=0, overlap_share=1.0, overlap_k=2)
    unit = make_unit(1)
    _submit(project, annotator, "s")
    reviewer = ensure_member("rev", role="reviewer", project=project)[0]
    other = ensure_member("rev2", role="reviewer", project=project)[0]
    assert _client(reviewer).get(f"/projects/proj/review/?unit={unit.pk}").status_code == 200
    assert Exposure.objects.filter(ref=f"unit:{unit.pk}", person=f"user:{reviewer.pk}", source="review").exists()
    assert claim_next(project, reviewer) is None  # the overlap pass is the only open item
    item = claim_next(project, other)
    assert (item.unit_id, item.kind) == (unit.pk, "overlap")


def test_a_unit_assigned_to_someone_who_skips_it_goes_back_to_everyone(project, make_unit, annotator, annotator2):
    """The claim never serves a skipped item to its skipper, assigned or not (a skipped gold copy must
    answer as a skipped real unit, issue 20): an admin's assignment they skip is then unassigned."""
    from annotator.qa.services import skip_unit

    set_queue_policy(project, double_check_share=0)
    unit = make_unit(1)
    QueueItem.objects.filter(unit=unit).update(assigned_to=annotator)
    assert claim_next(project, annotator2) is None  # assigned: not theirs
    item = claim_next(project, annotator)
    assert item.unit_id == unit.pk
    skip_unit(unit.pk, annotator, "not my language")
    assert claim_next(project, annotator) is None
    assert claim_next(project, annotator2).unit_id == unit.pk
