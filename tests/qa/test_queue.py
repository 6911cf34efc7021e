"""The queue: one item to one annotator, leases that lapse and renew, the same unit back in a second
tab, double-checks never served to the first annotator, overlap to k distinct people, skips, flags."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotator.errors import NotHeld
from annotator.projects.services import ensure_member
from annotator.qa import queue
from annotator.qa.models import QueueItem, WorkUnit
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, chosen, flag_qa_pair, set_queue_policy, skip_unit, submit_unit


def _keep_all(item, user, key):
    pairs = item.unit.qa_pairs.filter(status="draft" if item.kind != "double_check" else "verified")
    if item.kind == "overlap":
        pairs = item.unit.qa_pairs.filter(origin="machine")
    return submit_unit(
        item.unit_id,
        user,
        idempotency_key=key,
        time_spent_ms=1000,
        additions=[],
        decisions=[Decision(p.pk, "keep") for p in pairs],
    )


def test_it_serves_units_in_order_and_nothing_when_all_are_taken(make_unit, annotator, annotator2):
    first, second = make_unit(), make_unit()
    assert claim_next(first.project, annotator).unit == first
    assert claim_next(first.project, annotator2).unit == second
    third = ensure_member("ann3", role="annotator", project=first.project)[0]
    assert claim_next(first.project, third) is None


def test_the_same_person_in_two_tabs_gets_the_same_unit(make_unit, annotator):
    unit = make_unit()
    make_unit()
    first_tab = claim_next(unit.project, annotator)
    second_tab = claim_next(unit.project, annotator)
    assert first_tab.pk == second_tab.pk and first_tab.unit_id == unit.pk
    assert second_tab.lease_expires_at >= first_tab.lease_expires_at


def test_it_returns_a_unit_after_its_lease_lapses(make_unit, annotator, annotator2):
    unit = make_unit()
    claim_next(unit.project, annotator)
    assert claim_next(unit.project, annotator2) is None
    QueueItem.objects.filter(unit=unit).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    taken = claim_next(unit.project, annotator2)
    assert taken.unit_id == unit.pk and taken.leased_by == annotator2
    with pytest.raises(NotHeld):  # the first holder's heartbeat now finds it gone
        queue.renew(unit.pk, annotator)


def test_a_heartbeat_renews_the_lease_and_keeps_the_unit(make_unit, annotator, annotator2, settings):
    settings.QUEUE_LEASE_SECONDS = 60
    unit = make_unit()
    item = claim_next(unit.project, annotator)
    QueueItem.objects.filter(pk=item.pk).update(lease_expires_at=timezone.now() + timedelta(seconds=1))
    renewed = queue.renew(unit.pk, annotator)
    assert renewed.lease_expires_at > timezone.now() + timedelta(seconds=55)
    assert claim_next(unit.project, annotator2) is None


def test_a_lapsed_lease_nobody_took_still_belongs_to_its_holder(make_unit, annotator):
    unit = make_unit()
    item = claim_next(unit.project, annotator)
    QueueItem.objects.filter(pk=item.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=5))
    assert queue.renew(unit.pk, annotator).pk == item.pk
    assert claim_next(unit.project, annotator).pk == item.pk


def test_it_never_serves_a_done_item(make_unit, annotator, annotator2):
    unit = make_unit()
    item = claim_next(unit.project, annotator)
    unit.project.double_check_share = 0
    unit.project.save()
    _keep_all(item, annotator, "k")
    assert claim_next(unit.project, annotator2) is None


def test_a_double_check_is_never_served_to_the_first_annotator(make_unit, annotator, annotator2):
    unit = make_unit()
    set_queue_policy(unit.project, double_check_share=1.0)
    first = claim_next(unit.project, annotator)
    _keep_all(first, annotator, "first")
    assert claim_next(unit.project, annotator) is None  # the double-check exists but is not for them
    check = claim_next(unit.project, annotator2)
    assert (check.unit_id, check.kind, check.exclude_user) == (unit.pk, "double_check", annotator)
    result = _keep_all(check, annotator2, "second")
    assert result.counts["kept"] == 4
    assert set(unit.qa_pairs.values_list("status", flat=True)) == {"verified"}


def test_the_double_check_share_picks_about_that_share_of_units(project, make_unit, annotator):
    set_queue_policy(project, double_check_share=0.3)
    for i in range(200):
        make_unit(n_open=0)
    for i in range(200):
        _keep_all(claim_next(project, annotator), annotator, f"k{i}")
    # The units drawn are those ``chosen`` draws: their ids vary between runs, so the count does too
    # (60 expected, standard deviation 6.5); the share itself is checked over fixed ids below.
    drawn = [u for u in WorkUnit.objects.filter(project=project) if chosen(project, u.pk, "double_check", 0.3)]
    assert 20 <= len(drawn) <= 100
    checks = QueueItem.objects.filter(kind="double_check")
    assert sorted(checks.values_list("unit_id", flat=True)) == sorted(u.pk for u in drawn)
    assert set(QueueItem.objects.filter(kind="double_check").values_list("exclude_user", flat=True)) == {annotator.pk}


def test_the_share_draws_that_share_of_units_independently_per_kind():
    """``chosen`` over the fixed unit ids 1 to 10,000 (deterministic, whatever a run's ids): each share
    is drawn within 1.5 points, and the double-check and overlap draws are independent (their overlap
    is the product of the shares)."""
    from annotator.projects.models import Project

    ids = range(1, 10_001)
    for seed in (0, 7):
        project = Project(queue_seed=seed)
        for share in (0.1, 0.3, 0.5):
            checks = {u for u in ids if chosen(project, u, "double_check", share)}
            overlaps = {u for u in ids if chosen(project, u, "overlap", share)}
            assert abs(len(checks) / 10_000 - share) < 0.015 and abs(len(overlaps) / 10_000 - share) < 0.015
            assert abs(len(checks & overlaps) / 10_000 - share * share) < 0.015
        assert not any(chosen(project, u, "overlap", 0.0) for u in ids) and all(
            chosen(project, u, "overlap", 1.0) for u in ids
        )


def test_overlap_serves_a_unit_to_k_distinct_annotators_blind(make_unit, project, annotator, annotator2):
    set_queue_policy(project, overlap_share=1.0, overlap_k=3, double_check_share=0)
    unit = make_unit(n_open=1)
    third = ensure_member("ann3", role="annotator", project=project)[0]
    a = claim_next(project, annotator)
    b = claim_next(project, annotator2)
    c = claim_next(project, third)
    assert {x.unit_id for x in (a, b, c)} == {unit.pk}
    assert sorted((x.kind, x.seq) for x in (a, b, c)) == [("first_pass", 0), ("overlap", 1), ("overlap", 2)]
    _keep_all(a, annotator, "a")
    assert claim_next(project, annotator) is None  # no second pass of the same unit for the same person


def test_a_skipped_unit_goes_to_someone_else_and_never_back(make_unit, annotator, annotator2):
    unit = make_unit()
    claim_next(unit.project, annotator)
    with pytest.raises(match="give a reason"):
        skip_unit(unit.pk, annotator, "  ")
    skip_unit(unit.pk, annotator, "the video does not play")
    assert claim_next(unit.project, annotator) is None
    assert claim_next(unit.project, annotator2).unit_id == unit.pk


def test_a_skip_is_never_followed_by_another_pass_of_the_same_unit(make_unit, project, annotator, annotator2):
    """Issue 20, section 4: skipping an overlap unit's first pass must not serve its overlap pass
    (or any other pass) to the same person straight away."""
    set_queue_policy(project, overlap_share=1.0, overlap_k=2, double_check_share=0)
    unit, other = make_unit(), make_unit()
    first = claim_next(project, annotator)
    assert (first.unit_id, first.kind) == (unit.pk, "first_pass")
    skip_unit(unit.pk, annotator, "too dark to judge")
    nxt = claim_next(project, annotator)
    assert nxt.unit_id == other.pk  # not the overlap pass of the skipped unit
    assert claim_next(project, annotator2).unit_id == unit.pk  # others still get it


def test_an_assigned_item_goes_to_its_person_first_and_to_nobody_else(make_unit, project, annotator, annotator2):
    plain, assigned = make_unit(), make_unit()
    QueueItem.objects.filter(unit=assigned).update(assigned_to=annotator2)
    assert claim_next(project, annotator).unit_id == plain.pk
    third = ensure_member("ann3", role="annotator", project=project)[0]
    assert claim_next(project, third) is None  # the assigned item is nobody else's
    assert claim_next(project, annotator2).unit_id == assigned.pk


def test_model_flagged_units_are_served_first(make_unit, annotator):
    plain, flagged = make_unit(), make_unit()
    pair = flagged.qa_pairs.first()
    flag_qa_pair(pair.pk, reason="the answer contradicts the frames", source="reviewer-vlm")
    item = claim_next(plain.project, annotator)
    assert item.unit_id == flagged.pk
    assert flagged.qa_pairs.get(pk=pair.pk).revisions.last().actor_model == "reviewer-vlm"


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
            item = claim_next(project, person)
            results[person.username] = item.unit_id if item else None
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
    leases = dict(QueueItem.objects.values_list("unit_id", "leased_by__username"))
    assert {leases[pk] for pk in served} == {name for name, pk in results.items() if pk is not None}


@pytest.mark.django_db(transaction=True)
def test_one_person_claiming_in_many_tabs_at_once_gets_one_unit(make_unit, project, annotator):
    for _ in range(5):
        make_unit(n_open=1)
    barrier = threading.Barrier(6)
    got: list[int] = []

    def claim():
        try:
            barrier.wait(timeout=30)
            got.append(claim_next(project, annotator).pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=claim) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(got) == 6 and len(set(got)) == 1
    assert QueueItem.objects.filter(leased_by=annotator).count() == 1
