"""The researchers' pages of a study: the results dashboard and the exports (trials, scores)."""

import csv
import io
import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render

from annotator.projects import access
from annotator.studies import selectors
from annotator.studies.kinds import kind_module
from annotator.studies.models import Participant, Study


def _study(request, slug, name):
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    return get_object_or_404(Study, project=project, name=name)


@login_required
def results(request, slug: str, name: str):
    """The score table (humans with and without excluded participants, beside models) and the participants."""
    study = _study(request, slug, name)
    return render(request, "studies/results.html", {
        "study": study, "table": selectors.score_table(study), "metrics": kind_module(study.kind).METRICS,
        "participants": Participant.objects.filter(study=study).select_related("user").order_by("started_at"),
        "unscored": selectors.unscored(study),
    })


@login_required
def export_trials(request, slug: str, name: str, fmt: str):
    """Per-trial export, JSONL or CSV, streamed (admins, reviewers, researchers)."""
    if fmt not in ("jsonl", "csv"):
        raise Http404("export as trials.jsonl or trials.csv")
    study = _study(request, slug, name)
    return trials_response(study, fmt)


def trials_response(study: Study, fmt: str) -> StreamingHttpResponse:
    """The streamed per-trial export of ``study`` as ``jsonl`` or ``csv`` (``selectors.trials_export``)."""
    rows = selectors.trials_export(study)
    if fmt == "jsonl":
        response = StreamingHttpResponse((json.dumps(r) + "\n" for r in rows), content_type="application/jsonl; charset=utf-8")
    else:
        response = StreamingHttpResponse(_csv_lines(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.name}-trials.{fmt}"'
    return response


def _csv_lines(rows):
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(selectors.TRIAL_COLUMNS)
    for r in rows:
        writer.writerow([json.dumps(r[k]) if isinstance(r[k], (list, dict)) else r[k] for k in selectors.TRIAL_COLUMNS])
        yield buf.getvalue()
        buf.seek(0)
        buf.truncate()


@login_required
def export_scores(request, slug: str, name: str):
    """The score table as CSV: condition, subtask, group, respondent, and per metric mean, CI and n."""
    study = _study(request, slug, name)
    metrics = kind_module(study.kind).METRICS
    include = request.GET.get("include_excluded") == "1"
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["condition", "label", "subtask", "group", "respondent",
                     *[f"{m}_{k}" for m in metrics for k in ("mean", "ci_low", "ci_high", "n")]])
    for r in selectors.score_table(study, include_excluded=include):
        writer.writerow([r["condition"]["number"], r["condition"]["label"], r["subtask"], r["group"], r["respondent"],
                         *[r["metrics"][m][k] for m in metrics for k in ("mean", "ci_low", "ci_high", "n")]])
    response = StreamingHttpResponse([buf.getvalue()], content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.name}-scores.csv"'
    return response
