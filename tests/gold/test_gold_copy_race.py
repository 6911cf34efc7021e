"""premake and a claim making the same person's gold copy at the same moment (transaction=True, real
threads on PostgreSQL; the last security review of issue 20, M3): one copy is made, never two, or the
person would be served the same unit twice."""

import threading

import pytest
from django.db import connection, transaction

from annotator.gold import claims, services
from annotator.gold.models import Copy, Source

pytestmark = pytest.mark.django_db(transaction=True)


def test_premake_and_a_claim_racing_make_one_gold_copy_of_a_source_for_a_person(
        project, make_verified, make_unit, annotator):
    make_verified(1)
    assert len(services.make_sources(project, Source.Role.GOLD, 1)) == 1
    make_unit()  # a real unit left, or no gold is picked
    first_in, results, errors, second_pid = threading.Event(), {}, [], []

    def first():  # premake's side: its copy is written, not yet committed, while the claim's statement runs
        try:
            with transaction.atomic():
                results["first"] = claims._serve_gold(project, annotator, salt="same")
                first_in.set()
                with connection.cursor() as cursor:
                    for _ in range(250):  # until the second waits on a lock (the copy's key)
                        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                       "AND pid = %s", second_pid or [0])
                        if second_pid and cursor.fetchone()[0]:
                            break
                        threading.Event().wait(0.02)
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
