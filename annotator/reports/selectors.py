"""The benchmark report of a project (issue 18, part 5): the read the command, the API and the page share.

``build`` reads the chosen studies' and evaluations' answers (``records.read``), splits them by the
``by`` fields (or a preset's tables) and computes, per split cell, each column's metric with its 95%
interval and n, and the paired human-minus-model comparison (``annotator.scoring.report``)::

    {"metric": str, "metric_words": str, "range": [low, high], "by": [field, ...],
     "by_words": [words, ...], "columns": [column, ...],
     "rows": [{"split": {field: value}, "cells": {column: {"value", "ci", "n"}},
               "paired": {model column: {"diff", "ci", "p", "n"}}}],
     "tables": [{"title", "metric", "metric_words", "range", "by", "by_words", "columns", "rows"}, ...],
     "preset": name or None, "studies": [names], "evaluations": [ids],
     "seed": int, "n_resamples": int, "confidence": 0.95, "intervals": str (how, in words)}

``rows``/``metric``/``by`` are the first table's; ``tables`` holds every table (a preset has several,
and a table per metric). A split value is a text, a number (``time_limit``, seconds) or None (the
record has none); the last row of a split table is over everything, every split value "all".
"""

from __future__ import annotations

from collections.abc import Sequence

from annotator.errors import Invalid
from annotator.evaluation.models import Evaluation
from annotator.projects.models import Project
from annotator.reports import presets as preset_registry
from annotator.reports.records import FIELDS, Answers, field_name, read
from annotator.scoring import report as stats
from annotator.studies.kinds import kind_module
from annotator.studies.models import Study

BY_MAX = 4
SOURCES_MAX = 50
RESAMPLES_MIN, RESAMPLES_MAX = 100, 10_000
SEED_MAX = 2**63 - 1
# The most resample-answer passes one report may cost (resamples x answers x tables): the bootstrap
# and the permutation test are O(resamples x answers) per table. bench/report.py: 1,000 resamples of
# 200,000 answers (2e8) take 1.5 s here; 10,000 took 50 s of one web process, the request's whole time.
WORK_MAX = 500_000_000
INTERVALS = (
    "95% intervals: Wilson for 0/1 metrics, else Student's t clipped to the metric's range (none for n < 2); "
    "paired: human minus model on the keys both answered (per key, the mean over the people), percentile "
    "bootstrap over keys and a two-sided sign-flip permutation test"
)


def parse_by(by: str | Sequence[str] | None) -> list[str]:
    """The split fields of ``--by`` / ``?by=`` ("qa_type,illumination" or a list), canonical and
    distinct. Raises Invalid naming an unknown field, or for more than ``BY_MAX``."""
    if by is None:
        return []
    parts = by.split(",") if isinstance(by, str) else [p for item in by for p in str(item).split(",")]
    out = []
    for raw in (p.strip() for p in parts):
        if not raw:
            continue
        try:
            name = field_name(raw)
        except KeyError:
            raise Invalid(
                f"unknown split field {raw[:60]!r}: choose from {', '.join(sorted([*FIELDS, 'subtask']))}",
                errors={"by": "unknown field"},
            ) from None
        if name not in out:
            out.append(name)
    if len(out) > BY_MAX:
        raise Invalid(f"split by at most {BY_MAX} fields at once", errors={"by": "too many fields"})
    return out


def sources(
    project: Project, studies: Sequence[str] = (), evaluations: Sequence = ()
) -> tuple[list[Study], list[Evaluation]]:
    """The project's studies named ``studies`` and evaluations with the ids ``evaluations``, in the
    order given, each once (one named twice is read once); with neither, every ready study and every
    finished evaluation of the project.
    Raises Invalid naming what the project does not have."""
    if len(studies) + len(evaluations) > SOURCES_MAX:
        raise Invalid(f"at most {SOURCES_MAX} studies and evaluations in one report")
    # A source named twice is read once: read twice, its answers would count twice (n doubled, the
    # intervals narrower than the data allow) and cost twice the memory and time.
    studies = list(dict.fromkeys(str(s) for s in studies))
    evaluations = list(dict.fromkeys(evaluations))
    found_studies, found_evals = [], []
    for name in studies:
        study = Study.objects.filter(project=project, name=str(name)[:100]).first()
        if study is None:
            raise Invalid(f"this project has no study named {str(name)[:100]!r}", errors={"study": "unknown study"})
        found_studies.append(study)
    for raw in evaluations:
        try:
            pk = int(raw)
        except (TypeError, ValueError):
            raise Invalid(
                f"an evaluation is given by its id, a whole number, not {str(raw)[:40]!r}",
                errors={"evaluation": "not a number"},
            ) from None
        evaluation = Evaluation.objects.filter(project=project, pk=pk).first() if 0 < pk <= SEED_MAX else None
        if evaluation is None:
            raise Invalid(f"this project has no evaluation {pk}", errors={"evaluation": "unknown evaluation"})
        if evaluation not in found_evals:  # "5" and "05" are one evaluation
            found_evals.append(evaluation)
    if not studies and not evaluations:
        found_studies = list(Study.objects.filter(project=project, status=Study.Status.READY).order_by("name"))
        found_evals = list(
            Evaluation.objects.filter(
                project=project, status__in=[Evaluation.Status.DONE, Evaluation.Status.FAILED]
            ).order_by("id")
        )
    return found_studies, found_evals


