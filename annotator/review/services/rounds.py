"""Quality rounds (EgoNight's second round): open one over a sample or all units, close it with a
summary of its issue tags per annotator, and mark a summary read."""

from __future__ import annotations

import random
from collections import Counter

from django.db import transaction
from django.utils import timezone

from annotator.errors import Conflict, Invalid
from annotator.projects.models import Membership, Project, Role
from annotator.review.models import Review, ReviewRound, ReviewState, RoundSummary, RoundUnit
from annotator.review.services.common import EXAMPLES_PER_TAG, MAX_ROUND_TAGS, MAX_SAMPLE, awaiting_states, tag_errors
from annotator.review.services.gold import ROUND_CLOSED, round_settling, settle_gold_later

# ---------------------------------------------------------------------------------------- rounds


def open_round(
    project: Project, *, sample: int | None = None, all_units: bool = False, tags=(), seed: int = 0, opened_by=None
) -> ReviewRound:
    """Open a quality round over the project's units awaiting review (``awaiting_states``): a sample
    of ``sample`` of them drawn with ``random.Random(seed)`` from their ids in order (reproducible),
    or all of them (``all_units``), reviewed with the issue-tag vocabulary ``tags`` (empty: any tag).
    The round's units come first in the review queue. Returns the round.

    Raises Invalid (neither or both of sample and all, a sample outside 1..``MAX_SAMPLE``, bad tags)
    and Conflict (a round of the project is still open; no unit awaits review)."""
    errors: dict[str, str] = {}
    if (sample is None) == (not all_units):
        errors["sample"] = "give a sample size or all, not both"
    elif sample is not None and (
        not isinstance(sample, int) or isinstance(sample, bool) or not 1 <= sample <= MAX_SAMPLE
    ):
        errors["sample"] = f"a sample is from 1 to {MAX_SAMPLE:,} units"
    tags = list(tags)
    tag_errors(tags, "tags", errors, limit=MAX_ROUND_TAGS)
    if errors:
        raise Invalid("the round has errors; nothing was opened", errors=errors)
    with transaction.atomic():
        # One round opening at a time per project. NO KEY: a review's insert checks its foreign key to
        # the project (FOR KEY SHARE), which FOR UPDATE would block while holding its unit's state.
        Project.objects.select_for_update(no_key=True).get(pk=project.pk)
        current = ReviewRound.objects.filter(project=project, closed_at__isnull=True).first()
        if current is not None:
            done = RoundUnit.objects.filter(round=current, review__isnull=False).count()
            total = RoundUnit.objects.filter(round=current).count()
            raise Conflict(
                f"round {current.pk} of this project is still open ({done} of {total} units reviewed); close it first"
            )
        ids = list(
            awaiting_states(project).filter(round__isnull=True).order_by("unit_id").values_list("unit_id", flat=True)
        )
        if not ids:
            raise Conflict("no unit of this project awaits review: there is nothing to put in a round")
        chosen = sorted(random.Random(seed).sample(ids, min(sample, len(ids)))) if sample is not None else ids
        round_ = ReviewRound.objects.create(
            project=project, opened_by=opened_by, sample_size=sample, seed=seed, tags=tags, pool=len(ids)
        )
        RoundUnit.objects.bulk_create([RoundUnit(round=round_, unit_id=u) for u in chosen])
        ReviewState.objects.filter(unit_id__in=chosen).update(round=round_)
    return round_


