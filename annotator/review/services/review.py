"""A reviewer's accept or reject with comments (``review_unit``), and the review state a submit
leaves (``note_submission``, the after-submit hook). Every review is recorded in the revision
history of the QA pairs it looked at (see the package's docstring)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotator.errors import Conflict, Forbidden, Invalid
from annotator.qa.models import QueueItem, Revision, WorkUnit
from annotator.qa.services import DECIDING_KINDS, double_check_drawn
from annotator.review.models import Review, ReviewComment, ReviewRound, ReviewState, RoundUnit
from annotator.review.services.common import (
    REVIEW_ACTION,
    Comment,
    ReviewResult,
    _input_errors,
    _open_rework,
    _refuse_unless_awaiting,
    reviewable_pairs,
    tag_errors,
)
from annotator.review.services.gold import CHECKED, REACHED, _oldest_waiting, settle_gold, settle_gold_later
from annotator.review.services.rounds import close_round

# ------------------------------------------------------------------------------- the submit hook


def note_submission(item: QueueItem, unit: WorkUnit, user, result) -> None:
    """``qa.services.after_submit`` hook: a submitted pass that decides a real unit's QA pairs (first
    pass, double-check, rework) puts the unit in review: ``submitted``, or ``resubmitted`` after a
    rework, with this pass as the one to review and its submitter as the unit's annotator. Runs in
    the submit's transaction."""
    # A gold copy is put in review as a real unit is (its annotator's "My work" must not tell it
    # apart, issue 20 section 2), but never reaches a reviewer (``awaiting_states``): it is settled
    # as the real units around it are (``settle_gold``).
    if item.kind not in DECIDING_KINDS or unit.purpose not in (WorkUnit.Purpose.REAL, WorkUnit.Purpose.GOLD):
        return
    state = ReviewState.objects.select_for_update().filter(unit_id=unit.pk).first()
    new = ReviewState.State.RESUBMITTED if item.kind == QueueItem.Kind.REWORK else ReviewState.State.SUBMITTED
    now = item.completed_at or timezone.now()
    if state is None:
        ReviewState.objects.create(
            unit_id=unit.pk,
            project_id=unit.project_id,
            state=new,
            item=item,
            annotator=user,
            submitted_at=now,
            check_drawn=unit.purpose == WorkUnit.Purpose.GOLD and double_check_drawn(item, unit),
        )
        return
    if item.kind == QueueItem.Kind.DOUBLE_CHECK and unit.purpose == WorkUnit.Purpose.REAL:
        settle_gold_later(unit.project_id, CHECKED, state.submitted_at.isoformat(), event=f"item-{item.pk}")
    state.state, state.item, state.annotator, state.rework_item, state.submitted_at = new, item, user, None, now
    state.save(update_fields=["state", "item", "annotator", "rework_item", "submitted_at", "updated_at"])


# ------------------------------------------------------------------------------------ the review


