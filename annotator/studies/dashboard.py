"""The researchers' pages of a study: the results dashboard and the exports (trials, scores).

The dashboard draws its plots in the browser with Chart.js and its error-bar plugin (vendored,
pinned: ``static/vendor/chartjs-4.6.1``, ``static/vendor/chartjs-chart-error-bars-4.4.5``) from
data built here, ready to plot, that reaches ``static/js/studies/results.js`` through
``json_script`` (the CSP forbids inline script; Chart.js needs no ``eval``). Every plot comes twice,
without and with the participants flagged for exclusion, and the page toggles between them.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass

import numpy as np
from django.contrib.auth.decorators import login_required
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render

from annotator import access
from annotator.core.cells import guard_cell
from annotator.scoring import report as metric_names
from annotator.studies import selectors
from annotator.studies.kinds import kind_module, metrics_of
from annotator.studies.models import Item, Participant, Prediction, Study


@dataclass(frozen=True)
class Plot:
    """One bar chart of a metric: ``metric`` (a key of the kind's ``METRICS``), ``title``, the value
    axis' title with its unit (``axis``) and range (``low``, ``high``)."""

    metric: str
    title: str
    axis: str
    low: float
    high: float


# The metrics each kind plots as bars with 95% intervals (issue 8, Results). Likert is plotted per
# group and criterion instead (``likert_chart``).
def plots_of(study: Study) -> list[Plot]:
    """The bar charts of the study's kind (``kinds.<kind>.PLOTS``)."""
    return [Plot(*spec) for spec in kind_module(study.kind).PLOTS]


# From 0, not 1: a mean rating of 1 (the filtered control group's, often) is a bar one point high.
LIKERT = Plot("score", "Mean rating", "Mean rating (Likert points, 1 poor … 5 excellent)", 0, 5)
GROUP_LABELS = {
    "real": "real pairs",
    "random_matched": "random-matched (control)",
    "filtered": "filtered in review (control)",
    "": "rated items",
}
HUMANS = "humans"
RT_MAX_BINS = 20
RT_STEPS = (0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10, 15, 20, 30, 60, 120, 300, 600, 1800, 3600)


def _study(request, slug, name):
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    return get_object_or_404(Study, project=project, name=name)


@login_required
def results(request, slug: str, name: str):
    """Plots (bars with 95% intervals, humans beside models; response-time distributions; Likert
    groups), the score table without and with excluded participants, the participants with their
    exclusion reasons, and the export links."""
    study = _study(request, slug, name)
    participants = list(
        Participant.objects.filter(study=study, kind=Participant.Kind.PERSON)
        .select_related("user")
        .order_by("started_at")
    )
    excluded = sum(p.excluded for p in participants)
    views = {view: clipped(rows) for view, rows in selectors.score_tables(study).items()}  # one read, four tables
    tables = [views[(False, True)], views[(True, True)]]
    charts = {
        "kind": study.kind,
        "views": {
            "kept": chart_data(study, include_excluded=False, table=tables[0], pooled=views[(False, False)]),
            "all": chart_data(study, include_excluded=True, table=tables[1], pooled=views[(True, False)]),
        },
    }
    return render(
        request,
        "studies/results.html",
        {
            "study": study,
            "metrics": metrics_of(study.kind),
            "participants": participants,
            "metric_words": [metric_names.words(m) for m in metrics_of(study.kind)],
            "excluded": excluded,
            "unscored": selectors.unscored(study),
            "charts": charts,
            "can_preview": request.user.is_superuser
            or access.role_in(request.user, study.project) in access.RESEARCH_ROLES,
            "plots": plots_of(study),
            "likert": study.kind == "likert",
            "tables": [
                {
                    "id": "score-table",
                    "view": "kept",
                    "rows": tables[0],
                    "caption": f"Without the {excluded} excluded participant{'s' if excluded != 1 else ''}",
                },
                {
                    "id": "score-table-all",
                    "view": "all",
                    "rows": tables[1],
                    "caption": "With every participant, excluded ones included",
                },
            ],
        },
    )


def clipped(rows: list[dict]) -> list[dict]:
    """Score-table rows (``selectors.score_table``) with every metric's 95% interval clipped to the
    metric's range (``scoring.report.clip``: tau-b within [-1, 1], a Likert score within [1, 5]); with
    few trials Student's t reaches past the scale, and a mean cannot. New dicts; the input is unchanged."""
    out = []
    for r in rows:
        metrics = {}
        for m, stat in r["metrics"].items():
            ci = metric_names.clip((stat.get("ci_low"), stat.get("ci_high")), m)
            metrics[m] = {**stat, "ci_low": ci[0], "ci_high": ci[1]} if ci else stat
        out.append({**r, "metrics": metrics})
    return out


def chart_data(
    study: Study, *, include_excluded: bool, table: list[dict] | None = None, pooled: list[dict] | None = None
) -> dict:
    """What ``results.js`` plots for one view (without or with the excluded participants):
    ``bars`` (one chart per metric of the kind's ``PLOTS``), ``likert`` (Likert only, else None) and ``rt``
    (``rt_histogram``). Charts have ``categories`` (a label, or lines of one) and ``series`` (a
    legend label and one point per category: ``y`` the mean, ``yMin``/``yMax`` the 95% interval,
    ``n``; ``y`` None where there is no score). ``table`` and ``pooled``: the view's score tables
    per subtask and over all subtasks, if the caller has them (``selectors.score_tables``)."""
    if table is None or pooled is None:
        views = {
            view: clipped(rows)
            for view, rows in selectors.score_tables(
                study, [(include_excluded, True), (include_excluded, False)]
            ).items()
        }
        table, pooled = views[(include_excluded, True)], views[(include_excluded, False)]
    models = sorted(set(Prediction.objects.filter(study=study).values_list("model", flat=True).distinct()))
    respondents = ["human", *models]
    scored = Item.objects.filter(condition__study=study, role=Item.Role.SCORED)
    subtasks = sorted(set(scored.values_list("subtask", flat=True).distinct()))
    conditions = list(study.conditions.order_by("number"))
    out = {
        "bars": [],
        "likert": None,
        "rt": rt_histogram(selectors.client_rts(study, include_excluded=include_excluded)),
    }
    if study.kind == "likert":
        groups = [g for g in GROUP_LABELS if scored.filter(group=g).exists()]
        out["likert"] = likert_chart(conditions, groups, respondents, pooled)
        return out
    # Per condition over all subtasks; where there are several subtasks, each of them too.
    keys = []
    for c in conditions:
        name = f"{c.number}. {c.label}"
        keys.append(((c.number, None), [name, "all subtasks"] if len(subtasks) > 1 else name))
        if len(subtasks) > 1:
            keys.extend(((c.number, s), [name, s or "no subtask"]) for s in subtasks)
    cells = {(r["condition"]["number"], None, r["respondent"]): r["metrics"] for r in pooled}
    if len(subtasks) > 1:
        cells.update({(r["condition"]["number"], r["subtask"], r["respondent"]): r["metrics"] for r in table})
    for plot in plots_of(study):
        out["bars"].append(
            {
                **asdict(plot),
                "id": f"bars-{plot.metric}",
                "categories": [label for _, label in keys],
                "categoryAxis": "Condition · subtask (QA type)" if len(subtasks) > 1 else "Condition",
                "series": [
                    {
                        "label": HUMANS if who == "human" else who,
                        "respondent": who,
                        "points": [_point((cells.get((*key, who)) or {}).get(plot.metric)) for key, _ in keys],
                    }
                    for who in respondents
                ],
            }
        )
    return out


def likert_chart(conditions, groups: list[str], respondents: list[str], pooled: list[dict]) -> dict:
    """Mean rating per criterion (a condition each) and group (real / random-matched / filtered;
    "rated items" for records), over all subtasks, for humans and models: one series per group and
    respondent."""
    cells = {(r["condition"]["number"], r["group"], r["respondent"]): r["metrics"]["score"] for r in pooled}
    present = {(g, who) for _, g, who in cells}
    series = [
        {
            "label": f"{GROUP_LABELS[g]} · {HUMANS if who == 'human' else who}",
            "group": g,
            "respondent": who,
            "points": [_point(cells.get((c.number, g, who))) for c in conditions],
        }
        for g in groups
        for who in respondents
        if who == "human" or (g, who) in present
    ]
    return {
        **asdict(LIKERT),
        "id": "likert-bars",
        "categories": [f"{c.number}. {c.label}" for c in conditions],
        "categoryAxis": "Criterion",
        "series": series,
    }


def _point(stat: dict | None) -> dict:
    """A bar with its interval; a mean without an interval (n < 2) gets a zero-width one."""
    if not stat or stat["mean"] is None:
        return {"y": None, "yMin": None, "yMax": None, "n": 0}
    mean = stat["mean"]
    return {
        "y": mean,
        "yMin": mean if stat["ci_low"] is None else stat["ci_low"],
        "yMax": mean if stat["ci_high"] is None else stat["ci_high"],
        "n": stat["n"],
    }


def rt_histogram(per_condition: list[dict]) -> dict:
    """Histogram of client response times (s) per condition, on shared bins from 0 s: the bin width
    is the first of ``RT_STEPS`` giving at most ``RT_MAX_BINS`` bins up to the longest time (up to
    the 99th percentile from 100 times on, an observed time, with a last open bin "≥ x" holding
    the longer ones, so one slow answer does not squash the rest). ``edges_s``, ``labels`` (one per bin) and ``series``:
    per condition its label, ``n``, ``timed_out``, ``median_s`` and ``counts``."""
    times = np.asarray([x for entry in per_condition for x in entry["rts_s"]], dtype=float)
    top = 0.0
    if times.size:
        top = float(np.percentile(times, 99, method="lower")) if times.size >= 100 else float(times.max())
    step = next((s for s in RT_STEPS if top / s <= RT_MAX_BINS), RT_STEPS[-1])
    bins = max(1, math.ceil(top / step - 1e-9))
    edges = [round(i * step, 6) for i in range(bins + 1)]
    overflow = bool(times.size and times.max() > edges[-1])
    labels = [f"{a:g}–{b:g}" for a, b in zip(edges, edges[1:])] + ([f"≥ {edges[-1]:g}"] if overflow else [])
    series = []
    for entry in per_condition:
        xs = np.asarray(entry["rts_s"], dtype=float)
        counts = np.histogram(xs, bins=edges)[0].tolist()
        if overflow:
            counts.append(int((xs > edges[-1]).sum()))
        c = entry["condition"]
        series.append(
            {
                "label": f"{c['number']}. {c['label']}",
                "n": int(xs.size),
                "timed_out": entry["timed_out"],
                "median_s": float(np.median(xs)) if xs.size else None,
                "counts": counts,
            }
        )
    return {"edges_s": edges, "labels": labels, "series": series}


@login_required
def export_trials(request, slug: str, name: str, fmt: str):
    """Per-trial export, JSONL or CSV, streamed (admins, reviewers, researchers)."""
    if fmt not in TRIAL_FORMATS:
        raise Http404("export as trials.jsonl or trials.csv")
    study = _study(request, slug, name)
    return trials_response(study, fmt)


TRIAL_FORMATS = ("jsonl", "csv")


def trials_response(study: Study, fmt: str) -> StreamingHttpResponse:
    """The streamed per-trial export of ``study`` as ``jsonl`` or ``csv`` (``selectors.trials_export``)."""
    rows = selectors.trials_export(study)
    if fmt == "jsonl":
        response = StreamingHttpResponse(
            (json.dumps(r) + "\n" for r in rows), content_type="application/jsonl; charset=utf-8"
        )
    else:
        response = StreamingHttpResponse(csv_lines(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.name}-trials.{fmt}"'
    return response


def participants_response(study: Study, fmt: str) -> StreamingHttpResponse:
    """The participant export of ``study`` (``selectors.participants_export``) as ``jsonl`` or ``csv``."""
    rows = selectors.participants_export(study)
    if fmt == "jsonl":
        response = StreamingHttpResponse(
            (json.dumps(r) + "\n" for r in rows), content_type="application/jsonl; charset=utf-8"
        )
    else:
        response = StreamingHttpResponse(
            csv_lines(rows, selectors.PARTICIPANT_COLUMNS), content_type="text/csv; charset=utf-8"
        )
    response["Content-Disposition"] = f'attachment; filename="{study.name}-participants.{fmt}"'
    return response


def csv_lines(rows, columns=selectors.TRIAL_COLUMNS):
    """CSV lines of ``rows`` (dicts) under ``columns``: lists and objects as JSON, every cell guarded."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(columns)
    yield buf.getvalue()
    buf.seek(0)
    buf.truncate()
    for r in rows:
        # Cells are guarded: an open answer, a justification or a panel id is text a participant typed (issue 19).
        writer.writerow([guard_cell(json.dumps(r[k]) if isinstance(r[k], (list, dict)) else r[k]) for k in columns])
        yield buf.getvalue()
        buf.seek(0)
        buf.truncate()


@login_required
def export_scores(request, slug: str, name: str):
    """The score table as CSV: condition, subtask, group, respondent, and per metric mean, CI and n."""
    study = _study(request, slug, name)
    metrics = metrics_of(study.kind)
    include = request.GET.get("include_excluded") == "1"
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(
        [
            "condition",
            "label",
            "subtask",
            "group",
            "respondent",
            *[f"{m}_{k}" for m in metrics for k in ("mean", "ci_low", "ci_high", "n")],
        ]
    )
    for r in clipped(selectors.score_table(study, include_excluded=include)):
        writer.writerow(
            [
                r["condition"]["number"],
                r["condition"]["label"],
                r["subtask"],
                r["group"],
                r["respondent"],
                *[r["metrics"][m][k] for m in metrics for k in ("mean", "ci_low", "ci_high", "n")],
            ]
        )
    response = StreamingHttpResponse([buf.getvalue()], content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.name}-scores.csv"'
    return response
