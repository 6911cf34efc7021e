"""Entries through a study link racing (issue 19): ``links.open_link`` reads what no other entry
changes before it takes the study's lock, and holds the lock for the cap's reads and the inserts
only. Threads with their own database connections enter at the same moment; the raters-per-item
cap, the link's maximum and one participant per panel id hold."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from django.db.models import Count

from annotator import jobs
from annotator.studies import links
from annotator.studies.models import Item, Participant, Study, StudyLink, Trial
from tests.studies.conftest import verified  # noqa: F401 (a fixture)
from tests.studies.test_link_participants import panel  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_job_messages(monkeypatch):
    """The answers' scoring jobs are written but not sent to the session's Celery worker: one running
    while the test database was flushed deadlocked the flush (a fresh-clone CI run)."""
    monkeypatch.setattr(jobs, "send", lambda *args, **kwargs: True)


def all_at_once(calls: list) -> list[object]:
    """Run each callable of ``calls`` in its own thread with its own database connection, all
    released together; returns, in order, each one's result or the class name of what it raised."""
    barrier = threading.Barrier(len(calls))
    out: dict[int, object] = {}

    def run(i: int, call) -> None:
        try:
            barrier.wait(timeout=30)
            out[i] = call()
        except Exception as exc:  # noqa: BLE001 - recorded, asserted by the caller
            out[i] = type(exc).__name__
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return [out[i] for i in range(len(calls))]


def at_once(link: StudyLink, pids: list[str]) -> list[tuple[str, object]]:
    """Open ``link`` with each panel id in its own thread, all released together; returns
    (pid, participant id or the exception's class name) in the order of ``pids``."""

    def enter(pid: str):
        return lambda: (
            links.open_link(StudyLink.objects.select_related("study").get(pk=link.pk), links.PanelIds(pid))[0].pk
        )

    return list(zip(pids, all_at_once([enter(pid) for pid in pids])))


def test_six_people_entering_at_once_fill_two_places_and_no_item_gets_a_second_rater(panel):
    study, token = panel  # 2 scored items, 1 rater each, 1 question a person
    link = links.link_of(token)
    results = at_once(link, [f"racer-{i}" for i in range(6)])
    entered = [r for r in results if isinstance(r[1], int)]
    assert len(entered) == 2
    assert sorted(r[1] for r in results if not isinstance(r[1], int)) == ["StudyFull"] * 4
    assert Participant.objects.filter(study=study).count() == 2  # the refused keep nothing
    raters = dict(
        Item.objects.filter(condition__study=study, role=Item.Role.SCORED)
        .annotate(n=Count("trials"))
        .values_list("pk", "n")
    )
    assert sorted(raters.values()) == [1, 1]
    assert Trial.objects.filter(participant__study=study).count() == 4  # 1 practice + 1 scored each


def test_a_link_admits_its_maximum_when_people_enter_at_once(panel):
    study, _ = panel
    study.raters_per_item = 5  # the cap leaves room for 10: the link's maximum decides
    study.save()
    link = links.create_link(study, max_participants=3).link
    results = at_once(link, [f"crowd-{i}" for i in range(7)])
    assert sum(isinstance(r[1], int) for r in results) == 3
    assert sorted(r[1] for r in results if not isinstance(r[1], int)) == ["StudyFull"] * 4
    assert Participant.objects.filter(link=link).count() == 3


def test_one_panel_id_opening_the_link_four_times_at_once_is_one_participant(panel):
    study, token = panel
    results = at_once(links.link_of(token), ["same-person"] * 4)
    ids = {r[1] for r in results}
    assert len(ids) == 1 and isinstance(ids.pop(), int)  # each got the same participant
    assert Participant.objects.filter(study=study).count() == 1
    assert Trial.objects.filter(participant__study=study).count() == 2


def answering_at_once(participant: Participant, trial_id: int, keys: list[str]) -> list[object]:
    """``services.answer_trial`` of one trial from one thread per key, released together; returns
    per key the stored idempotency key of the trial it got back, or the exception's class name."""
    from annotator.studies import services

    def answer(key: str):
        return lambda: (
            services.answer_trial(Participant.objects.get(pk=participant.pk), trial_id, 0, 1.0, key).idempotency_key
        )

    return all_at_once([answer(key) for key in keys])


@pytest.fixture
def on_practice(panel):
    """A link participant through the screening, on their practice trial, reported shown; returns
    (participant, trial id)."""
    from tests.studies.test_link_participants import api, browser, enter, through_screening

    study, token = panel
    client = browser()
    enter(client, token, pid="answering-person")
    through_screening(client, token)
    tid = api(client, f"/api/studies/{study.pk}/enroll/").json()["trial"]["trial_id"]
    assert api(client, f"/api/trials/{tid}/shown/").status_code == 200
    return Participant.objects.get(study=study), tid


def test_one_answer_sent_four_times_at_once_is_stored_once_and_each_gets_it_back(on_practice):
    participant, tid = on_practice
    assert answering_at_once(participant, tid, ["same-key"] * 4) == ["same-key"] * 4
    trial = Trial.objects.get(pk=tid)
    assert (trial.idempotency_key, trial.response) == ("same-key", 0)
    participant.refresh_from_db()
    assert participant.stage == "trials"  # moved on once, from the practice


def test_of_four_different_answers_at_once_one_is_stored_and_three_are_told_it_is_answered(on_practice):
    participant, tid = on_practice
    results = answering_at_once(participant, tid, [f"key-{i}" for i in range(4)])
    stored = Trial.objects.get(pk=tid).idempotency_key
    assert sorted(results) == sorted(["Conflict"] * 3 + [stored])
    assert results.count(stored) == 1


def test_an_entry_holding_the_study_lock_holds_up_neither_a_consent_nor_the_project(panel):
    """Steps: an entry holds the study's lock (``services.lock_open_study`` in an open transaction);
    meanwhile a participant who entered before accepts the consent, and a row that refers to the
    project is written (a video): both finish while the lock is held. (The lock once took the
    study's row with every consent, and the project's row with the study's.)"""
    from annotator.media.models import Video
    from annotator.studies import services

    study, token = panel
    participant, _ = links.open_link(links.link_of(token), links.PanelIds("consenting-person"))
    locked, release = threading.Event(), threading.Event()

    def entry():
        try:
            with transaction.atomic():
                services.lock_open_study(Study.objects.get(pk=study.pk))
                locked.set()
                release.wait(60)
        finally:
            connection.close()

    done: dict[str, object] = {}

    def meanwhile(name, call):
        def run():
            try:
                done[name] = call()
            finally:
                connection.close()

        return threading.Thread(target=run)

    holder = threading.Thread(target=entry)
    holder.start()
    assert locked.wait(30)
    others = [
        meanwhile("consent", lambda: links.consent(Participant.objects.get(pk=participant.pk), True).pk),
        meanwhile(
            "video", lambda: Video.objects.create(project_id=study.project_id, sha256="0" * 64, filename="new.mp4").pk
        ),
    ]
    for t in others:
        t.start()
    for t in others:
        t.join(10)
    finished_while_held = dict(done)
    release.set()
    holder.join(30)
    for t in others:
        t.join(30)
    assert finished_while_held == {"consent": participant.pk, "video": done["video"]}
