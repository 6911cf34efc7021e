"""The one run engine: drafting runs, evaluations and study evaluations work their items through it.

A *run* is a row with a status (queued, running, done, failed, cancelled), ``error``,
``started_at`` and ``finished_at``; its *items* are rows (one per video of a drafting run, one per
question of an evaluation) with a status of the same names, ``attempts`` and ``error``. A kind of
run (``RunEngine``) names those two models, the job that works it, and gives two hooks: ``work``
(one item, in a thread; returns its final status) and ``finishing`` (just before a run is marked
done or failed). Everything else is here, once:

1. ``execute`` (the job): mark the run running, list its open items (queued or running: a
   ``running`` item is one whose worker died, so a redelivered job takes it again);
2. work them on ``threads(endpoints)`` threads (the servers' largest concurrency times
   ``threads_per_slot``, at most ``DRAFT_RUN_MAX_THREADS``), each item claimed first by a
   conditional update (``claim``: it changed one row, or another worker has it) and worked in its
   own database connection; every request also holds one of its server's slots in Redis
   (``annotator.inference.slots``);
3. stop giving out items after ``DRAFT_RUN_SLICE_S`` seconds or once the run is cancelled (read
   from the database at most once a second, ``CancelFlag``, which the items' model calls share),
   and wait for the items in flight;
4. ``settle``: a cancelled run stays cancelled and its open items become cancelled; items left
   open queue the job again ("continued"); else the run is done, or failed if an item failed.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Callable

from django.conf import settings
from django.db import close_old_connections, connection, models, transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotator import jobs
from annotator.errors import Conflict

log = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
OPEN = (QUEUED, RUNNING)


class CancelFlag:
    """Whether run ``run_id`` of ``model`` was cancelled, read from the database at most once a
    second (``every_s``) and shared by the threads of a slice; once true it stays true."""

    def __init__(self, model: type[models.Model], run_id: int, every_s: float = 1.0):
        self.model, self.run_id, self.every_s = model, run_id, every_s
        self.checked, self.cancelled = 0.0, False
        self.lock = threading.Lock()

    def __call__(self) -> bool:
        with self.lock:
            now = time.monotonic()
            if not self.cancelled and now - self.checked > self.every_s:
                self.checked = now
                self.cancelled = self.model.objects.filter(pk=self.run_id, status=CANCELLED).exists()
            return self.cancelled


class RunEngine:
    """A kind of run. Subclasses set the class attributes and implement ``endpoints`` and ``work``
    (and ``finishing`` when they have something to do before a run is marked finished).

    ``run_model``/``item_model``: the run's and its items' models; ``items``: the items' related
    name on the run; ``item_run``: the items' foreign key to the run; ``task``: the job name that
    executes a run (``annotator.jobs``); ``noun``: what the run is called in messages;
    ``threads_per_slot``: threads per slot of the busiest server (2 lets some sample frames while
    the others keep the slots busy).
    """

    run_model: type[models.Model]
    item_model: type[models.Model]
    items: str
    item_run: str
    task: str
    noun: str = "run"
    thread_prefix: str = "run"
    threads_per_slot: int = 1

    # ------------------------------------------------------------------ hooks

    def endpoints(self, run) -> dict:
        """Stage -> ``engine.Endpoint`` the run's items call."""
        raise NotImplementedError

    def work(self, run, endpoints: dict, item_id: int, cancelled: Callable[[], bool]) -> str:
        """Do claimed item ``item_id`` (its status is ``running``) and save its outcome; returns its
        final status. May raise: an exception fails the item alone (``fail_item``)."""
        raise NotImplementedError

    def finishing(self, run) -> None:
        """Called by ``settle`` just before the run is marked done or failed."""

    # ------------------------------------------------------------------ the engine

    def open_items(self, run_id: int):
        return self.item_model.objects.filter(**{f"{self.item_run}_id": run_id}, status__in=OPEN)

    def threads(self, endpoints: dict) -> int:
        """Threads of a slice: the largest concurrency of ``endpoints`` (1 with none) times
        ``threads_per_slot``, at most ``DRAFT_RUN_MAX_THREADS``."""
        busiest = max([e.concurrency for e in endpoints.values()] or [1])
        return min(settings.DRAFT_RUN_MAX_THREADS, self.threads_per_slot * busiest)

    def claim(self, item_id: int) -> bool:
        """Take item ``item_id`` if it is open (queued, or running after its worker died): one
        conditional UPDATE to running, attempts + 1, error cleared. False when it changed no row."""
        return bool(
            self.item_model.objects.filter(pk=item_id, status__in=OPEN).update(
                status=RUNNING, attempts=F("attempts") + 1, error=""
            )
        )

    def fail_item(self, item_id: int, reason: str) -> None:
        self.item_model.objects.filter(pk=item_id).update(status=FAILED, error=reason)

    def _work_one(self, run, endpoints: dict, item_id: int, cancelled) -> str:
        """Claim and do one item in this thread, in its own connection; returns its final status
        ("gone" when it could not be claimed). Never raises: a defect fails this item alone, with
        its reason, not the run."""
        close_old_connections()
        try:
            if not self.claim(item_id):
                return "gone"
            try:
                return self.work(run, endpoints, item_id, cancelled)
            except Exception as exc:
                log.exception("%s %s item %s", self.noun, run.pk, item_id)
                self.fail_item(item_id, f"{type(exc).__name__}: {exc}")
                return FAILED
        finally:
            connection.close()

    def execute(self, run_id: int) -> str:
        """Work the open items of run ``run_id`` for up to ``DRAFT_RUN_SLICE_S`` seconds on
        threads; then queue the run again if items remain, else settle its status. Returns
        "done", "failed", "cancelled", "continued" or "gone" (no such run, or it is done or
        cancelled)."""
        run = self.run_model.objects.filter(pk=run_id).first()
        if run is None or run.status in (DONE, CANCELLED):
            return "gone"
        self.run_model.objects.filter(pk=run_id).update(
            status=RUNNING, error="", started_at=Coalesce(F("started_at"), timezone.now())
        )
        endpoints = self.endpoints(run)
        threads = self.threads(endpoints)
        pending = iter(list(self.open_items(run_id).order_by("id").values_list("id", flat=True)))
        deadline = time.monotonic() + settings.DRAFT_RUN_SLICE_S
        cancelled = CancelFlag(self.run_model, run_id)
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"{self.thread_prefix}{run_id}") as pool:
            running: set = set()
            while True:
                while len(running) < threads and time.monotonic() < deadline and not cancelled():
                    item_id = next(pending, None)
                    if item_id is None:
                        break
                    running.add(pool.submit(self._work_one, run, endpoints, item_id, cancelled))
                if not running:
                    break
                _, running = wait(running, return_when=FIRST_COMPLETED)
        return self.settle(run_id)

    def settle(self, run_id: int) -> str:
        """After a slice: a cancelled run stays cancelled (its open items become cancelled); items
        left open queue the run again ("continued"); else done, or failed if any item failed."""
        run = self.run_model.objects.get(pk=run_id)
        if run.status == CANCELLED:
            self.open_items(run_id).update(status=CANCELLED)
            return CANCELLED
        if self.open_items(run_id).exists():
            jobs.enqueue(self.task, run_id)
            return "continued"
        failed = self.item_model.objects.filter(**{f"{self.item_run}_id": run_id}, status=FAILED).exists()
        status = FAILED if failed else DONE
        self.finishing(run)
        self.run_model.objects.filter(pk=run_id).exclude(status=CANCELLED).update(
            status=status, finished_at=timezone.now()
        )
        return status

    def mark_failed(self, run_id: int, reason: str) -> None:
        """The run's job gave up (a worker died on it every time): fail the run and its open items
        with ``reason``."""
        self.run_model.objects.filter(pk=run_id).exclude(status__in=[DONE, CANCELLED]).update(
            status=FAILED, error=reason, finished_at=timezone.now()
        )
        self.open_items(run_id).update(status=FAILED, error=reason)

    def cancel(self, run):
        """Cancel a queued or running run: items not started are cancelled at once, items in
        flight stop before their next model call. Returns the run. Raises Conflict for a finished
        one."""
        with transaction.atomic():
            run = self.run_model.objects.select_for_update().get(pk=run.pk)
            if run.status not in OPEN:
                raise Conflict(self.not_cancellable(run))
            run.status, run.finished_at = CANCELLED, timezone.now()
            run.save(update_fields=["status", "finished_at"])
            self.item_model.objects.filter(**{f"{self.item_run}_id": run.pk}, status=QUEUED).update(status=CANCELLED)
        return run

    def not_cancellable(self, run) -> str:
        return f"{self.noun} {run.pk} is {run.status}; only a queued or running {self.noun} can be cancelled"
