"""Gold copies are never reviewed, yet what becomes of them must not tell them apart from the real
units around them (issue 20, section 2; finding 6 of the second security review): they are
accepted when the real units submitted after them are reviewed, or by a round over all units, and
one the double-check draw chose answers as a real unit whose double-check is open, then leaves its
annotator's list as a double-checked unit does."""

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from annotator import jobs
from annotator.console import mywork
from annotator.core import handles
from annotator.core.models import Job
from annotator.errors import Conflict
from annotator.gold import services
from annotator.gold.models import Source
from annotator.qa.models import QueueItem
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, set_queue_policy, submit_unit
from annotator.review import tasks
from annotator.review.models import Review, ReviewState
from annotator.review.services import Comment, open_round, reopen_unit, review_unit
from tests.conftest import uh
from tests.gold.conftest import answer, seed_for


def _keep_all(item, user, key):
    return submit_unit(
        item.unit_id,
        user,
        idempotency_key=key,
        time_spent_ms=400,
        additions=[],
        decisions=[Decision(p.pk, "keep", version=p.version) for p in item.unit.qa_pairs.order_by("id")],
    )


def _claims(project, make_verified, annotator, make_unit, pattern, double_check_share=0.0):
    """The person's claims, each submitted in turn: gold where ``pattern`` says, real otherwise, under
    the project's ``double_check_share``. A first claim is always real (``pattern[0]`` False: no
    claim before it made a copy). Returns the items, in claim order."""
    make_verified(pattern.count(True))
    assert len(services.make_sources(project, Source.Role.GOLD, pattern.count(True))) == pattern.count(True)
    set_queue_policy(project, double_check_share=double_check_share)
    for _ in range(pattern.count(False) + 1):  # and one left: gold is drawn only while a real unit is
        make_unit()
    services.set_policy(project, gold_rate=0.5, seed=seed_for(project, annotator, pattern))
    items = []
    for n, gold in enumerate(pattern):
        item = claim_next(project, annotator)
        assert (item.unit.purpose == "gold") == gold
        answer(item, annotator, key=f"c{n}") if gold else _keep_all(item, annotator, f"c{n}")
        items.append(item)
    return items


def _my_work(project, user):
    return {r.pk: r.review for r in mywork.page(project, user)["rows"]}


def _review_the_verifiers_units(project, verifier, reviewer):
    """Review, oldest first, the real units ``verifier`` submitted (those the gold copies were made
    from, older than anything the annotator submitted)."""
    for n, state in enumerate(
        ReviewState.objects.filter(
            project=project, annotator=verifier, unit__purpose="real", state="submitted"
        ).order_by("submitted_at")
    ):
        review_unit(state.unit_id, reviewer, "accept", [], f"older-{n}")


def _settle_due() -> int:
    """Run the queued gold-settling jobs now, as the default worker does once each one's drawn delay
    has passed, after checking that delay lies in the configured range. Returns how many ran."""
    queued = list(Job.objects.filter(task="review.settle_gold", status="queued").order_by("id"))
    for job in queued:
        delay = (job.due_at - job.created_at).total_seconds()
        assert settings.GOLD_SETTLE_DELAY_MIN_S <= delay <= settings.GOLD_SETTLE_DELAY_MAX_S
        jobs._run(job.pk, tasks.settle)
    return len(queued)


def _states(annotator):
    return {s.unit_id: s.state for s in ReviewState.objects.filter(annotator=annotator)}


