"""Review with rework (issue 20, section 3), through the real queue, submit and review services on
PostgreSQL: a rejected unit comes back first to its annotator alone, with its comments; its rework
shows in the revision history; accept ends it; reopening one's own unit until it is reviewed."""

import pytest

from annotator.errors import Conflict, Forbidden, Invalid
from annotator.qa.models import QueueItem, Revision
from annotator.qa.queue import claim_next
from annotator.qa.selectors import history, unit_payload
from annotator.qa.services import Decision, skip_unit, submit_unit
from annotator.review import services
from annotator.review.models import Review, ReviewComment, ReviewState
from annotator.review.selectors import review_queue
from annotator.review.services import Comment, reopen_unit, review_unit
from tests.conftest import qh

pytestmark = pytest.mark.django_db


def _pairs(unit):
    return list(unit.qa_pairs.order_by("id"))


def test_a_submitted_unit_awaits_review_with_its_annotator_and_pass(make_unit, first_pass, annotator, project):
    make_unit()
    unit = first_pass(annotator)
    state = ReviewState.objects.get(unit=unit)
    assert (state.state, state.annotator, state.item.kind) == ("submitted", annotator, "first_pass")
    assert [s.unit_id for s in review_queue(project)] == [unit.pk]


def test_a_rejected_unit_comes_back_first_to_its_annotator_alone_with_its_comments(
    make_unit, first_pass, annotator, annotator2, admin_user, reviewer, project
):
    make_unit()
    make_unit()
    make_unit()
    unit = first_pass(annotator)  # the first unit; two more wait in the queue
    verified = unit.qa_pairs.filter(status="verified").order_by("id").first()
    deleted = unit.qa_pairs.get(status="deleted")
    result = review_unit(
        unit.pk,
        reviewer,
        "reject",
        [
            Comment(verified.pk, "The answer names the wrong object.", ["wrong_answer"]),
            Comment(deleted.pk, "This one was fine: keep it.", ["wrong_delete"]),
        ],
        "r-1",
    )
    rework = QueueItem.objects.get(unit=unit, kind="rework")
    assert (result.decision, result.state, result.rework_item_id, result.comments) == (
        "reject",
        "rejected",
        rework.pk,
        2,
    )
    assert (rework.assigned_to, rework.status, rework.priority) == (annotator, "open", services.REWORK_PRIORITY)

    # Nobody else is served it: the others get the next first passes.
    for other in (annotator2, admin_user):
        item = claim_next(project, other)
        assert (item.kind, item.unit_id) != ("rework", unit.pk) and item.kind == "first_pass"
    rework.refresh_from_db()
    assert rework.leased_by is None

    item = claim_next(project, annotator)  # first, before the open first pass left for them
    assert (item.pk, item.kind) == (rework.pk, "rework")
    payload = unit_payload(item, annotator)
    assert payload["queue"]["kind"] == "rework"
    assert [q["id"] for q in payload["qa_pairs"]] == [
        qh(p) for p in unit.qa_pairs.filter(status="verified").order_by("id")
    ]
    review = payload["review"]
    assert review["reopened"] is False and review["decision"] == "reject" and review["round"] is None
    assert review["comments"] == [
        {"qa_id": qh(verified), "text": "The answer names the wrong object.", "tags": ["wrong_answer"]},
        {"qa_id": qh(deleted), "text": "This one was fine: keep it.", "tags": ["wrong_delete"]},
    ]
    assert [(d["id"], d["status"], d["delete_reason"]) for d in review["deleted_pairs"]] == [
        (qh(deleted), "deleted", "vague")
    ]
    assert "reviewer" not in str(review) and "rev" not in {v for v in review.values() if isinstance(v, str)}

    # The rework: modify the commented pair, keep the rest, restore the deleted one.
    decisions = [
        Decision(p.pk, "modify", answer="a blue cup", version=p.version)
        if p.pk == verified.pk
        else Decision(p.pk, "keep", version=p.version)
        for p in unit.qa_pairs.filter(status="verified")
    ]
    decisions.append(Decision(deleted.pk, "keep", version=deleted.version))
    out = submit_unit(unit.pk, annotator, idempotency_key="rw-1", decisions=decisions, additions=[], time_spent_ms=None)
    assert (out.kind, out.counts["modified"], out.counts["kept"]) == ("rework", 1, len(decisions) - 1)
    deleted.refresh_from_db()
    assert (deleted.status, deleted.delete_reason, deleted.provenance) == ("verified", "", "machine_kept")
    assert ReviewState.objects.get(unit=unit).state == "resubmitted"
    assert [s.unit_id for s in review_queue(project)] == [unit.pk]

    # The story in the pairs' revision history: keep, the rejection with its comment, the rework's modify.
    revs = list(Revision.objects.filter(qa_pair=verified).order_by("id"))
    assert [(r.action, r.actor_user) for r in revs] == [
        ("draft", None),
        ("keep", annotator),
        ("review", reviewer),
        ("modify", annotator),
    ]
    assert revs[2].after["review"] == {
        "id": result.review_id,
        "decision": "reject",
        "round": None,
        "comment": "The answer names the wrong object.",
        "tags": ["wrong_answer"],
    }
    assert revs[2].version == revs[1].version and revs[3].submission.item.kind == "rework"
    assert revs[3].after["answer"] == "a blue cup"
    assert [r["action"] for r in history(verified)["revisions"]] == ["draft", "keep", "review", "modify"]
    assert history(verified)["revisions"][2]["reason"] == "reject: The answer names the wrong object. [wrong_answer]"
    assert revs[2].get_action_display() == "reviewed"
    assert [r.action for r in Revision.objects.filter(qa_pair=deleted).order_by("id")] == [
        "draft",
        "delete",
        "review",
        "keep",
    ]


