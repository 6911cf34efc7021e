"""Locks in one order (issue 19): a participant's row before their trials' rows. An answer and the
idle release (``links.release_idle``) meet on one person who comes back just as they are timed
out; taking the two rows in opposite orders, each waited for the other and PostgreSQL aborted one
(``deadlock detected``). Two threads with their own connections, on real PostgreSQL, set up that
interleaving."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotator.studies import links, services
from annotator.studies.models import Participant, Trial
from tests.studies.conftest import verified  # noqa: F401 (a fixture)
from tests.studies.test_link_participants import panel  # noqa: F401 (a fixture)
from tests.studies.test_link_races import no_job_messages, on_practice  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)

WAITING = ("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
           "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()")


def _first_lock(sql: str) -> bool:
    """A statement that takes a row lock an idle release also takes: the participant's row
    (``FOR UPDATE``) or the trial's (its answer's ``UPDATE``)."""
    return "FOR UPDATE" in sql or sql.startswith('UPDATE "studies_trial"')


def test_an_answer_and_the_idle_release_of_its_person_at_once_both_finish(on_practice):
    """Steps: (1) the answer's transaction takes its first row lock and pauses there; (2) the idle
    release of the same person starts and runs until it waits for a lock the answer holds (seen in
    ``pg_stat_activity``); (3) the answer goes on to its end. In one order the answer finishes, then
    the release: the answer is stored (the practice, its stage moved on), the person is timed out
    and their other, unanswered trial released. In opposite orders the answer waits for the
    release's lock while the release waits for the answer's: PostgreSQL aborts one (seen failing
    so before the fix, the answer updating its trial first: the release raised ``OperationalError``,
    deadlock detected while deleting the trial)."""
    participant, tid = on_practice
    later = timezone.now() + timedelta(minutes=participant.study.abandon_after_min + 5)  # the person is idle by then
    locked, go = threading.Event(), threading.Event()
    out: dict[str, object] = {}

    def pause_after_first_lock(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not locked.is_set() and _first_lock(sql):
            locked.set()
            go.wait(30)
        return result

    def answer():
        try:
            with connection.execute_wrapper(pause_after_first_lock):
                out["answer"] = services.answer_trial(Participant.objects.get(pk=participant.pk), tid, 0, 1.0, "k").pk
        except Exception as exc:  # noqa: BLE001 - asserted below
            out["answer"] = f"{type(exc).__name__}: {exc}"
        finally:
            locked.set()
            connection.close()

    def release():
        try:
            out["release"] = links.release_idle(now=later)
        except Exception as exc:  # noqa: BLE001 - asserted below
            out["release"] = f"{type(exc).__name__}: {exc}"
        finally:
            connection.close()

    answering = threading.Thread(target=answer)
    answering.start()
    assert locked.wait(30)
    releasing = threading.Thread(target=release)
    releasing.start()
    deadline, waiting = time.monotonic() + 20, 0
    with connection.cursor() as cursor:
        while waiting == 0 and releasing.is_alive() and time.monotonic() < deadline:
            cursor.execute(WAITING)
            waiting = cursor.fetchone()[0]
    assert waiting == 1, "the release never waited for the answer's lock"  # the interleaving was set up
    go.set()
    answering.join(60)
    releasing.join(60)
    assert out == {"answer": tid, "release": 1}
    trials = {t.pk: t for t in Trial.objects.filter(participant=participant)}
    assert list(trials) == [tid] and trials[tid].idempotency_key == "k"   # the answer kept, the rest released
    participant.refresh_from_db()
    assert (participant.status, participant.stage) == (Participant.Status.TIMED_OUT, Participant.Stage.DONE)
