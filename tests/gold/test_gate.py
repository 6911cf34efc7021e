"""The qualification gate (issue 20, section 1): someone who must qualify gets only their
qualification units; below the threshold they get no real unit, at or above it they do; tries are
limited, and out of tries the claim says so in plain words."""

import pytest

from annotator.errors import Forbidden
from annotator.gold import services
from annotator.gold.models import Attempt, Source, Standing
from annotator.qa.models import QueueItem, WorkUnit
from annotator.qa.queue import claim_next
from tests.gold.conftest import answer


@pytest.fixture
def gated(project, make_verified, make_unit, admin_user):
    """Two qualification units made from verified units, qualification required at 0.8 with 2 tries,
    no gold mixed in; and two real units waiting in the queue."""
    make_verified(3)
    made = services.make_sources(project, Source.Role.QUALIFICATION, 2)
    assert len(made) == 2
    services.set_policy(project, qualification_required=True, threshold=0.8, tries=2, gold_rate=0)
    return [make_unit(), make_unit()]


def test_a_new_annotator_gets_only_qualification_units_and_none_below_the_threshold(project, gated, annotator):
    first = claim_next(project, annotator)
    assert (first.kind, first.assigned_to_id, first.unit.purpose) == ("qualification", annotator.pk, "qualification")
    assert claim_next(project, annotator).pk == first.pk  # held: the same one back
    answer(first, annotator, right=3, key="q1")  # 3 of 4 agree
    second = claim_next(project, annotator)
    assert second.kind == "qualification" and second.unit_id not in (first.unit_id, *[u.pk for u in gated])
    answer(second, annotator, right=3, key="q2")  # 6 of 8 = 0.75 < 0.8: failed
    attempt = Attempt.objects.get(user=annotator, number=1)
    assert (attempt.agreed, attempt.decisions, attempt.score, attempt.passed) == (6, 8, 0.75, False)
    third = claim_next(project, annotator)  # the second try: new copies, still no real unit
    assert third.kind == "qualification" and third.unit.purpose == "qualification"
    assert Attempt.objects.filter(user=annotator, number=2, finished_at=None).exists()
    assert not QueueItem.objects.filter(unit__in=gated, leased_by=annotator).exists()


def test_reaching_the_threshold_opens_the_real_queue(project, gated, annotator):
    for key in ("a", "b"):
        item = claim_next(project, annotator)
        assert item.kind == "qualification"
        answer(item, annotator, key=key)  # all right
    attempt = Attempt.objects.get(user=annotator)
    assert (attempt.score, attempt.passed) == (1.0, True)
    assert Standing.objects.get(project=project, user=annotator).qualified_at is not None
    real = claim_next(project, annotator)
    assert (real.kind, real.unit_id) == ("first_pass", gated[0].pk)


def test_exactly_the_threshold_passes(project, gated, annotator):
    services.set_policy(project, threshold=0.75)
    for key in ("a", "b"):
        answer(claim_next(project, annotator), annotator, right=3, key=key)
    assert Attempt.objects.get(user=annotator).passed is True
    assert claim_next(project, annotator).unit_id == gated[0].pk


def test_out_of_tries_the_claim_says_so_and_serves_nothing(project, gated, annotator):
    for key in ("a", "b", "c", "d"):
        answer(claim_next(project, annotator), annotator, right=1, key=key)
    assert list(Attempt.objects.filter(user=annotator).values_list("number", "passed")) == [(1, False), (2, False)]
    with pytest.raises(Forbidden) as refused:
        claim_next(project, annotator)
    assert str(refused.value) == (
        "You have used all 2 of your tries at the qualification set of Test project without reaching 80% agreement "
        "with the known decisions (your best was 25%), so the project's units are not open to you. Ask an admin of "
        "the project (boss) for another try."
    )
    assert not QueueItem.objects.filter(leased_by=annotator, status="open").exists()
    services.grant_try(project, annotator.pk)  # an admin grants one more
    assert claim_next(project, annotator).kind == "qualification"


def test_other_roles_and_ungated_projects_go_straight_to_real_units(project, gated, annotator, verifier):
    assert claim_next(project, verifier).unit_id == gated[0].pk  # a reviewer is not gated
    services.set_policy(project, qualification_required=False)
    assert claim_next(project, annotator).unit_id == gated[1].pk


def test_a_required_qualification_without_a_set_is_refused_in_words(project, make_unit, annotator):
    make_unit()
    services.set_policy(project, qualification_required=True, gold_rate=0)
    with pytest.raises(Forbidden, match=r"asks annotators to pass a qualification set first, and it has none yet"):
        claim_next(project, annotator)


def test_two_claims_at_once_make_one_attempt(project, gated, annotator):
    first = claim_next(project, annotator)
    QueueItem.objects.filter(pk=first.pk).update(leased_by=None, lease_expires_at=None)  # as if the tab closed
    again = claim_next(project, annotator)
    assert again.pk == first.pk
    assert Attempt.objects.filter(user=annotator).count() == 1
    assert WorkUnit.objects.filter(purpose="qualification").count() == 2


def test_a_qualification_unit_cannot_be_skipped(project, gated, annotator):
    """It is assigned to the person and part of their attempt: skipped, it came straight back (a
    security review finding of issue 20). The skip is refused in words and the unit stays theirs."""
    from annotator.errors import Invalid
    from annotator.qa.models import Skip
    from annotator.qa.services import skip_unit

    item = claim_next(project, annotator)
    with pytest.raises(Invalid, match="a qualification unit cannot be skipped"):
        skip_unit(item.unit_id, annotator, "too hard")
    assert not Skip.objects.exists()
    item.refresh_from_db()
    assert (item.status, item.leased_by_id) == ("open", annotator.pk)


def test_a_unit_an_admin_assigns_waits_until_the_person_qualifies(project, gated, annotator):
    """An admin's assignment (units page) made a real unit claimable by someone still qualifying."""
    real = QueueItem.objects.get(unit=gated[0], kind="first_pass")
    QueueItem.objects.filter(pk=real.pk).update(assigned_to=annotator, priority=-5)
    for key in ("a", "b"):
        item = claim_next(project, annotator)
        assert item.kind == "qualification", item
        answer(item, annotator, key=key)
    assert claim_next(project, annotator).pk == real.pk  # qualified: the assignment is served first
