"""Gold copies settled as the real units around them are (issue 20): never reviewed, accepted a
drawn while after the review, double-check or round's close that reached them."""

from __future__ import annotations

import random
import uuid
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from annotator import jobs
from annotator.qa.models import Revision, WorkUnit
from annotator.review.models import Review, ReviewRound, ReviewState, RoundUnit
from annotator.review.services.common import REVIEW_ACTION, ReviewResult, awaiting_states, reviewable_pairs

# ---------------------------------------------------------------------------------- gold copies

REACHED, CHECKED, ROUND, ROUND_CLOSED = "reached", "checked", "round", "round-closed"


def round_settling(round_: ReviewRound, reviews: list[Review]) -> dict:
    """What the close of ``round_`` settles, fixed when it closes so the job needs nothing of the
    round later (a round deleted meanwhile left its copies waiting): the copies submitted at or
    before it opened (``upto``, ISO 8601), accepted by the reviewer of its last review
    (``reviewer``: a reviewer with reviews cannot be deleted, ``Review.reviewer`` protects them),
    in the share of its pool its ``reviews`` answered (0 to 1), drawn with its ``seed``."""
    units = RoundUnit.objects.filter(round=round_).count()
    last = max(reviews, key=lambda r: r.pk)
    return {
        "upto": round_.opened_at.isoformat(),
        "reviewer": last.reviewer_id,
        "seed": round_.seed,
        "share": min(1.0, len(reviews) / (round_.pool or units or 1)),
    }


def settle_gold_later(project_id: int, how: str, ref: int | str | dict, *, event: str) -> int | None:
    """Queue the settling of the gold copies an event reached, a delay drawn uniformly from
    [``GOLD_SETTLE_DELAY_MIN_S``, ``GOLD_SETTLE_DELAY_MAX_S``] seconds later (the job
    ``review.settle_gold``, on commit of the caller's transaction). Settled in the same transaction,
    a copy flipped together with the real unit whose review reached it, which its annotator could
    see by polling both (the last security review of issue 20, M1).

    ``how`` and ``ref``: ``REACHED`` and the reviewer's id (a review outside a round: the bound is
    read when the job runs, so reviews meanwhile move it on), ``CHECKED`` and the real unit's
    submission time as ISO 8601 (a double-check), ``ROUND_CLOSED`` and ``round_settling``'s dict
    (a round's close; ``ROUND`` and the round's id in jobs queued before it).
    ``event`` names the job with the project: while one of a name waits, another is not queued (its
    run reads the bound then, so it settles what both reached). Returns the job id, or None."""
    delay = random.SystemRandom().uniform(settings.GOLD_SETTLE_DELAY_MIN_S, settings.GOLD_SETTLE_DELAY_MAX_S)
    return jobs.enqueue(
        "review.settle_gold", project_id, how, ref, key=f"review.settle_gold:{project_id}:{event}", countdown_s=delay
    )


def settle_reached(project_id: int, how: str, ref: int | str | dict) -> int:
    """Settle now, in one transaction, the gold copies of project ``project_id`` that the event
    (``how``, ``ref``; see ``settle_gold_later``) reached. Returns how many were settled; 0 when
    the reviewer or round is gone. Raises ValueError for an unknown ``how``."""
    with transaction.atomic():
        if how == REACHED:
            reviewer = get_user_model().objects.filter(pk=ref).first()
            if reviewer is None:
                return 0
            return settle_gold(project_id, before=_oldest_waiting(project_id, reviewer), reviewer=reviewer)
        if how == CHECKED:
            return settle_gold(project_id, upto=datetime.fromisoformat(str(ref)), checked=True)
        if how == ROUND_CLOSED:
            reviewer = get_user_model().objects.get(pk=ref["reviewer"])
            return settle_gold(
                project_id,
                upto=datetime.fromisoformat(ref["upto"]),
                reviewer=reviewer,
                share=float(ref["share"]),
                seed=int(ref["seed"]),
            )
        if how == ROUND:  # jobs queued before ROUND_CLOSED: read the round when they run
            round_ = ReviewRound.objects.filter(pk=ref, closed_at__isnull=False).first()
            last = Review.objects.filter(round_id=ref).select_related("reviewer").order_by("-id").first()
            if round_ is None or last is None:
                return 0
            reviewed = Review.objects.filter(round_id=ref).count()
            units = RoundUnit.objects.filter(round_id=ref).count()
            return settle_gold(
                project_id,
                upto=round_.opened_at,
                reviewer=last.reviewer,
                share=min(1.0, reviewed / (round_.pool or units or 1)),
                seed=round_.seed,
            )
        raise ValueError(f"unknown way to reach gold copies: {how!r}")