def test_a_rework_may_leave_a_deleted_pair_deleted_and_refuses_no_decision_on_a_verified_one(
    make_unit, first_pass, annotator, reviewer, project
):
    make_unit()
    unit = first_pass(annotator)
    verified = unit.qa_pairs.filter(status="verified").order_by("id")
    deleted = unit.qa_pairs.get(status="deleted")
    review_unit(unit.pk, reviewer, "reject", [Comment(verified[0].pk, "Reword the question.")], "r-2")
    claim_next(project, annotator)
    with pytest.raises(Invalid) as refused:  # a verified pair with no decision
        submit_unit(
            unit.pk,
            annotator,
            idempotency_key="rw-2",
            additions=[],
            time_spent_ms=None,
            decisions=[Decision(p.pk, "keep") for p in verified[1:]],
        )
    assert refused.value.errors == {f"qa[{verified[0].pk}]": f"QA pair {verified[0].pk} has no decision"}
    before = deleted.version
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="rw-3",
        additions=[],
        time_spent_ms=None,
        decisions=[Decision(p.pk, "keep") for p in verified],
    )
    deleted.refresh_from_db()
    assert (deleted.status, deleted.delete_reason, deleted.version) == ("deleted", "vague", before)


def test_accept_ends_it(make_unit, first_pass, annotator, reviewer, project):
    make_unit()
    unit = first_pass(annotator)
    pair = unit.qa_pairs.filter(status="verified").first()
    result = review_unit(unit.pk, reviewer, "accept", [Comment(pair.pk, "", ["language"])], "a-1")
    assert (result.state, result.rework_item_id) == ("accepted", None)
    assert not QueueItem.objects.filter(unit=unit, kind="rework").exists()
    assert list(review_queue(project)) == []
    with pytest.raises(Conflict, match="reviewed already"):
        review_unit(unit.pk, reviewer, "reject", [Comment(pair.pk, "late")], "a-2")
    with pytest.raises(Conflict, match="reviewed already"):
        reopen_unit(unit.pk, annotator)
    assert Review.objects.filter(unit=unit).count() == 1 and ReviewState.objects.get(unit=unit).state == "accepted"
    assert claim_next(project, annotator) is None


def test_reopen_is_allowed_until_the_unit_is_reviewed_and_refused_after(
    make_unit, first_pass, annotator, annotator2, reviewer, project
):
    make_unit()
    unit = first_pass(annotator)
    with pytest.raises(Forbidden):
        reopen_unit(unit.pk, annotator2)  # not theirs
    state = reopen_unit(unit.pk, annotator)
    assert state.state == "reopened" and state.rework_item.assigned_to == annotator
    with pytest.raises(Conflict, match="reopened"):
        review_unit(unit.pk, reviewer, "accept", [], "ro-1")
    with pytest.raises(Conflict, match="reopened"):
        reopen_unit(unit.pk, annotator)  # twice
    item = claim_next(project, annotator)
    part = unit_payload(item, annotator)["review"]
    assert (part["reopened"], part["comments"], len(part["deleted_pairs"])) == (True, [], 1)
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="ro-2",
        additions=[],
        time_spent_ms=None,
        decisions=[Decision(p.pk, "keep") for p in unit.qa_pairs.filter(status="verified")],
    )
    assert ReviewState.objects.get(unit=unit).state == "resubmitted"
    reopen_unit(unit.pk, annotator)  # resubmitted, not reviewed yet: still allowed
    item = claim_next(project, annotator)
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="ro-3",
        additions=[],
        time_spent_ms=None,
        decisions=[Decision(p.pk, "keep") for p in unit.qa_pairs.filter(status="verified")],
    )
    review_unit(unit.pk, reviewer, "accept", [], "ro-4")
    items = QueueItem.objects.filter(unit=unit).count()
    with pytest.raises(Conflict, match="reviewed already"):
        reopen_unit(unit.pk, annotator)
    assert (
        QueueItem.objects.filter(unit=unit).count() == items and ReviewState.objects.get(unit=unit).state == "accepted"
    )


