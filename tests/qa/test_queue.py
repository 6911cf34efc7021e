"""The queue: one unit to one annotator, leases that lapse, the same unit back on reload."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotator.projects.services import ensure_member
from annotator.qa.models import WorkUnit
from annotator.qa.queue import claim_next


def test_it_serves_units_in_order_and_nothing_when_all_are_taken(make_unit, annotator, annotator2):
    first, second = make_unit(), make_unit()
    assert claim_next(first.project, annotator) == first
    assert claim_next(first.project, annotator2) == second
    third = ensure_member("ann3", role="annotator", project=first.project)[0]
    assert claim_next(first.project, third) is None


def test_it_gives_the_same_unit_back_to_the_same_annotator(make_unit, annotator):
    unit = make_unit()
    make_unit()
    first = claim_next(unit.project, annotator)
    again = claim_next(unit.project, annotator)  # a reload, or a second tab
    assert first.pk == again.pk == unit.pk
    assert again.lease_expires_at >= first.lease_expires_at


def test_it_returns_a_unit_after_its_lease_lapses(make_unit, annotator, annotator2):
    unit = make_unit()
    claim_next(unit.project, annotator)
    assert claim_next(unit.project, annotator2) is None
    WorkUnit.objects.filter(pk=unit.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    taken = claim_next(unit.project, annotator2)
    assert taken.pk == unit.pk and taken.leased_by == annotator2


def test_it_never_serves_a_done_unit(make_unit, annotator):
    unit = make_unit()
    WorkUnit.objects.filter(pk=unit.pk).update(status=WorkUnit.Status.DONE)
    assert claim_next(unit.project, annotator) is None


@pytest.mark.django_db(transaction=True)
def test_many_annotators_claiming_at_once_never_get_the_same_unit(make_unit, project):
    """20 annotators in 20 threads (20 database connections) claim together, behind a barrier, for
    10 units: each unit goes to exactly one of them and the other 10 get nothing."""
    units = [make_unit(n_open=1) for _ in range(10)]
    people = [ensure_member(f"racer{i}", role="annotator", project=project)[0] for i in range(20)]
    barrier = threading.Barrier(len(people))
    results: dict[str, int | None] = {}
    errors: list[BaseException] = []

    def claim(person):
        try:
            barrier.wait(timeout=30)
            unit = claim_next(project, person)
            results[person.username] = unit.pk if unit else None
        except BaseException as exc:  # reported below, not swallowed
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(p,)) for p in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)

    assert errors == []
    served = [pk for pk in results.values() if pk is not None]
    assert len(results) == 20
    assert sorted(served) == sorted(u.pk for u in units)  # every unit once, none twice
    leases = dict(WorkUnit.objects.values_list("pk", "leased_by__username"))
    assert {leases[pk] for pk in served} == {name for name, pk in results.items() if pk is not None}