def _oldest_waiting(project_id: int, reviewer):
    """When the oldest real unit still waiting in the project's review queue that ``reviewer`` may
    review (not their own) was submitted (a datetime), or None: the oldest-first queue has not gone
    past it, whatever unit they picked by hand. Units of an open round count too: the gold copies
    of their time are the round's to settle when it closes. One query, on the ``review_awaiting``
    index."""
    return (
        awaiting_states(project_id)
        .exclude(annotator_id=reviewer.pk)
        .order_by("submitted_at")
        .values_list("submitted_at", flat=True)
        .first()
    )


def settle_gold(
    project_id: int,
    *,
    upto=None,
    before=None,
    reviewer=None,
    checked: bool = False,
    share: float = 1.0,
    seed: int = 0,
    annotator_id: int | None = None,
) -> int:
    """Settle the gold copies of project ``project_id`` submitted at or before ``upto`` and strictly
    before ``before`` (datetimes; None: no bound) as the real units around them are settled, so that
    their annotators cannot tell them apart by what becomes of them (issue 20, section 2: gold
    copies are never reviewed). Runs in the caller's transaction; rows another transaction holds
    are left for a later settling (skip locked).

    A review outside a round gives ``before``: the oldest real unit still waiting that the reviewer
    may review (``_oldest_waiting``). The review queue runs oldest first, so the gold copies before
    it are those a reviewer would have reached; one who picked a later unit by hand has not reached
    the copies after the oldest waiting unit. With no real unit waiting, every copy is reached.

    - ``checked`` (a real unit's double-check was submitted; the double-check queue runs oldest
      first): the states of the copies the double-check draw chose (``check_drawn``) go away, as a
      double-checked real unit's state moves to its checker and leaves its first annotator's list.
    - otherwise (a reviewer's review, or a closing round; reviews run oldest first): each waiting
      copy not drawn for a double-check is accepted by ``reviewer`` (never their own), with a
      ``Review`` and its revisions as a real acceptance has, no comment, outside any round (gold
      reviews never enter a round's counts); ``share`` (0 to 1) of them, drawn per unit by
      ``random.Random`` seeded with ``seed`` and the unit (a sampled round).

    ``annotator_id``: that person's copies only (a review of their later real unit settles the
    copies the queue reached before it: ``review_unit``).

    Returns how many copies were settled."""
    states = (
        ReviewState.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(
            project_id=project_id,
            unit__purpose=WorkUnit.Purpose.GOLD,
            state__in=ReviewState.AWAITING,
            check_drawn=checked,
        )
        .order_by("submitted_at", "unit_id")
    )
    if upto is not None:
        states = states.filter(submitted_at__lte=upto)
    if before is not None:
        states = states.filter(submitted_at__lt=before)
    if annotator_id is not None:
        states = states.filter(annotator_id=annotator_id)
    if checked:
        return ReviewState.objects.filter(pk__in=[s.pk for s in states]).delete()[0]
    settled = 0
    for state in states.exclude(annotator_id=reviewer.pk):
        if share < 1.0 and random.Random(f"{seed}:gold:{state.unit_id}").random() >= share:
            continue
        review = Review.objects.create(
            project_id=project_id,
            unit_id=state.unit_id,
            item_id=state.item_id,
            annotator_id=state.annotator_id,
            reviewer=reviewer,
            decision=Review.Decision.ACCEPT,
            idempotency_key=f"gold:{uuid.uuid4()}",
            response={},
        )
        review.response = ReviewResult(
            review.pk, state.unit_id, Review.Decision.ACCEPT, ReviewState.State.ACCEPTED, None, None, False, 0
        ).as_dict()
        review.save(update_fields=["response"])
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
                            "decision": Review.Decision.ACCEPT,
                            "round": None,
                            "comment": "",
                            "tags": [],
                        },
                    },
                )
                for p in reviewable_pairs(state).order_by("id")
            ]
        )
        state.state, state.review, state.round = ReviewState.State.ACCEPTED, review, None
        state.save(update_fields=["state", "review", "round", "updated_at"])
        settled += 1
    return settled
