"""Reviews racing (transaction=True, real threads on PostgreSQL): parallel reviews with one
idempotency key all get the one saved result; parallel reviews with different keys: one wins."""

import threading

import pytest
from django.db import connection

from annotator.errors import DomainError
from annotator.qa.models import QueueItem, Revision
from annotator.review.models import Review, ReviewComment, ReviewState
from annotator.review.services import Comment, review_unit
from tests.locks import wait_until_a_lock_waits

pytestmark = pytest.mark.django_db(transaction=True)


def _race(n, target):
    start = threading.Barrier(n)
    results, errors = [], []

    def run(i):
        try:
            start.wait()
            results.append(target(i))
        except DomainError as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def test_parallel_reviews_with_one_key_all_get_the_replayed_result(make_unit, first_pass, annotator, reviewer):
    make_unit()
    unit = first_pass(annotator)
    pair = unit.qa_pairs.filter(status="verified").order_by("id").first()
    looked_at = unit.qa_pairs.count()  # the verified pairs and the one the first pass deleted

    results, errors = _race(
        6, lambda i: review_unit(unit.pk, reviewer, "reject", [Comment(pair.pk, "fix it", ["x"])], "same-key")
    )

    assert errors == []
    assert sorted(r.replayed for r in results) == [False] + [True] * 5
    assert len({(r.review_id, r.rework_item_id, r.state) for r in results}) == 1
    assert Review.objects.count() == 1 and ReviewComment.objects.count() == 1
    assert QueueItem.objects.filter(unit=unit, kind="rework").count() == 1
    assert Revision.objects.filter(action="review").count() == looked_at
    assert ReviewState.objects.get(unit=unit).state == "rejected"


def test_parallel_reviews_with_different_keys_review_the_unit_once(
    make_unit, first_pass, annotator, reviewer, admin_user
):
    make_unit()
    unit = first_pass(annotator)
    pair = unit.qa_pairs.filter(status="verified").first()
    people = [reviewer, admin_user] * 2

    results, errors = _race(
        4, lambda i: review_unit(unit.pk, people[i], "reject", [Comment(pair.pk, f"fix {i}")], f"k-{i}")
    )

    assert len(results) == 1 and len(errors) == 3
    assert all(e.startswith("Conflict: this unit was reviewed already (rejected)") for e in errors), errors
    assert Review.objects.count() == 1 and QueueItem.objects.filter(unit=unit, kind="rework").count() == 1


def test_closing_a_round_early_while_one_of_its_units_is_reviewed_does_not_deadlock(
    make_unit, first_pass, annotator, reviewer, project
):
    """A review locks its unit's state, then the round; closing the round early must take them in the
    same order. The review's side is played step by step so that the close starts between its two
    locks (PostgreSQL would otherwise abort one of them as a deadlock, after ``deadlock_timeout``)."""
    from django.db import transaction

    from annotator.review.models import ReviewRound
    from annotator.review.services import close_round_now, open_round

    for _ in range(2):
        make_unit()
        first_pass(annotator)
    round_ = open_round(project, all_units=True)
    unit_id = ReviewState.objects.filter(round=round_).order_by("unit_id").values_list("unit_id", flat=True)[0]
    state_held, errors, closer_pid = threading.Event(), [], []

    def review_side():
        try:
            with transaction.atomic():
                ReviewState.objects.select_for_update().get(unit_id=unit_id)
                state_held.set()
                with connection.cursor() as cursor:  # wait until the close waits on a lock
                    wait_until_a_lock_waits(cursor, pid_of=lambda: closer_pid[0] if closer_pid else None, timeout_s=4)
                ReviewRound.objects.select_for_update().get(pk=round_.pk)
        except Exception as exc:  # noqa: BLE001 - a deadlock is the failure under test
            errors.append(f"review: {type(exc).__name__}: {exc}")
        finally:
            connection.close()

    def close_side():
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                closer_pid.append(cursor.fetchone()[0])
            state_held.wait(10)
            close_round_now(round_.pk)
        except Exception as exc:  # noqa: BLE001
            errors.append(f"close: {type(exc).__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=review_side), threading.Thread(target=close_side)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    round_.refresh_from_db()
    assert round_.closed_at is not None
