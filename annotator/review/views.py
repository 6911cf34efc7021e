"""The reviewer page (issue 20, section 3): the units awaiting review in order, one unit with its QA
pairs as submitted and what its last pass changed, and accept or reject with a comment and issue
tags per QA pair, all by keyboard. The page posts to the same API as scripts
(``POST /api/units/{id}/review/``). Admins and reviewers only (404 for non-members, 403 otherwise)."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse

from annotator import access
from annotator.exposure import ledger
from annotator.exposure.models import Exposure
from annotator.qa.models import QueueItem
from annotator.qa.queue import record_exposure
from annotator.qa.selectors import refuse_during_blind_pass
from annotator.review import selectors
from annotator.review.models import ReviewRound, ReviewState, RoundUnit
from annotator.review.services import MAX_COMMENT_TEXT, MAX_TAGS

QUEUE_SHOWN = 50  # units of the queue listed beside the unit under review


@login_required
def review_page(request, slug: str):
    """The first unit awaiting review (``?unit=N``: unit N, if it awaits review), the queue beside it,
    and the open quality round's progress."""
    project, _ = access.require(request.user, access.EDIT_QA_ROLES, slug=slug)
    # A unit the reviewer holds a blind overlap pass of stays closed to them until they submit it
    # (SPEC part 5): left out of their queue, refused when asked for.
    blind = QueueItem.objects.filter(
        project=project, kind=QueueItem.Kind.OVERLAP, status=QueueItem.Status.OPEN, leased_by=request.user
    ).values("unit_id")
    queue = selectors.review_queue(project).exclude(unit_id__in=blind)
    asked = request.GET.get("unit", "")
    current, note = None, ""
    if asked:
        if asked.isascii() and asked.isdigit() and len(asked) < 19:
            refuse_during_blind_pass(request.user, int(asked))
            current = queue.filter(unit_id=int(asked)).first()
        if current is None:
            state = (
                ReviewState.objects.filter(project=project, unit_id=int(asked)).first()
                if asked.isascii() and asked.isdigit() and len(asked) < 19
                else None
            )
            note = (
                f"Unit {asked} does not await review ({state.get_state_display()})."
                if state
                else f"Unit {asked} does not await review."
            )
    shown = list(queue[:QUEUE_SHOWN])
    if current is None and shown:
        current = shown[0]
    total = queue.count()
    open_round = ReviewRound.objects.filter(project=project, closed_at__isnull=True).first()
    round_progress = None
    if open_round is not None:
        units = RoundUnit.objects.filter(round=open_round)
        round_progress = {
            "round": open_round,
            "units": units.count(),
            "reviewed": units.filter(review__isnull=False).count(),
        }
    view = selectors.unit_for_review(current) if current is not None else None
    if current is not None:
        _record_reviewed(request.user, project, current)
    page_url = reverse("review-page", args=[project.slug])
    config = {"project": project.slug, "pageUrl": page_url, "maxText": MAX_COMMENT_TEXT, "maxTags": MAX_TAGS}
    if view is not None:
        config.update(
            {
                "unitId": current.unit_id,
                "annotator": view["annotator"],
                "reviewUrl": reverse("api-unit-review", args=[current.unit_id]),
                "tags": view["tags"],
                "freeTags": view["free_tags"],
            }
        )
    return render(
        request,
        "review/review.html",
        {
            "project": project,
            "view": view,
            "queue": shown,
            "total": total,
            "current": current,
            "note": note,
            "round_progress": round_progress,
            "config": config,
        },
    )


def _record_reviewed(user, project, state: ReviewState) -> None:
    """Put what the review page shows of the unit (its videos, its QA pairs with their answers) in
    the reviewer's exposure ledger, once per unit, as a verification queue's claim does
    (``qa.queue.record_exposure``): a gold copy of it is then never served to them (issue 20)."""
    person = ledger.person_key(user_id=user.pk)
    if not Exposure.objects.filter(
        person=person, project_id=project.pk, ref=f"unit:{state.unit_id}", source=Exposure.Source.REVIEW
    ).exists():
        # Source ``review``: the claim then keeps the unit's blind overlap pass from them (qa.queue).
        record_exposure(state.item, user.pk, source=Exposure.Source.REVIEW)