def default_metric(studies: Sequence[Study], answers: Answers) -> str:
    """The metric reported when none is asked: the first study's kind's primary metric (the kind's
    ``PRIMARY`` when it is one of its ``METRICS``, else its first metric: a Likert study's score);
    without a study, the first of accuracy, judged correct, judge score with values."""
    for study in studies:
        kind = kind_module(study.kind)
        primary = getattr(kind, "PRIMARY", None)
        return primary if primary in kind.METRICS else kind.METRICS[0]
    present = answers.metrics
    for name in ("accuracy", "judge_accuracy", "judge_score", "judge_score_10"):
        if name in present:
            return name
    return next(iter(present), "accuracy")


def _columns(answers: Answers) -> list[str]:
    names = set(answers.respondent)
    return ([stats.HUMAN] if stats.HUMAN in names else []) + sorted(n for n in names if n != stats.HUMAN)


def _human_split(answers: Answers, fields: Sequence[str]) -> tuple[Answers, list[str]]:
    """A copy of ``answers`` whose "human" column is one column per value of ``fields``
    ("human · 60 s"; models' columns unchanged), and those columns in the values' order."""

    def text(name, v):
        return f"{v:g} s" if name == "time_limit" and isinstance(v, (int, float)) else "none" if v is None else str(v)

    values = {}
    respondent = list(answers.respondent)
    for i, r in enumerate(respondent):
        if r == stats.HUMAN:
            vs = tuple(answers.fields[name][i] for name in fields)
            label = values.setdefault(vs, f"{stats.HUMAN} · {', '.join(text(n, v) for n, v in zip(fields, vs))}")
            respondent[i] = label
    out = Answers(
        respondent=respondent,
        key=answers.key,
        source=answers.source,
        fields=answers.fields,
        metric_rows=answers.metric_rows,
    )
    out._metrics = answers.metrics
    ordered = sorted(values, key=lambda vs: tuple(stats.sort_key(v, None) for v in vs))
    return out, [values[vs] for vs in ordered]


def _table(
    answers: Answers,
    *,
    title: str,
    by: list[str],
    metric: str,
    order: dict,
    seed: int,
    n_resamples: int,
    human_by: Sequence[str] = (),
) -> dict:
    humans: list[str] = []
    if human_by:
        answers, humans = _human_split(answers, human_by)
        columns = humans + sorted(set(answers.respondent) - set(humans))
    else:
        columns = _columns(answers)
    rows = stats.table(
        answers.records(metric), by=by, key=metric, columns=columns, order=order, seed=seed, n_resamples=n_resamples
    )
    if human_by:
        # Paired comparisons need one human column: each model against every human column.
        for row in rows:
            row["paired"] = {}
        for human in humans:
            sub = answers.records(metric)
            sub = stats.Records(
                respondent=[stats.HUMAN if r == human else r for r in sub.respondent],
                key=sub.key,
                fields=sub.fields,
                values=sub.values,
            )
            models = [c for c in columns if c not in humans]
            paired_rows = stats.table(
                sub, by=by, key=metric, columns=[stats.HUMAN, *models], order=order, seed=seed, n_resamples=n_resamples
            )
            by_split = {tuple(r["split"].items()): r["paired"] for r in paired_rows}
            for row in rows:
                for model, result in by_split.get(tuple(row["split"].items()), {}).items():
                    row["paired"][f"{model} vs {human}"] = result
    m = stats.metric(metric)
    return {
        "title": title,
        "metric": metric,
        "metric_words": m.words,
        "range": m.range,
        "by": list(by),
        "by_words": [FIELDS[f].words for f in by],
        "columns": columns,
        "rows": rows,
    }


