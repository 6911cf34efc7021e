"""The ``ratings:<name>`` scopes: a rating set (external ratings, or a model judge against human
re-judges); its raters are the names it came with."""

from __future__ import annotations

from django.db.models import Count, Max

from annotator.agreement.models import Rating, RatingSet
from annotator.agreement.scopes.base import Dataset, ScopeKind, register
from annotator.projects.models import Project

JUDGE_METRICS = ("percent_agreement", "cohen_kappa")


def _discover(project: Project) -> dict[str, dict]:
    return {
        f"ratings:{rs.name}": {"n": rs.n, "last": rs.last, "level": rs.level, "source": rs.source}
        for rs in RatingSet.objects.filter(project=project).annotate(n=Count("ratings"), last=Max("ratings__id"))
    }


def _ratings(rs: RatingSet) -> list[Dataset]:
    triples = [
        (item, rater, value)
        for item, rater, value in Rating.objects.filter(rating_set=rs)
        .values_list("item", "rater", "value")
        .order_by("id")
    ]
    metrics = JUDGE_METRICS if rs.source == RatingSet.Source.JUDGE else None
    return [Dataset("", "ratings", (rs.level,), triples, metrics=metrics)]


register(
    ScopeKind(
        "ratings",
        named=True,
        discover=_discover,
        exists=lambda project, name: RatingSet.objects.filter(project=project, name=name).exists(),
        datasets=lambda project, name: _ratings(RatingSet.objects.get(project=project, name=name)),
        position=30,
    )
)