def review_unit(unit_id: int, reviewer, decision: str, comments: list[Comment], idempotency_key: str) -> ReviewResult:
    """Accept or reject the submitted unit ``unit_id`` as ``reviewer``, with comments per QA pair.

    Steps, in one transaction: check the input's shape and bounds (Invalid, per-field errors); if a
    review with ``idempotency_key`` exists, return its stored result (``replayed``) when it is the
    same reviewer and unit, else Conflict; lock the unit's review state and look for the key again
    (a request with the same key may have committed while this one waited: all of them get its
    result); refuse a unit not awaiting review or with a deciding pass open (Conflict), the
    reviewer's own work (Forbidden), comments on QA pairs the review does not look at
    (``reviewable_pairs``), tags outside the unit's open round's vocabulary, or a rejection without
    a comment (Invalid); then write the review, its comments and one ``review`` revision per QA pair
    looked at. A rejection opens a rework item assigned to the reviewed pass's annotator (priority
    ``REWORK_PRIORITY``: it comes back to them first, to nobody else). A unit of the project's open
    round answers it; the round's last review closes it (``close_round``).

    Raises WorkUnit.DoesNotExist for an unknown unit.
    """
    errors = _input_errors(decision, comments, idempotency_key)
    if errors:
        raise Invalid("the review has errors; nothing was saved", errors=errors)

    def replay() -> ReviewResult | None:
        previous = Review.objects.filter(idempotency_key=idempotency_key).first()
        if previous is None:
            return None
        if previous.reviewer_id != reviewer.pk or previous.unit_id != unit_id:
            raise Conflict("this idempotency key was used for another review")
        return ReviewResult(**{**previous.response, "replayed": True})

    with transaction.atomic():
        if (replayed := replay()) is not None:
            return replayed
        state = ReviewState.objects.select_for_update().filter(unit_id=unit_id).first()
        if (replayed := replay()) is not None:  # read committed: sees a same-key review committed meanwhile
            return replayed
        if state is None:
            WorkUnit.objects.get(pk=unit_id)  # DoesNotExist for an unknown unit
            raise Conflict("this unit has not been submitted yet: there is nothing to review")
        if state.annotator_id == reviewer.pk:
            raise Forbidden("you submitted this unit: someone else reviews it")
        if WorkUnit.objects.filter(pk=unit_id).exclude(purpose=WorkUnit.Purpose.REAL).exists():
            raise Conflict("this unit does not await review")  # a gold copy: never reviewed (issue 20)
        _refuse_unless_awaiting(state, "reviewed")
        pairs = {p.pk: p for p in reviewable_pairs(state).order_by("id")}
        membership = (
            RoundUnit.objects.select_related("round")
            .filter(unit_id=unit_id, review__isnull=True, round__closed_at__isnull=True)
            .first()
        )
        round_ = ReviewRound.objects.select_for_update().get(pk=membership.round_id) if membership else None
        for i, c in enumerate(comments):
            if c.qa_id not in pairs:
                errors[f"comments[{i}].qa_id"] = (
                    f"QA pair {c.qa_id} is not one this review looks at (the unit's "
                    "verified pairs and those its last pass deleted)"
                )
            if round_ is not None and round_.tags:
                tag_errors(c.tags, f"comments[{i}].tags", errors, round_.tags)
        if decision == Review.Decision.REJECT and not comments:
            errors["comments"] = "say what to change: a rejection needs at least one comment on a QA pair"
        if errors:
            raise Invalid("the review has errors; nothing was saved", errors=errors)

        if membership is None:
            # The person's gold copies the queue reached before this unit but whose settling job has
            # not run yet: settled now, before their later real unit is accepted or rejected, or their
            # list would show an older unit still waiting behind a newer reviewed one, which the
            # oldest-first queue does only for gold (the last security review of issue 20, M1).
            settle_gold(
                state.project_id,
                before=_oldest_waiting(state.project_id, reviewer),
                reviewer=reviewer,
                annotator_id=state.annotator_id,
            )
        now = timezone.now()
        review = Review(
            project_id=state.project_id,
            unit_id=unit_id,
            item_id=state.item_id,
            annotator_id=state.annotator_id,
            reviewer=reviewer,
            decision=decision,
            round=round_,
            idempotency_key=idempotency_key,
            response={},
        )
        try:
            with transaction.atomic():
                review.save()
        except IntegrityError:
            # The key was taken meanwhile by a review of another unit (the state lock keeps two reviews
            # of this pass apart): nothing was written.
            raise Conflict("this idempotency key was used for another review") from None
        rework = _open_rework(state) if decision == Review.Decision.REJECT else None
        new_state = ReviewState.State.REJECTED if rework else ReviewState.State.ACCEPTED
        by_pair = {c.qa_id: c for c in comments}
        ReviewComment.objects.bulk_create(
            [ReviewComment(review=review, qa_pair_id=c.qa_id, text=c.text.strip(), tags=list(c.tags)) for c in comments]
        )
        Revision.objects.bulk_create(
            [
                Revision(
                    qa_pair=p,
                    actor_user=reviewer,
                    action=REVIEW_ACTION,
                    before=p.snapshot(),
                    version=p.version,
                    after={
                        **p.snapshot(),
                        "review": {
                            "id": review.pk,
                            "decision": decision,
                            "round": round_.pk if round_ else None,
                            "comment": by_pair[p.pk].text.strip() if p.pk in by_pair else "",
                            "tags": list(by_pair[p.pk].tags) if p.pk in by_pair else [],
                        },
                    },
                )
                for p in pairs.values()
            ]
        )
        closed = False
        if membership is not None:
            RoundUnit.objects.filter(pk=membership.pk).update(review=review)
            if not RoundUnit.objects.filter(round=round_, review__isnull=True).exists():
                close_round(round_, now=now)
                closed = True
        state.state, state.review, state.rework_item, state.round = new_state, review, rework, None
        state.save(update_fields=["state", "review", "rework_item", "round", "updated_at"])
        if membership is None:  # a round's units settle gold when the round closes (``close_round``)
            settle_gold_later(state.project_id, REACHED, reviewer.pk, event=f"reviewer-{reviewer.pk}")
        result = ReviewResult(
            review.pk,
            unit_id,
            decision,
            new_state,
            rework.pk if rework else None,
            round_.pk if round_ else None,
            closed,
            len(comments),
        )
        review.response, review.rework_item = result.as_dict(), rework
        review.save(update_fields=["response", "rework_item"])
    return result
