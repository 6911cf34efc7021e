"""premake and a claim making the same person's gold copy at the same moment (transaction=True, real
threads on PostgreSQL; the last security review of issue 20, M3): one copy is made, never two, or the
person would be served the same unit twice."""

import threading
from types import SimpleNamespace

import pytest
from django.db import IntegrityError, connection, transaction

from annotator.gold import claims, services
from annotator.gold.models import Copy, Source
from tests.locks import wait_until_a_lock_waits

pytestmark = pytest.mark.django_db(transaction=True)


def test_premake_and_a_claim_racing_make_one_gold_copy_of_a_source_for_a_person(
    project, make_verified, make_unit, annotator
):
    make_verified(1)
    assert len(services.make_sources(project, Source.Role.GOLD, 1)) == 1
    make_unit()  # a real unit left, or no gold is picked
    first_in, results, errors, second_pid = threading.Event(), {}, [], []

    def first():  # premake's side: its copy is written, not yet committed, while the claim's statement runs
        try:
            with transaction.atomic():
                results["first"] = claims._serve_gold(project, annotator, salt="same")
                first_in.set()
                with connection.cursor() as cursor:  # until the second waits on a lock (the copy's key)
                    wait_until_a_lock_waits(cursor, pid_of=lambda: second_pid[0] if second_pid else None, timeout_s=5)
        except Exception as exc:  # noqa: BLE001
            errors.append(f"first: {type(exc).__name__}: {exc}")
        finally:
            connection.close()

    def second():  # the claim's fallback, the same pick at the same moment
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                second_pid.append(cursor.fetchone()[0])
            first_in.wait(10)
            results["second"] = claims._serve_gold(project, annotator, salt="same")
        except Exception as exc:  # noqa: BLE001
            errors.append(f"second: {type(exc).__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert results == {"first": 1, "second": 0}
    assert Copy.objects.filter(user=annotator, attempt__isnull=True).count() == 1


def test_a_copy_refused_by_any_other_rule_is_raised_not_taken_for_the_race(project, make_verified, make_unit):
    """Only ``gold_copy_once_per_person`` means "another transaction made this copy": any other
    broken rule (here the copy's person, who has no account row, checked at once) is a defect and
    reaches the caller (the last security review of issue 20, L3: every IntegrityError was
    swallowed, and the claim went on with no copy)."""
    make_verified(1)
    assert len(services.make_sources(project, Source.Role.GOLD, 1)) == 1
    make_unit()
    nobody = SimpleNamespace(pk=2_000_000_000)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the foreign keys are deferred to COMMIT
        with pytest.raises(IntegrityError, match="foreign key"):
            claims._serve_gold(project, nobody, salt="same")
    assert Copy.objects.count() == 0
