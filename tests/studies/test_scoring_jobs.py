"""Answers queue their study's scoring without waiting for each other (``services.queue_scoring``),
and a scoring run still scores every answer that counted on the job being queued
(``services.scoring_barrier``). Threads with their own database connections; the jobs' messages
are recorded, not sent to the session's Celery worker."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotator import jobs
from annotator.core.models import Job
from annotator.projects.services import ensure_member
from annotator.studies import services
from annotator.studies.models import Participant, Trial
from tests.studies.test_scoring import _ordering_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    """The job ids whose messages would have been sent."""
    out: list[int] = []
    monkeypatch.setattr(jobs, "send", lambda job_id, **kwargs: out.append(job_id) or True)
    return out


def _answer(study, item, person) -> Trial:
    """An answered, unscored trial of ``person`` (created as a participant) on ``item``."""
    now = timezone.now()
    participant = Participant.objects.create(study=study, user=person)
    return Trial.objects.create(
        participant=participant,
        item=item,
        position=0,
        response=item.truth[::-1],
        client_rt_ms=900.0,
        served_at=now,
        shown_at=now,
        answered_at=now,
    )


def _in_thread(target) -> threading.Thread:
    def run():
        try:
            target()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_an_answer_does_not_wait_for_the_queued_scoring_jobs_row(project, sent):
    """Steps: the study's scoring job is queued; a holder locks its row in an open transaction (as
    ``jobs.enqueue`` on a queued job did in every answer until commit); an answer's
    ``queue_scoring`` then returns while the row is held, and queues no second message."""
    study, _ = _ordering_study(project, n_items=1)
    with transaction.atomic():
        services.queue_scoring(study.pk)
    job = Job.objects.get(key=f"studies.score:{study.pk}")
    assert job.status == Job.Status.QUEUED and sent == [job.pk]
    locked, release = threading.Event(), threading.Event()

    def holder():
        with transaction.atomic():
            list(Job.objects.select_for_update().filter(pk=job.pk))
            locked.set()
            release.wait(60)

    done = threading.Event()

    def answer():
        with transaction.atomic():
            services.queue_scoring(study.pk)
        done.set()

    holding = _in_thread(holder)
    assert locked.wait(30)
    answering = _in_thread(answer)
    finished_while_held = done.wait(10)
    release.set()
    holding.join(30)
    answering.join(30)
    assert finished_while_held, "the answer waited for the scoring job's row"
    assert sent == [job.pk]  # the queued job's message only
    assert Job.objects.get(pk=job.pk).status == Job.Status.QUEUED


def test_a_scoring_run_waits_for_an_answer_that_counted_on_the_queued_job_and_scores_it(project, sent):
    """Steps: the job is queued; an answer writes its trial and sees the job queued, so queues
    nothing, and stays uncommitted; a scoring run starts (a worker's delivery, after its claim)
    and waits; once the answer commits, the run scores its trial."""
    study, items = _ordering_study(project, n_items=1)
    person = ensure_member("p1", role="annotator", project=project)[0]
    with transaction.atomic():
        services.queue_scoring(study.pk)
    assert len(sent) == 1
    answered, commit = threading.Event(), threading.Event()
    trial_ids: list[int] = []

    def answer():
        with transaction.atomic():
            trial_ids.append(_answer(study, items[0], person).pk)
            services.queue_scoring(study.pk)
            answered.set()
            commit.wait(60)

    scored: list[int] = []
    answering = _in_thread(answer)
    assert answered.wait(30)
    scoring = _in_thread(lambda: scored.append(services.score_pending(study.pk)))
    scoring.join(3)
    waited = scoring.is_alive()
    commit.set()
    answering.join(30)
    scoring.join(30)
    assert waited, "the scoring run did not wait for the open answer"
    assert scored == [1]
    assert Trial.objects.get(pk=trial_ids[0]).scored_at is not None
    assert len(sent) == 1  # the answer queued no second job


def test_an_answer_after_the_job_was_claimed_queues_it_again(project, sent):
    """A job a worker claimed (running) or finished (done) is queued again by the next answer, with
    its message sent on commit: the run under way may have read before this answer."""
    study, _ = _ordering_study(project, n_items=1)
    with transaction.atomic():
        services.queue_scoring(study.pk)
    job = Job.objects.get(key=f"studies.score:{study.pk}")
    for status in (Job.Status.RUNNING, Job.Status.DONE):
        Job.objects.filter(pk=job.pk).update(status=status)
        with transaction.atomic():
            services.queue_scoring(study.pk)
            assert len(sent) == 1 if status == Job.Status.RUNNING else 2  # not before commit
        assert Job.objects.get(pk=job.pk).status == Job.Status.QUEUED
    assert sent == [job.pk] * 3
