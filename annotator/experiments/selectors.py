"""Reads for ordering experiments: the score table (humans beside models, per condition)."""

from __future__ import annotations

from collections import defaultdict

from annotator.experiments.models import Condition, Experiment, Prediction, Trial
from annotator.scoring.ordering import METRICS, mean_ci


def score_table(experiment: Experiment, *, include_excluded: bool = False) -> list[dict]:
    """For each condition and each respondent kind (``human``, or a model name), the mean of every
    metric with its 95% confidence interval and n (``scoring.ordering.mean_ci``), as EGO-FLIGHT's
    Table 1 reads. Humans are the scored, non-practice trials of participants not flagged for
    exclusion (all participants with ``include_excluded``). Rows are ordered by condition, then
    humans first, then models by name."""
    values: dict[tuple[int, str], dict[str, list]] = defaultdict(lambda: defaultdict(list))
    trials = Trial.objects.filter(participant__experiment=experiment, practice=False, scored_at__isnull=False)
    if not include_excluded:
        trials = trials.filter(participant__excluded=False)
    for row in trials.values("item__condition_id", *METRICS):
        for m in METRICS:
            values[(row["item__condition_id"], "human")][m].append(row[m])
    for row in Prediction.objects.filter(experiment=experiment, scored_at__isnull=False).values("item__condition_id", "model", *METRICS):
        for m in METRICS:
            values[(row["item__condition_id"], row["model"])][m].append(row[m])
    out = []
    for cond in Condition.objects.filter(experiment=experiment).order_by("number"):
        kinds = sorted({k for c, k in values if c == cond.pk}, key=lambda k: (k != "human", k))
        for kind in kinds:
            out.append({"condition": cond.variables(), "respondent": kind,
                        "metrics": {m: mean_ci(values[(cond.pk, kind)][m]) for m in METRICS}})
    return out


def unscored(experiment: Experiment) -> int:
    """Answered trials and predictions still waiting for the scoring worker."""
    return (Trial.objects.filter(participant__experiment=experiment, response__isnull=False, scored_at__isnull=True).count()
            + Prediction.objects.filter(experiment=experiment, scored_at__isnull=True).count())
