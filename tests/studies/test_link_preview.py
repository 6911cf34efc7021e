"""Preview (issue 19): admins and researchers take any study as a participant would, from the
results page; their trials are kept apart (a ``preview`` participant) and never counted in scores,
exports or quotas. Annotators cannot preview."""

from __future__ import annotations

import json

import pytest

from annotator.studies import selectors
from annotator.studies.models import Participant, Trial
from annotator.studies.services import score_pending
from tests.studies.conftest import api_as, people, verified  # noqa: F401 (a fixture)
from tests.studies.test_link_participants import browser, enter, panel  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _answer_all_as(api, study):
    state = api.post(f"/api/studies/{study.pk}/enroll/?preview=1").json()
    n = 0
    while state.get("trial") or state.get("next") == "current":
        if not state.get("trial"):
            state = api.get(f"/api/studies/{study.pk}/current/?preview=1").json()
            continue
        tid = state["trial"]["trial_id"]
        assert api.post(f"/api/trials/{tid}/shown/").status_code == 200
        res = api.post(
            f"/api/trials/{tid}/answer/",
            {"response": 0, "client_rt_ms": 5, "idempotency_key": f"k{tid}"},
            format="json",
        )
        assert res.status_code == 200, res.content
        n += 1
        state = res.json()
    return n, state


def test_a_researcher_previews_a_study_and_nothing_of_it_is_counted(panel, project, client):
    study, token = panel
    (researcher,) = people(project, 1, role="researcher", prefix="r")
    client.force_login(researcher)
    results = client.get(f"/projects/{project.slug}/studies/{study.name}/results/").content.decode()
    assert (
        f'href="/projects/{project.slug}/studies/{study.name}/preview/"' in results
        and "Preview as participant" in results
    )
    page = client.get(f"/projects/{project.slug}/studies/{study.name}/preview/")
    assert page.status_code == 200 and b'id="preview-banner"' in page.content
    assert f'"enrollUrl": "/api/studies/{study.pk}/enroll/?preview=1"'.encode() in page.content

    n, state = _answer_all_as(api_as(researcher), study)
    assert (n, state["stage"]) == (2, "done")
    preview = Participant.objects.get(study=study, user=researcher)
    assert (preview.kind, preview.preview) == ("preview", True)
    score_pending(study.pk)  # a worker left running by earlier tests may have scored some already
    assert Trial.objects.filter(participant=preview, scored_at__isnull=False).count() == 2  # scored like any
    # trial, but never shown as results
    assert selectors.score_table(study) == []
    assert list(selectors.trials_export(study)) == [] and list(selectors.participants_export(study)) == []
    res = api_as(researcher).get(f"/api/studies/{study.pk}/results/").json()
    assert (res["participants"], res["rows"]) == (0, [])
    # Quotas: one rater per item, two items; the preview took neither place.
    for pid in ("first-person", "second-person"):
        assert enter(browser(), token, pid=pid).status_code == 302
    assert Participant.objects.filter(study=study, kind="person").count() == 2


def test_starting_the_preview_again_deletes_the_old_one(panel, project, client):
    study, _ = panel
    (admin,) = people(project, 1, role="admin", prefix="a")
    api_as(admin).post(f"/api/studies/{study.pk}/enroll/?preview=1")
    first = Participant.objects.get(study=study, user=admin)
    client.force_login(admin)
    res = client.post(f"/projects/{project.slug}/studies/{study.name}/preview/")
    assert res.status_code == 302
    again = Participant.objects.get(study=study, user=admin)
    assert again.pk != first.pk and not Trial.objects.filter(participant_id=first.pk).exists()


def test_annotators_and_reviewers_cannot_preview(panel, project, annotator, client):
    study, _ = panel
    (reviewer,) = people(project, 1, role="reviewer", prefix="v")
    for user in (annotator, reviewer):
        client.force_login(user)
        assert client.get(f"/projects/{project.slug}/studies/{study.name}/preview/").status_code == 403
        assert api_as(user).post(f"/api/studies/{study.pk}/enroll/?preview=1").status_code == 403
    assert not Participant.objects.filter(kind="preview").exists()
    body = json.loads(api_as(reviewer).post(f"/api/studies/{study.pk}/enroll/").content)
    assert "cannot take part" in body["detail"]  # without preview: refused as before