def test_a_gold_copy_is_accepted_when_the_review_queue_reaches_it(
    project, make_verified, make_unit, annotator, verifier, admin_user
):
    real, gold, real2, late_gold, _real3 = _claims(
        project, make_verified, annotator, make_unit, [False, True, False, True, False]
    )
    _review_the_verifiers_units(project, verifier, admin_user)
    assert _settle_due() == 1
    assert _states(annotator)[gold.unit_id] == "submitted"  # the person's first real unit waits before it
    review_unit(real.unit_id, verifier, "accept", [], "rv-1")
    # Not in the review's own moment: the copy flips a drawn while later, not together with the real unit.
    assert (_states(annotator)[real.unit_id], _states(annotator)[gold.unit_id]) == ("accepted", "submitted")
    assert _settle_due() == 1

    states = _states(annotator)
    assert states[real.unit_id] == states[gold.unit_id] == "accepted"
    assert states[real2.unit_id] == states[late_gold.unit_id] == "submitted"  # after the queue's head: waiting
    settled = Review.objects.get(unit_id=gold.unit_id)
    assert (settled.decision, settled.reviewer_id, settled.annotator_id, settled.round_id) == (
        "accept",
        verifier.pk,
        annotator.pk,
        None,
    )
    rows = _my_work(project, annotator)
    assert rows[gold.pk]["label"] == rows[real.pk]["label"] == "accepted"
    assert rows[gold.pk]["can_reopen"] is rows[real.pk]["can_reopen"] is False

    # The annotator's view of each unit's reviews has one shape: a handle for the review, no round.
    client = APIClient()
    client.force_authenticate(annotator)
    views = [client.get(f"/api/units/{uh(i.unit_id)}/review/").json() for i in (gold, real)]
    for view, item in zip(views, (gold, real)):
        [rev] = view["reviews"]
        assert rev["round"] is None and rev["decision"] == "accept" and rev["comments"] == []
        # The day only: the settling acceptance is written in the same moment as the real review.
        assert rev["at"].endswith("T00:00:00Z") or "T00:00:00" in rev["at"], rev["at"]
        assert handles.decode("review", rev["id"]) == Review.objects.get(unit_id=item.unit_id).pk
    assert views[0].keys() == views[1].keys() and views[0]["reviews"][0].keys() == views[1]["reviews"][0].keys()


def test_a_review_picked_out_of_order_settles_no_gold_copy_the_queue_has_not_reached(
    project, make_verified, make_unit, annotator, verifier, admin_user
):
    real, gold, real2 = _claims(project, make_verified, annotator, make_unit, [False, True, False])
    _review_the_verifiers_units(project, verifier, admin_user)
    review_unit(real2.unit_id, verifier, "accept", [], "by-hand")  # a later unit, picked by hand
    _settle_due()
    assert _states(annotator) == {real.unit_id: "submitted", gold.unit_id: "submitted", real2.unit_id: "accepted"}
    review_unit(real.unit_id, verifier, "accept", [], "head")  # the queue's head: nothing real waits now
    assert _settle_due() == 1
    assert _states(annotator) == {real.unit_id: "accepted", gold.unit_id: "accepted", real2.unit_id: "accepted"}


def test_a_review_of_the_persons_later_unit_settles_their_reached_copy_first(
    project, make_verified, make_unit, annotator, verifier, admin_user
):
    """The queue reached the person's gold copy (their real unit before it was reviewed), and their
    next real unit is reviewed before the drawn delay has passed: the copy is settled first, in that
    review, so the person's list never shows the older unit waiting behind a newer reviewed one
    (M1; seen before the fix: gold "submitted", real2 "accepted")."""
    real, gold, real2 = _claims(project, make_verified, annotator, make_unit, [False, True, False])
    _review_the_verifiers_units(project, verifier, admin_user)
    review_unit(real.unit_id, verifier, "accept", [], "head")
    assert _states(annotator)[gold.unit_id] == "submitted"  # reached; its job waits for the delay
    review_unit(real2.unit_id, verifier, "accept", [], "next")
    assert _states(annotator) == {real.unit_id: "accepted", gold.unit_id: "accepted", real2.unit_id: "accepted"}
    assert Review.objects.get(unit_id=gold.unit_id).reviewer_id == verifier.pk
    assert _settle_due() >= 1  # the jobs find nothing left to settle
    assert Review.objects.filter(unit_id=gold.unit_id).count() == 1


def test_a_reviewers_own_waiting_units_do_not_hold_back_the_gold_copies_they_settle(
    project, make_verified, make_unit, annotator, verifier
):
    real, gold, real2 = _claims(project, make_verified, annotator, make_unit, [False, True, False])
    # The verifier's own units (the gold sources) wait before everything, and they may not review them.
    assert ReviewState.objects.filter(annotator=verifier, state="submitted").exists()
    review_unit(real.unit_id, verifier, "accept", [], "head-for-them")
    assert _settle_due() == 1
    assert _states(annotator) == {real.unit_id: "accepted", gold.unit_id: "accepted", real2.unit_id: "submitted"}


