"""The review app's per-annotator figure (issue 20, section 5): ``rework_rate``."""

from __future__ import annotations

from django.db.models import Count, Q

from annotator.qa.models import WorkUnit
from annotator.review.models import Review
from annotator.team import figures


@figures.register("rework_rate")
def rework_rate(project, user_ids: list[int], period: figures.Period) -> dict[int, float]:
    """Per person, the share of their reviewed units that a review rejected, over the reviews made
    in ``period`` (``[start, end)`` on the review's time): distinct units with a rejecting review /
    distinct units reviewed, from 0 to 1, rounded to 4 places. A unit rejected and then accepted
    after its rework counts as rejected. A person is the annotator of the reviewed pass; people with
    no unit reviewed in the period are left out. Real units only: a gold copy's acceptance is a
    stand-in (``services.settle_gold``), not a review. One query."""
    return rework_rate_over(project, user_ids, period, [WorkUnit.Purpose.REAL])


def rework_rate_over(project, user_ids: list[int], period: figures.Period, purposes: list[str]) -> dict[int, float]:
    """``rework_rate`` over units of ``purposes``: the person's own "My work" counts their settled
    gold copies as the reviews they look like (with real units only, their own count of accepted
    units would not match it, and would tell them gold was among them: issue 20, section 2)."""
    reviews = Review.objects.filter(project=project, annotator_id__in=user_ids, unit__purpose__in=purposes)
    if period.start is not None:
        reviews = reviews.filter(created_at__gte=period.start)
    if period.end is not None:
        reviews = reviews.filter(created_at__lt=period.end)
    rows = reviews.values("annotator_id").annotate(
        units=Count("unit", distinct=True),
        rejected=Count("unit", distinct=True, filter=Q(decision=Review.Decision.REJECT)),
    )
    return {r["annotator_id"]: round(r["rejected"] / r["units"], 4) for r in rows if r["units"]}
