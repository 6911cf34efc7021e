"""Quotas (issue 19): a full study is not offered on the home page and an account enrolling in it is
told so (no trial, no participant kept); an idle link participant is timed out by the periodic job,
their unanswered trials released (answered ones kept), which frees their place under the
raters-per-item cap."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.core.models import Job
from annotator.studies import links, tasks
from annotator.studies.models import Participant, Trial
from tests.studies.conftest import api_as, verified  # noqa: F401 (a fixture)
from tests.studies.test_link_participants import answer_all, browser, enter, panel, through_screening  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _answer_practice(client, study):
    """Begin and answer the practice trial only; returns the open scored trial's id."""
    from tests.studies.test_link_participants import api

    state = api(client, f"/api/studies/{study.pk}/enroll/").json()
    tid = state["trial"]["trial_id"]
    assert state["trial"]["practice"] is True
    api(client, f"/api/trials/{tid}/shown/")
    assert (
        api(
            client, f"/api/trials/{tid}/answer/", {"response": 0, "client_rt_ms": 5, "idempotency_key": "p"}
        ).status_code
        == 200
    )
    return client.get(f"/api/studies/{study.pk}/current/").json()["trial"]["trial_id"]


def test_an_idle_participant_is_timed_out_and_their_place_freed_while_an_active_one_is_kept(panel):
    study, token = panel
    idle, active = browser(), browser()
    enter(idle, token, pid="idle-person")
    through_screening(idle, token)
    open_trial = _answer_practice(idle, study)
    enter(active, token, pid="active-person")
    assert b"This study is full" in enter(browser(), token, pid="late-person").content
    Participant.objects.filter(pseudonym=links.pseudonym_of("idle-person")).update(
        last_active_at=timezone.now() - timedelta(minutes=61)
    )
    Participant.objects.filter(pseudonym=links.pseudonym_of("active-person")).update(
        last_active_at=timezone.now() - timedelta(minutes=59)
    )

    job_id = tasks.release_idle_schedule()  # what beat runs: a job row first
    assert Job.objects.get(pk=job_id).task == "studies.release_idle"
    assert links.release_idle() == 1

    gone = Participant.objects.get(pseudonym=links.pseudonym_of("idle-person"))
    kept = Participant.objects.get(pseudonym=links.pseudonym_of("active-person"))
    assert (gone.status, gone.export_status, gone.stage) == ("timed_out", "timed_out", "done")
    assert list(Trial.objects.filter(participant=gone).values_list("practice", flat=True)) == [True]  # answered kept
    assert not Trial.objects.filter(pk=open_trial).exists()
    assert (kept.status, Trial.objects.filter(participant=kept).count()) == ("in_progress", 2)
    assert links.release_idle() == 0  # idempotent
    # The freed item goes to the next person; the timed-out one's session shows the end, not a trial.
    res = enter(browser(), token, pid="late-person")
    assert res.status_code == 302
    assert Participant.objects.filter(pseudonym=links.pseudonym_of("late-person")).exists()
    page = idle.get(f"/s/{token}/")
    assert b"This session has ended" in page.content
    assert idle.get(f"/api/studies/{study.pk}/current/").json() == {"stage": "done", "trial": None}


def test_the_study_setting_decides_how_long_is_idle(panel):
    study, token = panel
    study.abandon_after_min = 5
    study.save()
    enter(browser(), token, pid="someone")
    Participant.objects.update(last_active_at=timezone.now() - timedelta(minutes=6))
    assert links.release_idle() == 1
    assert Participant.objects.get().status == "timed_out"


def test_a_full_study_is_not_offered_and_an_account_is_told_it_is_full(panel, project, client):
    from annotator.projects.services import ensure_member

    study, token = panel
    ann = ensure_member("late-ann", role="annotator", project=project, password="pw-late-ann-123")[0]
    client.force_login(ann)
    assert f"Take part: {study.name}".encode() in client.get("/").content
    for pid in ("first-person", "second-person"):
        enter(browser(), token, pid=pid)
    home = client.get("/").content
    assert f"Take part: {study.name}".encode() not in home and f"{study.name}: full".encode() in home
    res = api_as(ann).post(f"/api/studies/{study.pk}/enroll/")
    assert (res.status_code, res.json()["errors"]) == (409, {"study": "full"})
    assert not Participant.objects.filter(user=ann).exists()