def test_a_rework_unit_cannot_be_skipped(make_unit, first_pass, annotator, reviewer, project):
    make_unit()
    unit = first_pass(annotator)
    review_unit(unit.pk, reviewer, "reject", [Comment(unit.qa_pairs.filter(status="verified").first().pk, "x")], "s-1")
    item = claim_next(project, annotator)
    with pytest.raises(Invalid, match="cannot be skipped"):
        skip_unit(unit.pk, annotator, "boring")
    item.refresh_from_db()
    assert item.leased_by == annotator and not item.skips.exists()


def test_a_reviewer_cannot_review_their_own_unit_nor_one_with_a_pass_open(
    make_unit, first_pass, annotator, admin_user, reviewer, project
):
    from annotator.qa.services import set_queue_policy

    make_unit()
    unit = first_pass(reviewer)  # reviewers annotate too
    with pytest.raises(Forbidden, match="someone else reviews it"):
        review_unit(unit.pk, reviewer, "accept", [], "o-1")
    set_queue_policy(project, double_check_share=1.0)
    make_unit()
    other = first_pass(annotator)  # a double-check of it is now open
    assert QueueItem.objects.filter(unit=other, kind="double_check", status="open").exists()
    with pytest.raises(Conflict, match="double-check of this unit is still open"):
        review_unit(other.pk, admin_user, "accept", [], "o-2")
    assert [s.unit_id for s in review_queue(project)] == [unit.pk]
    assert not Review.objects.exists()


def test_comments_must_be_on_the_pairs_the_review_looks_at_and_a_rejection_needs_one(
    make_unit, first_pass, annotator, reviewer, project
):
    make_unit()
    make_unit()
    unit = first_pass(annotator)
    foreign = first_pass(annotator).qa_pairs.first()
    pair = unit.qa_pairs.filter(status="verified").first()
    cases = [
        ("reject", [], {"comments": "say what to change: a rejection needs at least one comment on a QA pair"}),
        (
            "accept",
            [Comment(foreign.pk, "other unit")],
            {
                "comments[0].qa_id": (
                    f"QA pair {foreign.pk} is not one this review looks at (the unit's verified pairs and those its last pass "
                    "deleted)"
                )
            },
        ),
        (
            "accept",
            [Comment(pair.pk, "a"), Comment(pair.pk, "b")],
            {"comments[1].qa_id": f"QA pair {pair.pk} has two comments: write one"},
        ),
        ("accept", [Comment(pair.pk, "x" * 2001)], {"comments[0].text": "at most 2000 characters"}),
        (
            "accept",
            [Comment(pair.pk, "", [])],
            {"comments[0]": "write a comment or choose a tag (or leave this QA pair out)"},
        ),
        ("accept", [Comment(pair.pk, "t", ["Bad Tag"])], {"comments[0].tags[0]": services.TAG_RULE}),
        ("accept", [Comment(pair.pk, "t", [f"t{i}" for i in range(9)])], {"comments[0].tags": "at most 8 tags"}),
        ("maybe", [], {"decision": "decision must be accept or reject"}),
    ]
    for decision, comments, errors in cases:
        with pytest.raises(Invalid) as refused:
            review_unit(unit.pk, reviewer, decision, comments, "bad")
        assert refused.value.errors == errors, decision
    assert not Review.objects.exists() and not ReviewComment.objects.exists()
    assert not Revision.objects.filter(action="review").exists()
    assert ReviewState.objects.get(unit=unit).state == "submitted"


def test_a_key_used_for_another_review_is_refused(make_unit, first_pass, annotator, reviewer, admin_user):
    make_unit()
    make_unit()
    one, two = first_pass(annotator), first_pass(annotator)
    first = review_unit(one.pk, reviewer, "accept", [], "k-1")
    assert review_unit(one.pk, reviewer, "accept", [], "k-1").as_dict() == {**first.as_dict(), "replayed": True}
    with pytest.raises(Conflict, match="used for another review"):
        review_unit(two.pk, reviewer, "accept", [], "k-1")
    with pytest.raises(Conflict, match="used for another review"):
        review_unit(one.pk, admin_user, "accept", [], "k-1")
    assert ReviewState.objects.get(unit=two).state == "submitted"


