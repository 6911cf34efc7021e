"""Locks in one order (issue 19): a participant's row before their trials' rows. An answer and the
idle release (``links.release_idle``) meet on one person who comes back just as they are timed
out; taking the two rows in opposite orders, each waited for the other and PostgreSQL aborted one
(``deadlock detected``). The same held for an admin starting their preview again while it
answered: the delete's cascade took the trials first. Two threads with their own connections, on
real PostgreSQL, set up each interleaving."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotator.studies import links, services
from annotator.studies.models import Participant, Trial
from tests.locks import wait_until_a_lock_waits
from tests.studies.conftest import verified  # noqa: F401 (a fixture)
from tests.studies.test_link_participants import panel  # noqa: F401 (a fixture)
from tests.studies.test_link_races import no_job_messages, on_practice  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)


def _first_lock(sql: str) -> bool:
    """A statement that takes a row lock an idle release also takes: the participant's row
    (``FOR UPDATE``) or the trial's (its answer's ``UPDATE``)."""
    return "FOR UPDATE" in sql or sql.startswith('UPDATE "studies_trial"')


def _answer_while(participant: Participant, tid: int, name: str, other) -> dict[str, object]:
    """Steps: (1) the answer of trial ``tid`` takes its first row lock in its own thread and pauses
    there; (2) ``other()`` starts in a second thread and runs until it waits for a lock the answer
    holds (seen in ``pg_stat_activity``: asserted, so the interleaving was really set up); (3) the
    answer goes on to its end. Returns {"answer": the answered trial's id, ``name``: what ``other``
    returned}, or the class and message of what either raised."""
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
        except Exception as exc:  # noqa: BLE001 - asserted by the caller
            out["answer"] = f"{type(exc).__name__}: {exc}"
        finally:
            locked.set()
            connection.close()

    def run_other():
        try:
            out[name] = other()
        except Exception as exc:  # noqa: BLE001 - asserted by the caller
            out[name] = f"{type(exc).__name__}: {exc}"
        finally:
            connection.close()

    answering = threading.Thread(target=answer)
    answering.start()
    assert locked.wait(30)
    running = threading.Thread(target=run_other)
    running.start()
    with connection.cursor() as cursor:
        waited = wait_until_a_lock_waits(cursor, alive=running.is_alive)
    go.set()
    answering.join(60)
    running.join(60)
    assert waited, f"{name} never waited for the answer's lock: {out}"
    return out


def test_an_answer_and_the_idle_release_of_its_person_at_once_both_finish(on_practice):
    """The answer first locks its person, then the idle release of the same person waits for it.
    In one order the answer finishes, then the release: the answer is stored (the practice, its
    stage moved on), the person is timed out and their other, unanswered trial released. In
    opposite orders the answer waits for the release's lock while the release waits for the
    answer's: PostgreSQL aborts one (seen failing so before the fix, the answer updating its trial
    first: the release raised ``OperationalError``, deadlock detected while deleting the trial)."""
    participant, tid = on_practice
    later = timezone.now() + timedelta(minutes=participant.study.abandon_after_min + 5)  # the person is idle by then
    out = _answer_while(participant, tid, "release", lambda: links.release_idle(now=later))
    assert out == {"answer": tid, "release": 1}
    trials = {t.pk: t for t in Trial.objects.filter(participant=participant)}
    assert list(trials) == [tid] and trials[tid].idempotency_key == "k"  # the answer kept, the rest released
    participant.refresh_from_db()
    assert (participant.status, participant.stage) == (Participant.Status.TIMED_OUT, Participant.Stage.DONE)


def test_an_answer_and_a_preview_started_again_at_once_both_finish(panel, admin_user, no_job_messages):
    """An admin's preview answers its practice trial while the same admin starts the preview again
    (``preview_participant(restart=True)``, which deletes the old preview with its trials). The
    restart waits for the answer, then deletes: both finish, and only the new preview is left.
    Django's cascade alone deletes the trials before the person's row, the opposite order: seen
    failing so before ``links.delete_participant`` (deadlock detected)."""
    study, _ = panel
    preview = links.preview_participant(study, admin_user)
    tid = Trial.objects.filter(participant=preview).order_by("position").values_list("pk", flat=True)[0]
    services.mark_shown(preview, tid)
    out = _answer_while(preview, tid, "restart", lambda: links.preview_participant(study, admin_user, restart=True).pk)
    assert out["answer"] == tid and isinstance(out["restart"], int), out
    assert list(Participant.objects.filter(study=study).values_list("pk", flat=True)) == [out["restart"]]
    assert not Trial.objects.filter(participant_id=preview.pk).exists()


def test_an_answer_and_the_deletion_of_its_person_s_account_at_once_both_finish(
    panel, django_user_model, no_job_messages
):
    """A person answers (here through their preview) while an admin deletes their account. The
    account's cascade deletes the person's trials, then their participant row; the
    ``pre_delete`` receiver ``links.lock_participants_of`` takes the participant's row first, so the
    deletion waits for the answer and both finish. Without the receiver the cascade took the
    trials first, against the answer's order (the deletion waits for the answer's participant lock
    while holding nothing; the answer then waits for the trial lock the deletion took)."""
    study, _ = panel
    person = django_user_model.objects.create_user("leaver", password="x")
    preview = links.preview_participant(study, person)
    tid = Trial.objects.filter(participant=preview).order_by("position").values_list("pk", flat=True)[0]
    services.mark_shown(preview, tid)

    def delete_account():
        django_user_model.objects.get(pk=person.pk).delete()
        return "deleted"

    out = _answer_while(preview, tid, "deletion", delete_account)
    assert out == {"answer": tid, "deletion": "deleted"}, out
    assert not Participant.objects.filter(pk=preview.pk).exists()
    assert not django_user_model.objects.filter(pk=person.pk).exists()