def close_round(round_: ReviewRound, *, now=None) -> ReviewRound:
    """Close ``round_`` (called by the review that answers its last unit, or by an admin early, with
    the reviews so far) and write its summaries. Must run in the caller's transaction with the round
    row locked (``review_unit`` holds it; ``close_round_now`` takes it).

    ``summary`` (for reviewers and admins)::

        {"round", "closed_at", "units", "reviewed", "accepted", "rejected",
         "tags": [{"tag", "count", "units", "examples": [{"unit_id", "qa_id", "text"}]}]}

    ``tags`` by count, most first (then by tag); ``count`` counts comments, ``units`` distinct
    units; up to ``EXAMPLES_PER_TAG`` examples each. Each of the project's annotators, and each
    person whose pass the round reviewed, gets a ``RoundSummary``::

        {"round", "closed_at", "units", "reviewed", "accepted", "rejected",
         "tags": [{"tag", "count", "yours", "examples": [...]}], "yours": {"reviewed", "accepted",
         "rejected", "rework_units": [unit ids]}}

    with the same counts, how many of each tag's comments were on their units (``yours``) and
    examples from their own units only. Rejected units went back for rework when they were
    rejected."""
    now = now or timezone.now()
    reviews = list(Review.objects.filter(round=round_).prefetch_related("comments").order_by("id"))
    units = RoundUnit.objects.filter(round=round_).count()
    counts: Counter = Counter()
    tag_units: dict[str, set[int]] = {}
    mine: dict[int, Counter] = {}
    examples: dict[str, list[dict]] = {}
    own_examples: dict[tuple[int, str], list[dict]] = {}
    for review in reviews:
        mine.setdefault(review.annotator_id, Counter())
        for c in review.comments.all():
            for tag in c.tags:
                counts[tag] += 1
                mine[review.annotator_id][tag] += 1
                tag_units.setdefault(tag, set()).add(review.unit_id)
                example = {"unit_id": review.unit_id, "qa_id": c.qa_pair_id, "text": c.text}
                if c.text and len(examples.setdefault(tag, [])) < EXAMPLES_PER_TAG:
                    examples[tag].append(example)
                own = own_examples.setdefault((review.annotator_id, tag), [])
                if c.text and len(own) < EXAMPLES_PER_TAG:
                    own.append(example)
    order = sorted(counts, key=lambda t: (-counts[t], t))
    head = {
        "round": round_.pk,
        "closed_at": now.isoformat(),
        "units": units,
        "reviewed": len(reviews),
        "accepted": sum(r.decision == Review.Decision.ACCEPT for r in reviews),
        "rejected": sum(r.decision == Review.Decision.REJECT for r in reviews),
    }
    round_.summary = {
        **head,
        "tags": [
            {"tag": t, "count": counts[t], "units": len(tag_units[t]), "examples": examples.get(t, [])} for t in order
        ],
    }
    round_.closed_at = now
    round_.save(update_fields=["summary", "closed_at"])
    # Units of the round left without a review (closed early) leave its place at the head of the queue.
    ReviewState.objects.filter(round=round_).update(round=None)
    people = set(
        Membership.objects.filter(project_id=round_.project_id, role=Role.ANNOTATOR).values_list("user_id", flat=True)
    ) | set(mine)
    summaries = []
    for person in sorted(people):
        theirs = [r for r in reviews if r.annotator_id == person]
        summaries.append(
            RoundSummary(
                round=round_,
                user_id=person,
                summary={
                    **head,
                    "tags": [
                        {
                            "tag": t,
                            "count": counts[t],
                            "yours": mine.get(person, Counter())[t],
                            "examples": own_examples.get((person, t), []),
                        }
                        for t in order
                    ],
                    "yours": {
                        "reviewed": len(theirs),
                        "accepted": sum(r.decision == Review.Decision.ACCEPT for r in theirs),
                        "rejected": sum(r.decision == Review.Decision.REJECT for r in theirs),
                        "rework_units": [r.unit_id for r in theirs if r.decision == Review.Decision.REJECT],
                    },
                },
            )
        )
    RoundSummary.objects.bulk_create(summaries, ignore_conflicts=True)
    if reviews:
        # The gold copies that were waiting when the round opened are settled in the share of the
        # round's pool its reviews answered: all of them after a round over all units.
        settle_gold_later(round_.project_id, ROUND_CLOSED, round_settling(round_, reviews), event=f"round-{round_.pk}")
    return round_


def close_round_now(round_id: int) -> ReviewRound:
    """Close an open round before all its units are reviewed (an admin's decision), summarising the
    reviews so far. Raises ReviewRound.DoesNotExist, Conflict (already closed)."""
    with transaction.atomic():
        # The round's units' states first, then the round: the order a review of one of them takes
        # them (``review_unit``), or a review and this close would each hold what the other waits for.
        list(
            ReviewState.objects.select_for_update()
            .filter(round_id=round_id)
            .order_by("unit_id")
            .values_list("pk", flat=True)
        )
        round_ = ReviewRound.objects.select_for_update().get(pk=round_id)
        if round_.closed_at is not None:
            raise Conflict(f"round {round_id} was closed at {round_.closed_at:%Y-%m-%d %H:%M}")
        return close_round(round_)


def mark_summary_read(summary_id: int, user) -> RoundSummary:
    """Mark one of ``user``'s round summaries read (the first time). Raises RoundSummary.DoesNotExist
    for a summary that is not theirs."""
    summary = RoundSummary.objects.get(pk=summary_id, user=user)
    if summary.read_at is None:
        summary.read_at = timezone.now()
        summary.save(update_fields=["read_at"])
    return summary
