"""The per-annotator figure ``gold_accuracy`` (issue 20, section 5), registered in
``annotator.team.figures``: agreement with the known decisions on gold copies submitted in the
period, pooled over decisions, with its 95% Wilson interval (``rules.accuracy``)."""

from __future__ import annotations

from django.db.models import Sum

from annotator.gold import rules
from annotator.gold.models import Result, Source
from annotator.team import figures


@figures.register("gold_accuracy")
def gold_accuracy(project, user_ids: list[int], period: figures.Period) -> dict[int, dict]:
    """``{user_id: {"value": agreed / decided, "ci": [lo, hi], "n": decided}}`` over the gold results
    of ``user_ids`` in ``project`` created in ``period`` (qualification attempts not counted); people
    with no gold result in the period are left out. One query."""
    rows = Result.objects.filter(project=project, user_id__in=user_ids, role=Source.Role.GOLD)
    if period.start is not None:
        rows = rows.filter(created_at__gte=period.start)
    if period.end is not None:
        rows = rows.filter(created_at__lt=period.end)
    return {
        row["user_id"]: rules.accuracy(row["agreed"], row["decisions"])
        for row in rows.values("user_id").annotate(agreed=Sum("agreed"), decisions=Sum("decisions"))
        if row["decisions"]
    }