def _check_work(answers: Answers, chosen, metric: str | None, n_resamples: int) -> None:
    """Refuse a report costing more than ``WORK_MAX`` resample-answer passes (``n_resamples`` x the
    answers read x the tables computed; a preset table with people split by a field computes once
    more per people's column), naming the most resamples these answers allow. Raises Invalid."""
    passes = 1
    if chosen is not None:
        passes = 0
        for spec in chosen.tables:
            wanted = (metric,) if metric else spec.metrics
            n_metrics = len([m for m in wanted if m in answers.metrics] or list(wanted[:1]))
            humans = 0
            if spec.human_by:
                humans = len(
                    {
                        tuple(answers.fields[f][i] for f in spec.human_by)
                        for i, r in enumerate(answers.respondent)
                        if r == stats.HUMAN
                    }
                )
            passes += n_metrics * (1 + humans)
    work = n_resamples * len(answers) * passes
    if work > WORK_MAX:
        most = WORK_MAX // max(len(answers) * passes, 1)
        fix = f"ask for at most {most} resamples" if most >= RESAMPLES_MIN else "choose fewer studies or evaluations"
        raise Invalid(
            f"this report is too large to compute at once ({len(answers)} answers, {passes} table "
            f"pass{'es' if passes != 1 else ''}, {n_resamples} resamples): {fix}",
            errors={"n_resamples": "too much work"},
        )


def build(
    project: Project,
    *,
    studies: Sequence[str] = (),
    evaluations: Sequence = (),
    by=None,
    preset: str | None = None,
    metric: str | None = None,
    seed: int = 0,
    n_resamples: int = stats.N_RESAMPLES,
) -> dict:
    """The project's report (shape in the module docstring). ``by`` ("f1,f2" or a list) and
    ``preset`` (a name of ``presets.PRESETS``) are exclusive; with neither, one row over everything.
    ``metric``: the metric of a ``by`` report (default ``default_metric``). Raises Invalid for an
    unknown field, preset, metric, study or evaluation, a seed or resample count out of bounds, or a
    report costing more than ``WORK_MAX`` (``_check_work``)."""
    if preset and by:
        raise Invalid("give split fields (by) or a preset, not both", errors={"by": "with a preset"})
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= SEED_MAX:
        raise Invalid(f"the seed is a whole number from 0 to {SEED_MAX}", errors={"seed": "out of range"})
    if not isinstance(n_resamples, int) or not RESAMPLES_MIN <= n_resamples <= RESAMPLES_MAX:
        raise Invalid(
            f"resamples: a whole number from {RESAMPLES_MIN} to {RESAMPLES_MAX}", errors={"n_resamples": "out of range"}
        )
    fields = parse_by(by)
    chosen = None
    if preset:
        chosen = preset_registry.PRESETS.get(preset)
        if chosen is None:
            raise Invalid(
                f"unknown preset {str(preset)[:60]!r}: choose from {', '.join(preset_registry.choices())}",
                errors={"preset": "unknown preset"},
            )
    found_studies, found_evals = sources(project, studies, evaluations)
    answers = read(found_studies, found_evals)
    if metric is not None and metric not in answers.metrics and metric not in stats.METRICS:
        raise Invalid(
            f"unknown metric {str(metric)[:60]!r}: these answers have {', '.join(answers.metrics) or 'no metric'}",
            errors={"metric": "unknown metric"},
        )
    _check_work(answers, chosen, metric, n_resamples)
    tables = []
    if chosen is None:
        metric = metric or default_metric(found_studies, answers)
        tables.append(
            _table(answers, title="Report", by=fields, metric=metric, order={}, seed=seed, n_resamples=n_resamples)
        )
    else:
        for spec in chosen.tables:
            wanted = (metric,) if metric else spec.metrics
            present = [m for m in wanted if m in answers.metrics] or list(wanted[:1])
            for m in present:
                tables.append(
                    _table(
                        answers,
                        title=spec.title,
                        by=list(spec.by),
                        metric=m,
                        order=spec.order,
                        seed=seed,
                        n_resamples=n_resamples,
                        human_by=spec.human_by,
                    )
                )
    first = tables[0]
    return {
        "metric": first["metric"],
        "metric_words": first["metric_words"],
        "range": first["range"],
        "by": first["by"],
        "by_words": first["by_words"],
        "columns": first["columns"],
        "rows": first["rows"],
        "tables": tables,
        "preset": chosen.name if chosen else None,
        "studies": [s.name for s in found_studies],
        "evaluations": [e.pk for e in found_evals],
        "seed": seed,
        "n_resamples": n_resamples,
        "confidence": stats.CONFIDENCE,
        "intervals": INTERVALS,
    }
