"""The report page: pick studies, evaluations and split fields (or a preset), and read the table
with its intervals and paired comparisons beside a bar chart of each column with 95% error bars
(Chart.js and chartjs-chart-error-bars, vendored; data through ``json_script``, the CSP forbids
inline script). Downloads: the same report as JSON, CSV, LaTeX or Markdown. Overseers only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render

from annotator import access
from annotator.errors import DomainError
from annotator.evaluation.models import Evaluation
from annotator.reports import presets, selectors, writers
from annotator.reports.records import FIELDS
from annotator.studies.models import Study


def _query(request) -> dict:
    q = request.GET
    return {
        "studies": [s[:100] for s in q.getlist("study")[: selectors.SOURCES_MAX]],
        "evaluations": q.getlist("evaluation")[: selectors.SOURCES_MAX],
        "by": ",".join(b for b in q.getlist("by") if b)[:200],
        "preset": q.get("preset", "")[:60],
        "metric": q.get("metric", "")[:64],
    }


def _build(project, typed: dict) -> dict:
    return selectors.build(
        project,
        studies=typed["studies"],
        evaluations=typed["evaluations"],
        by=typed["by"] or None,
        preset=typed["preset"] or None,
        metric=typed["metric"] or None,
    )


def chart_data(report: dict) -> list[dict]:
    """Per table, what ``static/js/reports/report.js`` draws: ``categories`` (the split cells' labels),
    ``series`` (one per column: ``label`` and one point per cell, ``y`` the value, ``yMin``/``yMax``
    the 95% interval, ``n``), the value axis' title (the metric in words) and range."""
    out = []
    for i, t in enumerate(report["tables"]):
        categories = [" · ".join(writers.split_text(row["split"][f]) for f in t["by"]) or "all" for row in t["rows"]]
        series = []
        for column in t["columns"]:
            points = []
            for row in t["rows"]:
                cell = row["cells"].get(column) or {}
                ci = cell.get("ci") or [cell.get("value"), cell.get("value")]
                points.append({"y": cell.get("value"), "yMin": ci[0], "yMax": ci[1], "n": cell.get("n", 0)})
            series.append({"label": column, "points": points})
        out.append(
            {
                "id": f"report-chart-{i}",
                "title": f"{t['title']}: {t['metric_words']}",
                "axis": t["metric_words"],
                "low": t["range"][0],
                "high": t["range"][1],
                "categoryAxis": " · ".join(t["by_words"]) or "All answers",
                "categories": categories,
                "series": series,
            }
        )
    return out


def _rows(t: dict) -> list[dict]:
    """A table's rows as the template shows them: split texts, cells in column order, paired in order."""
    paired_names = []
    for row in t["rows"]:
        paired_names.extend(n for n in row["paired"] if n not in paired_names)
    t["paired_names"] = paired_names
    return [
        {
            "split": [writers.split_text(row["split"][f]) for f in t["by"]],
            "cells": [writers.cell_text(row["cells"].get(c, {})) for c in t["columns"]],
            "paired": [writers.paired_text(row["paired"].get(n, {})) for n in paired_names],
        }
        for row in t["rows"]
    ]


@login_required
def report_page(request, slug: str):
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    typed = _query(request)
    report, error = None, None
    try:
        report = _build(project, typed)
    except DomainError as e:
        error = str(e)
    tables = []
    if report:
        for t in report["tables"]:
            rows = _rows(t)
            tables.append(
                {**t, "display_rows": rows, "width": len(t["by"]) + len(t["columns"]) + len(t["paired_names"])}
            )
    return render(
        request,
        "reports/report.html",
        {
            "project": project,
            "typed": typed,
            "error": error,
            "report": report,
            "tables": tables,
            "charts": chart_data(report) if report else [],
            "fields": list(FIELDS.values()),
            "chosen_by": typed["by"].split(",") if typed["by"] else [],
            "presets": [presets.PRESETS[n] for n in presets.choices()],
            "studies": list(Study.objects.filter(project=project).order_by("name").values_list("name", flat=True)),
            "evaluations": list(
                Evaluation.objects.filter(project=project).order_by("id").values("id", "model", "status")
            ),
            "formats": list(writers.FORMATS),
            "query": request.GET.urlencode(),
        },
    )


@login_required
def report_download(request, slug: str, fmt: str):
    """The page's report as a file: report.json, report.csv, report.latex or report.md."""
    if fmt not in writers.FORMATS:
        raise Http404("report.json, report.csv, report.latex or report.md")
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    try:
        report = _build(project, _query(request))
    except DomainError as e:
        return HttpResponse(str(e), status=400, content_type="text/plain; charset=utf-8")
    response = HttpResponse(writers.FORMATS[fmt](report), content_type=writers.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-report.{"tex" if fmt == "latex" else fmt}"'
    return response
