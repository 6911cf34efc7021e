"""Reads of review with rework that pages, the API and commands share: the review queue, a unit as
its reviewer sees it, a unit's reviews as its annotator sees them, one's own units and round
summaries ("My work"), and the rework part of the unit payload."""

from __future__ import annotations

from django.db.models import Exists, F, OuterRef, Prefetch

from annotator.core import handles
from annotator.projects.models import Project
from annotator.qa.models import QueueItem, Revision, Verdict, WorkUnit
from annotator.qa.selectors import pairs_with_handles, unit_videos, with_labelled_videos, word_diff
from annotator.qa.services import DECIDING_KINDS, restorable_pairs, reworked_pass
from annotator.review.models import Review, ReviewComment, ReviewState, RoundSummary
from annotator.review.services import SUGGESTED_TAGS, awaiting_states, reviewable_pairs


def review_queue(project: Project):
    """The project's units awaiting review, in the order reviewers take them: the units of the open
    quality round first, then by submission time (oldest first), then unit id. ``ReviewState`` rows
    with their annotator, reviewed pass and round loaded."""
    return (
        awaiting_states(project)
        .select_related("annotator", "item", "round")
        .order_by(F("round_id").asc(nulls_last=True), "submitted_at", "unit_id")
    )


def queue_row(state: ReviewState) -> dict:
    """One unit of the review queue: ``{"unit_id", "state", "annotator", "pass_kind", "submitted_at",
    "round_id"}`` (times as datetimes)."""
    return {
        "unit_id": state.unit_id,
        "state": state.state,
        "annotator": state.annotator.username,
        "pass_kind": state.item.kind,
        "submitted_at": state.submitted_at,
        "round_id": state.round_id,
    }


def _pair_out(pair) -> dict:
    """A QA pair in the unit payload's shape (``qa.selectors.unit_payload``), with its status and
    delete reason."""
    return {
        "id": pair.pk,
        "qa_type": pair.qa_type.slug,
        "qa_type_name": pair.qa_type.name,
        "origin": pair.origin,
        "question": pair.question,
        "answer": pair.answer,
        "options": pair.options,
        "answer_index": pair.answer_index,
        "clip": {"start_s": pair.clip_start_s, "end_s": pair.clip_end_s},
        "version": pair.version,
        "flag": {"reason": pair.flag_reason, "source": pair.flag_source} if pair.flag_reason else None,
        "answer_kind": pair.qa_type.answer_kind,
        "answer_start_s": pair.answer_start_s,
        "answer_end_s": pair.answer_end_s,
        "videos": pair.videos or [],
        "status": pair.status,
        "delete_reason": pair.delete_reason,
    }


def rework_part(item: QueueItem, user) -> dict | None:
    """The ``review`` part of a rework unit's payload (None for any other pass, at no query cost)::

        {"reopened": bool, "decision": "reject" | None, "round": id | None, "reviewed_at": ISO 8601 | None,
         "comments": [{"qa_id", "text", "tags"}],
         "deleted_pairs": [QA pair as in qa_pairs, plus "status": "deleted" and "delete_reason"]}

    QA pairs and videos are named by their handles, as in the rest of the payload
    (``qa.selectors.with_handles``).

    ``comments`` are the reviewer's, by QA pair (none when the unit was reopened: by its annotator,
    ``services.reopen_unit``, or an admin, ``services.send_back``);
    ``deleted_pairs`` those the reworked pass deleted (``qa.services.restorable_pairs``): a decision
    on them is optional (keep restores one). Never the reviewer's name."""
    if item.kind != QueueItem.Kind.REWORK:
        return None
    review = Review.objects.filter(rework_item_id=item.pk).first()
    comments = list(review.comments.order_by("qa_pair_id")) if review else []
    deleted = [
        _pair_out(p)
        for p in restorable_pairs(item.unit_id, reworked_pass(item)).select_related("qa_type").order_by("id")
    ]
    with_labelled_videos(deleted)
    pairs_with_handles(deleted)
    return {
        "reopened": review is None,
        "decision": review.decision if review else None,
        "round": review.round_id if review else None,
        "reviewed_at": review.created_at.isoformat() if review else None,
        "comments": [{"qa_id": handles.encode("qa", c.qa_pair_id), "text": c.text, "tags": c.tags} for c in comments],
        "deleted_pairs": deleted,
    }


def _comments_by_pair(reviews) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for r in reviews:
        for c in r.comments.all():
            out.setdefault(c.qa_pair_id, []).append(
                {"review_id": r.pk, "decision": r.decision, "text": c.text, "tags": c.tags, "at": r.created_at}
            )
    return out


