"""The one run engine (``annotator.inference.runs.RunEngine``) on its own: a kind of run given only
its per-item work, over real DraftRun/DraftJob rows in PostgreSQL. Drafting and evaluation runs are
tested end to end in tests/drafts and tests/evaluation; this says what the engine itself promises."""

from __future__ import annotations

import hashlib
import threading
import time

import pytest

from annotator.core.models import Job
from annotator.drafts.models import DraftJob, DraftRun
from annotator.inference.engine import Endpoint
from annotator.inference.runs import CancelFlag, RunEngine
from annotator.media.models import Video


class Recorder(RunEngine):
    """Items are a run's jobs; ``work`` records which thread did which job and how many ran at once."""

    run_model, item_model, item_run = DraftRun, DraftJob, "run"
    task, noun, thread_prefix, threads_per_slot = "drafts.run", "run", "t", 2

    def __init__(self, concurrency: int = 2, hold_s: float = 0.05, fail: set[int] = frozenset()):
        self.concurrency, self.hold_s, self.fail = concurrency, hold_s, fail
        self.done: list[int] = []
        self.at_once = self.most = 0
        self.lock = threading.Lock()
        self.finished: list[int] = []

    def endpoints(self, run):
        return {
            "caption": Endpoint(server="s", base_url="http://127.0.0.1:9/v1", model="m", concurrency=self.concurrency)
        }

    def work(self, run, endpoints, item_id, cancelled):
        with self.lock:
            self.at_once += 1
            self.most = max(self.most, self.at_once)
        try:
            time.sleep(self.hold_s)
            if item_id in self.fail:
                raise RuntimeError("a defect")
            DraftJob.objects.filter(pk=item_id).update(status="done")
            with self.lock:
                self.done.append(item_id)
            return "done"
        finally:
            with self.lock:
                self.at_once -= 1

    def finishing(self, run):
        self.finished.append(run.pk)


def _run(project, n: int) -> DraftRun:
    run = DraftRun.objects.create(project=project, pipeline="egonight", prompt_version="x")
    for i in range(n):
        video = Video.objects.create(
            project=project,
            sha256=hashlib.sha256(f"{run.pk}-{i}".encode()).hexdigest(),
            filename=f"v{i}.mp4",
            status=Video.Status.READY,
            duration_s=3.0,
        )
        DraftJob.objects.create(run=run, video=video)
    return run


@pytest.mark.django_db(transaction=True)
def test_a_slice_works_every_item_once_on_threads_bounded_by_the_servers_and_settles(project, settings):
    settings.DRAFT_RUN_MAX_THREADS = 64
    run = _run(project, 9)
    engine = Recorder(concurrency=2, fail={run.jobs.order_by("id")[4].pk})
    assert engine.execute(run.pk) == "failed"
    ids = list(run.jobs.order_by("id").values_list("id", flat=True))
    assert sorted(engine.done) == [i for i in ids if i not in engine.fail]
    assert engine.most == 4  # 2 threads per slot x concurrency 2
    assert (
        list(run.jobs.order_by("id").values_list("status", "attempts"))
        == [("done", 1)] * 4 + [("failed", 1)] + [("done", 1)] * 4
    )
    assert run.jobs.get(pk=ids[4]).error == "RuntimeError: a defect"  # the defect fails its item alone
    run.refresh_from_db()
    assert (run.status, run.started_at is not None, run.finished_at is not None) == ("failed", True, True)
    assert engine.finished == [run.pk]
    assert engine.execute(run.pk) == "failed"  # a failed run's slice finds nothing open
    assert engine.done.count(ids[0]) == 1


@pytest.mark.django_db(transaction=True)
def test_max_threads_bounds_the_slice_and_a_claimed_item_is_not_worked_twice(project, settings):
    settings.DRAFT_RUN_MAX_THREADS = 3
    run = _run(project, 6)
    engine = Recorder(concurrency=100)
    assert engine.threads(engine.endpoints(run)) == 3
    first = run.jobs.order_by("id").first()
    assert engine.claim(first.pk) is True
    DraftJob.objects.filter(pk=first.pk).update(status="done")  # another worker finished it
    assert engine.claim(first.pk) is False
    assert engine._work_one(run, {}, first.pk, lambda: False) == "gone"
    assert engine.execute(run.pk) == "done"
    assert engine.most == 3
    assert first.pk not in engine.done and len(engine.done) == 5


@pytest.mark.django_db(transaction=True)
def test_a_slice_that_runs_out_of_time_queues_the_run_again(project, settings, monkeypatch):
    # The job row is written, its message not published: a Celery worker left running by other tests
    # of the session would otherwise run the real drafting task on these rows (the run came back failed).
    from annotator import jobs

    monkeypatch.setattr(jobs, "send", lambda *args, **kwargs: True)
    settings.DRAFT_RUN_MAX_THREADS = 1
    settings.DRAFT_RUN_SLICE_S = 0.15
    run = _run(project, 5)
    engine = Recorder(concurrency=1, hold_s=0.1)
    engine.threads_per_slot = 1
    before = Job.objects.filter(task="drafts.run").count()
    assert engine.execute(run.pk) == "continued"
    assert 1 <= len(engine.done) < 5
    assert Job.objects.filter(task="drafts.run").count() == before + 1
    assert run.jobs.filter(status="queued").count() == 5 - len(engine.done)
    assert engine.finished == []
    settings.DRAFT_RUN_SLICE_S = 60
    assert engine.execute(run.pk) == "done"
    assert len(engine.done) == 5 and engine.finished == [run.pk]


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_run_stops_giving_out_items_and_cancels_the_rest(project, settings):
    settings.DRAFT_RUN_MAX_THREADS = 1
    run = _run(project, 4)
    engine = Recorder(concurrency=1, hold_s=0.3)
    engine.threads_per_slot = 1
    original = engine.work

    def work_then_cancel(run_, endpoints, item_id, cancelled):
        out = original(run_, endpoints, item_id, cancelled)
        if len(engine.done) == 1:
            engine.cancel(run_)
        return out

    engine.work = work_then_cancel
    assert engine.execute(run.pk) == "cancelled"
    # Cancellation is read at most once a second: the items given out before it was seen ran.
    assert 1 <= len(engine.done) <= 4
    statuses = list(run.jobs.order_by("id").values_list("status", flat=True))
    assert statuses == ["done"] * len(engine.done) + ["cancelled"] * (4 - len(engine.done))
    assert engine.execute(run.pk) == "gone"
    assert engine.finished == []


@pytest.mark.django_db
def test_the_cancel_flag_reads_the_database_at_most_once_a_second(project, django_assert_num_queries):
    run = _run(project, 0)
    flag = CancelFlag(DraftRun, run.pk)
    with django_assert_num_queries(1):
        assert flag() is False
    DraftRun.objects.filter(pk=run.pk).update(status="cancelled")
    with django_assert_num_queries(0):
        assert flag() is False  # not read again within the second
    flag.checked -= 1.1
    assert flag() is True
    with django_assert_num_queries(0):
        assert flag() is True  # once seen, it stays


@pytest.mark.django_db(transaction=True)
def test_cancelling_a_finished_run_is_a_conflict_that_changes_nothing(project):
    from annotator.errors import Conflict

    run = _run(project, 1)
    DraftRun.objects.filter(pk=run.pk).update(status="done")
    with pytest.raises(Conflict, match=f"run {run.pk} is done; only a queued or running run can be cancelled"):
        Recorder().cancel(run)
    assert DraftRun.objects.get(pk=run.pk).status == "done"
    assert run.jobs.get().status == "queued"