def test_rework_rate_is_the_share_of_a_persons_reviewed_units_rejected_in_the_period(
    make_unit, first_pass, annotator, annotator2, reviewer, project
):
    from datetime import timedelta

    from django.utils import timezone

    from annotator.team.figures import REGISTRY, Period

    for _ in range(3):
        make_unit()
    a1, a2, b1 = first_pass(annotator), first_pass(annotator), first_pass(annotator2)
    review_unit(a1.pk, reviewer, "reject", [Comment(a1.qa_pairs.filter(status="verified").first().pk, "fix")], "rr-1")
    review_unit(a2.pk, reviewer, "accept", [], "rr-2")
    review_unit(b1.pk, reviewer, "accept", [], "rr-3")
    claim_next(project, annotator)
    submit_unit(
        a1.pk,
        annotator,
        idempotency_key="rr-4",
        additions=[],
        time_spent_ms=None,
        decisions=[Decision(p.pk, "keep") for p in a1.qa_pairs.filter(status="verified")],
    )
    review_unit(a1.pk, reviewer, "accept", [], "rr-5")  # rejected, then accepted: still counts as rejected
    now = timezone.now()
    rate = REGISTRY["rework_rate"]
    assert rate(project, [annotator.pk, annotator2.pk, reviewer.pk], Period()) == {
        annotator.pk: 0.5,
        annotator2.pk: 0.0,
    }
    assert rate(project, [annotator.pk], Period(end=now - timedelta(hours=1))) == {}
    assert rate(project, [annotator.pk], Period(start=now - timedelta(hours=1), end=now + timedelta(hours=1))) == {
        annotator.pk: 0.5
    }


def test_a_payload_of_any_other_pass_has_no_review_part(make_unit, annotator, project):
    make_unit()
    item = claim_next(project, annotator)
    assert "review" not in unit_payload(item, annotator)


def test_units_submitted_before_review_existed_are_backfilled_by_the_migration(make_unit, first_pass, annotator):
    import importlib

    from django.db import connection

    backfill = importlib.import_module("annotator.review.migrations.0002_backfill_states").BACKFILL
    make_unit()
    unit = first_pass(annotator)
    ReviewState.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute(backfill)
    state = ReviewState.objects.get(unit=unit)
    assert (state.state, state.annotator, state.item.kind) == ("submitted", annotator, "first_pass")
    assert ReviewState.objects.count() == 1


def test_an_admin_sends_back_an_accepted_unit_through_the_state_lock(
    make_unit, first_pass, annotator, annotator2, reviewer, project
):
    make_unit()
    unit = first_pass(annotator)
    review_unit(unit.pk, reviewer, "accept", [], "sb-1")
    item = services.send_back(unit.pk, annotator2)
    assert (item.kind, item.assigned_to, item.status) == ("rework", annotator2, "open")
    assert ReviewState.objects.get(unit=unit).state == "reopened"
    with pytest.raises(Conflict, match="rework of this unit is open already"):
        services.send_back(unit.pk, annotator)
    with pytest.raises(Conflict, match="reopened"):
        review_unit(unit.pk, reviewer, "accept", [], "sb-2")
    claimed = claim_next(project, annotator2)
    assert claimed.pk == item.pk and unit_payload(claimed, annotator2)["review"]["reopened"] is True
    submit_unit(
        unit.pk,
        annotator2,
        idempotency_key="sb-3",
        additions=[],
        time_spent_ms=None,
        decisions=[Decision(p.pk, "keep") for p in unit.qa_pairs.filter(status="verified")],
    )
    state = ReviewState.objects.get(unit=unit)
    assert (state.state, state.annotator) == ("resubmitted", annotator2)


def test_a_deleted_pair_a_rework_left_deleted_stays_open_to_the_next_review_and_rework(
    make_unit, first_pass, annotator, reviewer, project
):
    make_unit()
    unit = first_pass(annotator)
    deleted = unit.qa_pairs.get(status="deleted")
    verified = list(unit.qa_pairs.filter(status="verified").order_by("id"))
    review_unit(unit.pk, reviewer, "reject", [Comment(verified[0].pk, "Reword it.")], "ch-1")
    claim_next(project, annotator)
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="ch-2",
        additions=[],
        time_spent_ms=None,  # leaves it deleted
        decisions=[Decision(p.pk, "keep") for p in verified],
    )
    review_unit(
        unit.pk, reviewer, "reject", [Comment(deleted.pk, "Keep this one after all.", ["wrong_delete"])], "ch-3"
    )
    item = claim_next(project, annotator)
    assert [d["id"] for d in unit_payload(item, annotator)["review"]["deleted_pairs"]] == [qh(deleted)]
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="ch-4",
        additions=[],
        time_spent_ms=None,
        decisions=[Decision(p.pk, "keep") for p in verified] + [Decision(deleted.pk, "keep")],
    )
    deleted.refresh_from_db()
    assert deleted.status == "verified"