def test_the_persons_own_rework_rate_counts_their_settled_gold_copies(
    project, make_verified, make_unit, annotator, verifier, admin_user
):
    from annotator.team import figures

    real, gold, real2 = _claims(project, make_verified, annotator, make_unit, [False, True, False])
    _review_the_verifiers_units(project, verifier, admin_user)
    pair = real.unit.qa_pairs.filter(status="verified").order_by("id").first()
    review_unit(real.unit_id, verifier, "reject", [Comment(pair.pk, "Wrong object.", ["wrong_answer"])], "rj")
    _settle_due()
    assert _states(annotator)[gold.unit_id] == "accepted"  # the queue went past it
    # Admins' figure: real units only (1 rejected of 1). The person's: as they saw their units
    # reviewed (1 rejected of 2), or their own count would not match it and would tell them gold was
    # among them.
    team = figures.compute(project, [annotator.pk], figures.Period(), ["rework_rate"])["rework_rate"]
    assert team[annotator.pk] == 1.0
    assert mywork.page(project, annotator)["own"]["figures"]["rework_rate"] == 0.5


def test_reviews_of_a_rounds_units_settle_gold_only_when_the_round_closes(
    project, make_verified, make_unit, annotator, verifier, admin_user
):
    real, gold, real2 = _claims(project, make_verified, annotator, make_unit, [False, True, False])
    round_ = open_round(project, all_units=True)
    states = list(ReviewState.objects.filter(round=round_).order_by("submitted_at"))
    for n, state in enumerate(states[:0:-1]):  # newest first, all but the oldest: the round stays open
        review_unit(state.unit_id, admin_user, "accept", [], f"round-{n}")
    assert _settle_due() == 0  # a round's own reviews queue no settling
    assert _states(annotator)[gold.unit_id] == "submitted"
    review_unit(states[0].unit_id, admin_user, "accept", [], "round-last")
    assert _states(annotator)[gold.unit_id] == "submitted"  # not in the close's own moment
    assert _settle_due() == 1
    assert _states(annotator)[gold.unit_id] == "accepted"


def test_a_reviewer_never_settles_their_own_gold_copy(project, make_verified, make_unit, annotator, verifier):
    _, gold, real = _claims(project, make_verified, annotator, make_unit, [False, True, False])
    # The annotator reviews someone else's unit (as a reviewer may): their own gold copy stays.
    someone = ReviewState.objects.filter(annotator=verifier).order_by("submitted_at").last()
    ReviewState.objects.filter(pk=someone.pk).update(
        submitted_at=ReviewState.objects.get(unit_id=real.unit_id).submitted_at
    )
    review_unit(someone.unit_id, annotator, "accept", [], "own")
    assert _settle_due() == 1
    assert ReviewState.objects.get(unit_id=gold.unit_id).state == "submitted"


def test_a_round_over_all_units_leaves_no_gold_copy_awaiting_review(
    project, make_verified, make_unit, annotator, verifier, admin_user
):
    real, gold = _claims(project, make_verified, annotator, make_unit, [False, True])
    round_ = open_round(project, all_units=True)
    assert round_.pool == ReviewState.objects.filter(unit__purpose="real", state="submitted").count()
    for n, state in enumerate(ReviewState.objects.filter(round=round_).order_by("unit_id")):
        review_unit(state.unit_id, admin_user, "accept", [], f"round-{n}")
    round_.refresh_from_db()
    assert round_.closed_at is not None
    assert _settle_due() == 1
    # The gold copy came after the person's last real unit: the round's close settles it.
    assert not ReviewState.objects.filter(project=project, state__in=ReviewState.AWAITING).exists()
    assert Review.objects.get(unit_id=gold.unit_id).reviewer_id == admin_user.pk
    assert round_.summary["reviewed"] == round_.summary["units"]  # gold reviews are not the round's