def unit_for_review(state: ReviewState) -> dict:
    """A unit awaiting review as its reviewer sees it: its videos (``qa.selectors.unit_videos``),
    who submitted which pass when, the round (and its tag vocabulary, else ``SUGGESTED_TAGS``, with
    ``free_tags`` saying whether others are allowed), and each QA pair the review looks at
    (``services.reviewable_pairs``) as submitted, with what the reviewed pass did to it (``action``:
    keep, modify, delete, add) and the word diffs of its question and answer by that pass
    (``changes``), plus the comments of earlier reviews on it. Earlier reviews of the unit too."""
    unit = WorkUnit.objects.select_related("video", "project").get(pk=state.unit_id)
    pairs = list(reviewable_pairs(state).select_related("qa_type").order_by("id"))
    actions = dict(Verdict.objects.filter(item_id=state.item_id, qa_pair__in=pairs).values_list("qa_pair_id", "action"))
    revisions = {r.qa_pair_id: r for r in Revision.objects.filter(submission__item_id=state.item_id, qa_pair__in=pairs)}
    earlier = list(
        Review.objects.filter(unit_id=unit.pk)
        .select_related("reviewer")
        .prefetch_related(Prefetch("comments", queryset=ReviewComment.objects.order_by("id")))
        .order_by("id")
    )
    comments = _comments_by_pair(earlier)
    out = []
    for p in pairs:
        changes = {}
        r = revisions.get(p.pk)
        if r is not None and r.before is not None:
            for key in ("question", "answer"):
                if (r.before.get(key) or "") != (r.after.get(key) or ""):
                    changes[key] = word_diff(r.before.get(key) or "", r.after.get(key) or "")
        out.append({**_pair_out(p), "action": actions.get(p.pk), "changes": changes, "earlier": comments.get(p.pk, [])})
    round_ = state.round
    return {
        "unit": unit,
        "state": state,
        "annotator": state.annotator.username,
        "pass_kind": state.item.get_kind_display(),
        "submitted_at": state.submitted_at,
        "videos": unit_videos(unit),
        "round": round_,
        "tags": list(round_.tags) if round_ is not None and round_.tags else list(SUGGESTED_TAGS),
        "free_tags": round_ is None or not round_.tags,
        "pairs": out,
        "earlier_reviews": [
            {
                "id": r.pk,
                "decision": r.decision,
                "reviewer": r.reviewer.username,
                "at": r.created_at,
                "round": r.round_id,
                "comments": r.comments.count(),
            }
            for r in earlier
        ],
    }


def can_reopen(state: ReviewState, user) -> bool:
    """Whether ``user`` may reopen the unit now (``services.reopen_unit`` would accept)."""
    return (
        state.annotator_id == user.pk
        and state.state in ReviewState.AWAITING
        and not state.check_drawn
        and not QueueItem.objects.filter(
            unit_id=state.unit_id, kind__in=DECIDING_KINDS, status=QueueItem.Status.OPEN
        ).exists()
    )


def unit_reviews(state: ReviewState, user, *, oversee: bool) -> dict:
    """A unit's review state and its reviews with their comments::

        {"unit_id", "state", "annotator", "submitted_at", "can_reopen",
         "reviews": [{"id", "decision", "round", "at", "comments": [{"qa_id", "text", "tags"}]}]}

    Someone who oversees the project (``oversee``) sees every review; anyone else only the reviews of
    their own passes. Reviewers are not named."""
    reviews = (
        Review.objects.filter(unit_id=state.unit_id)
        .prefetch_related(Prefetch("comments", queryset=ReviewComment.objects.order_by("id")))
        .order_by("id")
    )
    if not oversee:
        reviews = reviews.filter(annotator=user)
    return {
        "unit_id": state.unit_id,
        "state": state.state,
        "annotator": state.annotator.username,
        "submitted_at": state.submitted_at,
        "can_reopen": can_reopen(state, user),
        "reviews": [
            {
                "id": r.pk,
                "decision": r.decision,
                "round": r.round_id,
                "at": r.created_at,
                "comments": [{"qa_id": c.qa_pair_id, "text": c.text, "tags": c.tags} for c in r.comments.all()],
            }
            for r in reviews
        ],
    }


def states_of(user, project: Project):
    """``user``'s units of ``project`` in review (for "My work"), newest submission first: ``ReviewState``
    rows with ``open_pass`` annotated (a deciding pass is open: not reopenable) and the latest review
    with its comments prefetched (``state.review.comments.all()``)."""
    open_pass = QueueItem.objects.filter(
        unit_id=OuterRef("unit_id"), kind__in=DECIDING_KINDS, status=QueueItem.Status.OPEN
    )
    return (
        ReviewState.objects.filter(project=project, annotator=user)
        .select_related("review")
        .prefetch_related(Prefetch("review__comments", queryset=ReviewComment.objects.order_by("id")))
        .annotate(open_pass=Exists(open_pass))
        .order_by("-submitted_at", "-unit_id")
    )


def summaries_for(user, project: Project):
    """The round summaries ``user`` received in ``project``, newest round first (``RoundSummary``:
    ``summary``'s shape is in ``services.close_round``; ``read_at`` None while unread)."""
    return RoundSummary.objects.filter(user=user, round__project=project).select_related("round")
