"""Background work through an outbox: every job is a row (``core.Job``) before it is a message.

Services call ``enqueue(task_name, *ids, key=...)`` inside their transaction; it writes the row and
publishes the Celery message only on commit (``transaction.on_commit``), by task *name*, so services
never import tasks. Tasks are declared with ``job_task`` beside their app (``annotator/<app>/tasks.py``)
and receive only the job's id.

Protocol of one delivery (``job_task``'s wrapper):

1. Claim the row: ``UPDATE ... SET status='running', deliveries=deliveries+1 WHERE status IN
   ('queued', 'running')``. No row: the job is done, failed or gone (a redelivered or duplicate
   message) and the delivery returns at once. ``running`` is accepted because a worker that was
   killed mid-task leaves the row running and the broker delivers the message again.
2. If this is delivery number ``max_deliveries + 1``, the input has killed or timed out a worker
   every time: fail the job with that reason (and the task's ``on_give_up`` hook, e.g. the video is
   marked failed) instead of looping.
3. Run the task body with the job's args. ``RetryLater`` puts the row back to ``queued`` with a due
   time and publishes a delayed message; any other exception fails the job with its reason.
4. Mark the row done only if it is still this delivery's (a re-queue meanwhile wins).

``reconcile`` (Celery beat, every ``JOBS_RECONCILE_EVERY_S``) re-sends rows that went stale: queued
rows never published (broker down at commit) or published long ago without a delivery (a message
lost in a Redis restart), with a backoff between sends; and running rows older than their task's
time limit (the worker died without the broker redelivering), which count as a delivery.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import Callable

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from annotator.core.models import Job

log = logging.getLogger(__name__)


class RetryLater(Exception):
    """Raised by a task body to run the job again after ``countdown_s`` seconds; ``str()`` says why."""

    def __init__(self, reason: str, countdown_s: float):
        super().__init__(reason)
        self.countdown_s = countdown_s


@dataclass(frozen=True)
class TaskSpec:
    """What the reconciler knows of a task: its hard time limit (s), how many deliveries a job of it
    may take, and what to do when a job of it gives up (called with the job's args and the reason)."""

    name: str
    time_limit_s: int
    max_deliveries: int
    on_give_up: Callable[..., None] | None


REGISTRY: dict[str, TaskSpec] = {}

# The modules that declare job tasks (``settings.TASK_APPS``' ``tasks``); the reconciler imports
# them so it knows every task's limits, and ``workers.celery`` autodiscovers the same apps.
TASK_MODULES = [f"{app}.tasks" for app in settings.TASK_APPS]


def _load_tasks() -> None:
    for module in TASK_MODULES:
        importlib.import_module(module)


# ---------------------------------------------------------------------------------- queueing

_ENQUEUE_SQL = """
INSERT INTO core_job (task, key, args, status, deliveries, max_deliveries, sends, due_at, result, error,
                      created_at, updated_at)
VALUES (%(task)s, %(key)s, %(args)s, 'queued', 0, %(max)s, 0, %(due)s, '', '', %(now)s, %(now)s)
ON CONFLICT (key) DO UPDATE SET status = 'queued', deliveries = 0, max_deliveries = EXCLUDED.max_deliveries,
    args = EXCLUDED.args, due_at = EXCLUDED.due_at, error = '', result = '', finished_at = NULL,
    updated_at = EXCLUDED.updated_at
WHERE core_job.status <> 'queued'
RETURNING id"""


def job_key(task: str, *args: int | str) -> str:
    """The default key of a job of ``task`` on ``args`` (``enqueue``'s ``key``)."""
    return f"{task}:{':'.join(map(str, args))}"


def is_queued(task: str, *args: int | str, key: str | None = None) -> bool:
    """Whether the job of ``key`` (default ``job_key(task, *args)``) is queued, i.e. no worker has
    claimed it yet. A plain read that locks nothing: the answer may be stale by the time the caller
    acts on it, so a caller that skips ``enqueue`` on it needs its own protocol with the task (see
    ``studies.services.queue_scoring``)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM core_job WHERE key = %s AND status = 'queued'", [key or job_key(task, *args)])
        return cursor.fetchone() is not None


def enqueue(task: str, *args: int | str, key: str | None = None, countdown_s: float = 0) -> int | None:
    """Queue ``task`` on ``args`` (JSON scalars, usually primary keys) as one job row, and publish its
    message when the caller's transaction commits (at once in autocommit).

    ``key`` (default ``task:args``) names the work: while a job of that key is queued, queueing it
    again does nothing and returns None (its message is on the way); a running, done or failed job
    of that key is queued again (scoring after new answers). Returns the job id, or None.
    """
    _load_tasks()
    spec = REGISTRY.get(task)
    if spec is None:
        raise KeyError(f"no job task named {task!r}")
    key = key or job_key(task, *args)
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            _ENQUEUE_SQL,
            {
                "task": task,
                "key": key,
                "args": json.dumps(list(args)),
                "max": spec.max_deliveries,
                "due": now + timedelta(seconds=countdown_s),
                "now": now,
            },
        )
        row = cursor.fetchone()
    if row is None:
        return None
    job_id = row[0]
    transaction.on_commit(lambda: send(job_id, task=task, countdown_s=countdown_s))
    return job_id


def send(job_id: int, *, task: str, countdown_s: float = 0) -> bool:
    """Publish the message of job ``job_id`` (of Celery task ``task``) and record it. Returns False
    (and logs why) when the broker cannot be reached: the row stays queued and the reconciler sends
    it later."""
    from workers.celery import app

    try:
        # No result: a job's outcome is its row. Celery's Redis result backend would otherwise
        # subscribe this process to every task's result channel, a round trip per send and a
        # subscription kept until the process ends.
        app.send_task(task, args=[job_id], countdown=countdown_s or None, ignore_result=True)
    except Exception as exc:  # kombu/redis raise several kinds; none of them may lose the job
        log.warning(
            "job %s (%s) not sent, the broker is unreachable; the reconciler will send it: %s", job_id, task, exc
        )
        return False
    Job.objects.filter(pk=job_id).update(sent_at=timezone.now(), sends=F("sends") + 1)
    return True


def nudge(task: str, *args: int | str) -> None:
    """Publish a message of Celery task ``task`` on ``args`` when the caller's transaction commits,
    with no job row: for idempotent work that a periodic task does too, so a lost message costs only
    the wait for the next period (``gold.premake_for``, which beat's ``gold.premake`` backs up).
    In a web request the message goes once the response has been sent (``request_finished``), so the
    person never waits for the broker: about 1 ms idle, several under load (bench/queue.py, issue 20).
    Never raises: an unreachable broker is logged, and the caller's work stands."""

    def publish() -> None:
        from workers.celery import app

        try:
            app.send_task(task, args=list(args), ignore_result=True)
        except Exception as exc:  # kombu/redis raise several kinds; the periodic task does the work
            log.warning("%s%s not sent, the broker is unreachable; its periodic task will do it: %s", task, args, exc)

    def committed() -> None:
        waiting = getattr(_after_response, "pending", None)
        if waiting is None:
            publish()  # not in a request (a worker, a command): now
        else:
            waiting.append(publish)

    transaction.on_commit(committed)


# The nudges of the request this thread serves, published after its response (``nudge``).
_after_response = threading.local()


def request_started(**kwargs) -> None:
    """Receiver of Django's ``request_started`` (connected in ``CoreConfig.ready``): nudges wait."""
    _after_response.pending = []


def request_finished(**kwargs) -> None:
    """Receiver of Django's ``request_finished``, sent when the server closes the response (after
    its body went out): publish the request's nudges."""
    waiting = getattr(_after_response, "pending", None)
    _after_response.pending = None
    for publish in waiting or ():
        publish()


# ------------------------------------------------------------------------------ running a job

_CLAIM_SQL = """
UPDATE core_job SET status = 'running', deliveries = deliveries + 1, started_at = %(now)s, updated_at = %(now)s
WHERE id = %(id)s AND status IN ('queued', 'running')
RETURNING task, args, deliveries, max_deliveries, error"""


def _claim(job_id: int):
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM_SQL, {"id": job_id, "now": timezone.now()})
        return cursor.fetchone()


def fail(job_id: int, reason: str, *, delivery: int | None = None) -> bool:
    """Mark the job failed with ``reason`` (plain words) and call its task's ``on_give_up`` hook.
    With ``delivery``, only if the row is still that delivery's. Returns whether it was marked."""
    rows = Job.objects.filter(pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
    if delivery is not None:
        rows = rows.filter(deliveries=delivery)
    job = rows.first()
    if job is None or not rows.update(status=Job.Status.FAILED, error=reason[:4000], finished_at=timezone.now()):
        return False
    log.warning("job %s (%s) failed: %s", job_id, job.task, reason)
    spec = REGISTRY.get(job.task)
    if spec and spec.on_give_up:
        spec.on_give_up(*job.args, reason=reason)
    return True


def _run(job_id: int, body: Callable[..., str]) -> str:
    claimed = _claim(job_id)
    if claimed is None:
        return "skipped: done, failed or gone"
    task, args, delivery, max_deliveries, last_error = claimed
    args = json.loads(args) if isinstance(args, str) else args  # a raw cursor returns jsonb as text
    if delivery > max_deliveries:
        reason = f"gave up after {max_deliveries} deliveries: a worker died or ran out of time on it each time" + (
            f" (last error: {last_error})" if last_error else ""
        )
        fail(job_id, reason)
        return "failed"
    try:
        result = body(*args)
    except RetryLater as exc:
        if delivery >= max_deliveries:
            fail(job_id, f"gave up after {delivery} attempts: {exc}", delivery=delivery)
            return "failed"
        due = timezone.now() + timedelta(seconds=exc.countdown_s)
        requeued = Job.objects.filter(pk=job_id, status=Job.Status.RUNNING, deliveries=delivery).update(
            status=Job.Status.QUEUED, due_at=due, error=str(exc)[:4000]
        )
        if requeued:
            send(job_id, task=task, countdown_s=exc.countdown_s)
        return "retry"
    except SoftTimeLimitExceeded:
        limit = REGISTRY[task].time_limit_s if task in REGISTRY else "its"
        fail(job_id, f"took longer than the task's {limit} s time limit", delivery=delivery)
        raise
    except Exception as exc:
        fail(job_id, f"{type(exc).__name__}: {exc}", delivery=delivery)
        raise
    Job.objects.filter(pk=job_id, status=Job.Status.RUNNING, deliveries=delivery).update(
        status=Job.Status.DONE, result=str(result)[:4000], finished_at=timezone.now(), error=""
    )
    return str(result)


def job_task(name: str, *, time_limit_s: int, max_deliveries: int = 3, on_give_up: Callable[..., None] | None = None):
    """Declare ``fn(*args) -> str`` as the Celery task ``name`` run through job rows (see the module
    docstring). ``time_limit_s`` is the hard limit (the worker process is killed, and ffmpeg with it);
    a soft limit 10 s earlier raises inside the body so temporary files are cleaned up.
    ``max_deliveries`` bounds deliveries of one job; ``on_give_up(*args, reason=...)`` runs when a job
    of this task fails for good."""

    def decorate(fn: Callable[..., str]):
        REGISTRY[name] = TaskSpec(name, time_limit_s, max_deliveries, on_give_up)

        @shared_task(
            name=name,
            acks_late=True,
            reject_on_worker_lost=True,
            time_limit=time_limit_s,
            soft_time_limit=max(time_limit_s - 10, 1),
        )
        @functools.wraps(fn)
        def task(job_id: int) -> str:
            return _run(job_id, fn)

        task.body = fn
        return task

    return decorate


# ------------------------------------------------------------------------------ reconciling


@dataclass
class ReconcileReport:
    """What one reconcile pass did: messages re-sent (queued rows), running rows found stale and
    re-sent, rows failed for good, and sends that failed because the broker is still down."""

    resent: int = 0
    stale_running: int = 0
    failed: int = 0
    unsent: int = 0


def reconcile() -> ReconcileReport:
    """Re-send jobs whose rows went stale and fail those out of deliveries (see the module docstring).

    Queued rows are sent when never sent, or when their last send is older than
    ``JOBS_RESEND_AFTER_S`` x 2^(sends-1) (capped at one hour), so a long backlog is not flooded with
    copies. Running rows older than their task's time limit + ``JOBS_STALE_SLACK_S`` count as a
    delivery that died: failed if it was the last allowed, else queued and sent again. Rows are
    claimed ``FOR UPDATE SKIP LOCKED``, so two reconcilers never handle one row.
    """
    _load_tasks()
    report = ReconcileReport()
    now = timezone.now()
    base = settings.JOBS_RESEND_AFTER_S
    to_send: list[tuple[int, str]] = []
    with transaction.atomic():
        rows = list(
            Job.objects.select_for_update(skip_locked=True)
            .filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
            .order_by("id")[:1000]
        )
        for job in rows:
            if job.status == Job.Status.QUEUED:
                if job.due_at > now:
                    continue
                wait = min(base * 2 ** max(job.sends - 1, 0), 3600)
                if job.sent_at is None or (now - max(job.sent_at, job.due_at)).total_seconds() > wait:
                    to_send.append((job.pk, job.task))
                continue
            spec = REGISTRY.get(job.task)
            limit = (spec.time_limit_s if spec else 3600) + settings.JOBS_STALE_SLACK_S
            if job.started_at and (now - job.started_at).total_seconds() > limit:
                report.stale_running += 1
                if job.deliveries >= job.max_deliveries:
                    reason = (
                        f"gave up after {job.deliveries} deliveries: the worker never finished it "
                        f"(killed, or over its {limit - settings.JOBS_STALE_SLACK_S} s limit)"
                    )
                    transaction.on_commit(functools.partial(fail, job.pk, reason, delivery=job.deliveries))
                    report.failed += 1
                else:
                    Job.objects.filter(pk=job.pk).update(status=Job.Status.QUEUED, due_at=now)
                    to_send.append((job.pk, job.task))
    for job_id, task in to_send:
        if send(job_id, task=task):
            report.resent += 1
        else:
            report.unsent += 1
    return report


def counts() -> dict[str, int]:
    """Jobs per status (all of them), for commands and the health of the queue."""
    from django.db.models import Count

    out = dict.fromkeys(Job.Status.values, 0)
    out.update(Job.objects.values_list("status").annotate(n=Count("id")))
    return out