def test_a_round_deleted_after_its_close_still_settles_the_gold_copies_it_reached(
    project, make_verified, make_unit, annotator, verifier, admin_user
):
    """The settling job carries what the close fixed (``round_settling``), not the round's id: a
    round deleted while the job waited left its copies awaiting review for good (seen: the job
    settled 0 and the copy stayed "submitted")."""
    _real, gold = _claims(project, make_verified, annotator, make_unit, [False, True])
    round_ = open_round(project, all_units=True)
    for n, state in enumerate(ReviewState.objects.filter(round=round_).order_by("unit_id")):
        review_unit(state.unit_id, admin_user, "accept", [], f"round-{n}")
    round_.delete()
    assert _settle_due() == 1
    assert _states(annotator)[gold.unit_id] == "accepted"
    assert Review.objects.get(unit_id=gold.unit_id).reviewer_id == admin_user.pk


def test_a_gold_copy_the_double_check_draw_chose_answers_as_a_double_checked_unit(
    project, make_verified, make_unit, annotator, annotator2
):
    first, gold, real = _claims(
        project, make_verified, annotator, make_unit, [False, True, False], double_check_share=1.0
    )
    assert ReviewState.objects.get(unit_id=gold.unit_id).check_drawn is True
    assert not QueueItem.objects.filter(unit_id=gold.unit_id, kind="double_check").exists()  # never shared

    messages = []
    for item in (gold, real):
        with pytest.raises(Conflict) as refused:
            reopen_unit(item.unit_id, annotator)
        messages.append(str(refused.value))
    assert (
        messages[0]
        == messages[1]
        == ("a double-check of this unit is still open: it cannot be reopened until that is submitted")
    )
    rows = _my_work(project, annotator)
    assert rows[gold.pk]["can_reopen"] is rows[real.pk]["can_reopen"] is False
    assert rows[gold.pk]["label"] == rows[real.pk]["label"]

    services.set_policy(project, gold_rate=0.0)  # the checker draws no gold of their own
    check = claim_next(project, annotator2)
    # The unit left in the queue and the first real unit's double-check may come first (made before).
    checks = 1  # double-checks submitted, each settling in a job of its own
    for n in range(2):
        if check.kind == "double_check" and check.unit_id == real.unit_id:
            break
        assert check.kind == "first_pass" or check.unit_id == first.unit_id
        checks += check.kind == "double_check"
        _keep_all(check, annotator2, f"before-{n}")
        check = claim_next(project, annotator2)
    assert check.kind == "double_check" and check.unit_id == real.unit_id
    _keep_all(check, annotator2, "dc")
    assert _my_work(project, annotator)[gold.pk] is not None  # not in the double-check's own moment
    assert _settle_due() == checks
    rows = _my_work(project, annotator)
    assert rows[gold.pk] is None and rows[real.pk] is None  # both moved on, out of the person's list
    client = APIClient()
    client.force_authenticate(annotator)
    assert [client.get(f"/api/units/{uh(i.unit_id)}/review/").status_code for i in (gold, real)] == [404, 404]
    # Reopening either now gets the refusal a real unit's first annotator gets (the gold copy's state
    # went; a 409 "not submitted yet" would have marked it).
    answers = [client.post(f"/api/units/{uh(i.unit_id)}/reopen/") for i in (gold, real)]
    assert [r.status_code for r in answers] == [403, 403] and answers[0].json() == answers[1].json()


def test_gold_copies_submitted_before_they_were_put_in_review_are_backfilled(
    project, make_verified, make_unit, annotator
):
    import importlib

    from django.db import connection

    backfill = importlib.import_module("annotator.review.migrations.0003_gold_settled").BACKFILL
    _, gold = _claims(project, make_verified, annotator, make_unit, [False, True])
    ReviewState.objects.filter(unit_id=gold.unit_id).delete()
    with connection.cursor() as cursor:
        cursor.execute(backfill)
    state = ReviewState.objects.get(unit_id=gold.unit_id)
    assert (state.state, state.annotator, state.item_id, state.check_drawn) == ("submitted", annotator, gold.pk, False)
