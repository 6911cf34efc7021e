"""The reads of model evaluation that the pages, the API and the command share: the leaderboard,
one evaluation's report with its breakdown, and the raw predictions export.

Intervals are 95%: Wilson for accuracies, Student t for mean scores (``metrics``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from django.db.models import Avg, Count, Q, StdDev, Sum
from django.db.models.functions import Coalesce

from annotator.core.cells import guard_cell
from annotator.evaluation import metrics, rejudge
from annotator.evaluation.models import Evaluation, Prediction
from annotator.projects.models import Project

FAILURES_SHOWN = 50
DONE = Q(predictions__status=Prediction.Status.DONE)
MCQ = DONE & Q(predictions__kind=Prediction.Kind.MCQ)
JUDGED = DONE & Q(predictions__kind=Prediction.Kind.OPEN) & ~Q(predictions__judge_pred="")


def _round(x, digits: int = 6):
    return None if x is None else round(float(x), digits)


def _ci(ci) -> list | None:
    return None if ci is None else [_round(ci[0]), _round(ci[1])]


def evaluation_head(e: Evaluation) -> dict:
    """What identifies an evaluation: id, model, servers, rubric, frames, QA type, prompt versions,
    status and times (ISO 8601)."""
    return {
        "id": e.pk,
        "model": e.model,
        "server": e.endpoint.get("server"),
        "base_url": e.endpoint.get("base_url"),
        "judge_model": e.judge_model,
        "judge_server": e.judge_endpoint.get("server"),
        "rubric": e.rubric,
        "score_max": e.score_max,
        "frames": e.n_frames,
        "qa_type": e.qa_type,
        "prompt_version": e.prompt_version,
        "status": e.status,
        "error": e.error,
        "created_by": e.created_by.username if e.created_by else None,
        "created_at": e.created_at.isoformat(),
        "started_at": e.started_at.isoformat() if e.started_at else None,
        "finished_at": e.finished_at.isoformat() if e.finished_at else None,
    }


def leaderboard(project: Project) -> list[dict]:
    """Every evaluation of the project, newest first, in one query: ``evaluation_head`` and
    ``items`` {total, done, failed, pending}, ``mcq_accuracy``, ``judge_accuracy`` and
    ``judge_score`` ({n, value, ci}), ``cost_usd``."""
    rows = (
        Evaluation.objects.filter(project=project)
        .select_related("created_by")
        .annotate(
            n=Count("predictions"),
            n_done=Count("predictions", filter=DONE),
            n_failed=Count("predictions", filter=Q(predictions__status=Prediction.Status.FAILED)),
            n_pending=Count("predictions", filter=Q(predictions__status__in=["queued", "running"])),
            mcq_n=Count("predictions", filter=MCQ),
            mcq_k=Count("predictions", filter=MCQ & Q(predictions__correct=True)),
            judged_n=Count("predictions", filter=JUDGED),
            judged_k=Count("predictions", filter=JUDGED & Q(predictions__judge_pred="correct")),
            score_n=Count("predictions__judge_score", filter=JUDGED),
            score_mean=Avg("predictions__judge_score", filter=JUDGED),
            score_sd=StdDev("predictions__judge_score", filter=JUDGED, sample=True),
            cost=Coalesce(Sum("predictions__cost_usd"), 0.0),
        )
        .order_by("-created_at", "-id")
    )
    out = []
    for e in rows:
        mcq = metrics.wilson(e.mcq_k, e.mcq_n)
        judged = metrics.wilson(e.judged_k, e.judged_n)
        score = metrics.mean_interval(e.score_n, e.score_mean, e.score_sd, within=(0.0, float(e.score_max)))
        out.append(
            {
                **evaluation_head(e),
                "items": {"total": e.n, "done": e.n_done, "failed": e.n_failed, "pending": e.n_pending},
                "mcq_accuracy": {"n": e.mcq_n, "value": _round(e.mcq_k / e.mcq_n) if e.mcq_n else None, "ci": _ci(mcq)},
                "judge_accuracy": {
                    "n": e.judged_n,
                    "value": _round(e.judged_k / e.judged_n) if e.judged_n else None,
                    "ci": _ci(judged),
                },
                "judge_score": {"n": e.score_n, "value": _round(e.score_mean), "ci": _ci(score)},
                "cost_usd": round(e.cost, 6),
            }
        )
    return out


SCORED_FIELDS = (
    "kind",
    "status",
    "correct",
    "judge_pred",
    "judge_score",
    "judge_accuracy",
    "judge_relevance",
    "qa_type",
    "illumination",
    "source",
    "provenance",
    "tious",
)


def scored(evaluation: Evaluation) -> list[metrics.Scored]:
    """Every item of the evaluation as ``metrics.Scored`` (one query, no model instances)."""
    return [metrics.Scored(*row) for row in evaluation.predictions.values_list(*SCORED_FIELDS).order_by("id")]


def _tidy(summary: dict) -> dict:
    """A ``metrics.summarize`` result with values rounded and intervals as lists."""
    out = {}
    for key, value in summary.items():
        if isinstance(value, dict):
            out[key] = {
                k: (_ci(v) if k == "ci" else _round(v) if isinstance(v, float) else v) for k, v in value.items()
            }
        else:
            out[key] = value
    return out


def report(evaluation: Evaluation) -> dict:
    """One evaluation's whole report::

    {**evaluation_head, "items": {"total", "queued", "running", "done", "failed", "cancelled"},
     "cost_usd": float, "calls": int,
     "summary": metrics.summarize (all items),
     "breakdown": {dimension: [{"value", **metrics.summarize}]} for qa_type, illumination,
                  source, provenance (kept / modified_or_added),
     "failures": [{"prediction", "qa_pair", "stage", "error"}] (at most FAILURES_SHOWN, newest first),
     "rejudge": rejudge.status(...)}
    """
    counts = dict(evaluation.predictions.values_list("status").annotate(n=Count("id")))
    items = {s: counts.get(s, 0) for s in Prediction.Status.values}
    items["total"] = sum(counts.values())
    totals = evaluation.predictions.aggregate(cost=Coalesce(Sum("cost_usd"), 0.0))
    calls = sum(len(ids or []) for ids in evaluation.predictions.values_list("call_ids", flat=True))
    table = metrics.breakdown(scored(evaluation), evaluation.score_max)
    failures = (
        evaluation.predictions.filter(status=Prediction.Status.FAILED)
        .order_by("-updated_at", "-id")
        .values("id", "qa_pair_id", "stage", "error")[:FAILURES_SHOWN]
    )
    return {
        **evaluation_head(evaluation),
        "items": items,
        "cost_usd": round(totals["cost"], 6),
        "calls": calls,
        "summary": _tidy(table["all"]),
        "breakdown": {
            dim: [{"value": value, **_tidy(s)} for value, s in table[dim].items()] for dim in metrics.DIMENSIONS
        },
        "failures": [
            {"prediction": f["id"], "qa_pair": f["qa_pair_id"], "stage": f["stage"], "error": f["error"]}
            for f in failures
        ],
        "rejudge": rejudge.status(evaluation),
    }


# ----------------------------------------------------------------------------- raw predictions

EXPORT_COLUMNS = [
    "prediction_id",
    "evaluation_id",
    "model",
    "qa_pair_id",
    "video_id",
    "role",
    "kind",
    "qa_type",
    "illumination",
    "source",
    "provenance",
    "question",
    "truth",
    "options",
    "answer_index",
    "clip_start_s",
    "clip_end_s",
    "frame_times",
    "status",
    "error",
    "prediction",
    "choice_letter",
    "choice_index",
    "correct",
    "judge_pred",
    "judge_score",
    "judge_accuracy",
    "judge_relevance",
    "judge_reason",
    "predict_call_id",
    "judge_call_id",
    "call_ids",
    "cost_usd",
    "truth_start_s",
    "truth_end_s",
    "intervals",
    "tious",
]
EXPORT_FORMATS = ("jsonl", "csv")


def export_rows(evaluation: Evaluation, chunk_size: int = 2000) -> Iterator[dict]:
    """One dict per item with ``EXPORT_COLUMNS`` (every row the same keys and types; nulls where
    nothing applies), read in chunks through a server-side cursor."""
    fields = [c for c in EXPORT_COLUMNS if c not in ("prediction_id", "evaluation_id", "model")]
    rows = evaluation.predictions.order_by("id").values("id", *fields)
    for r in rows.iterator(chunk_size=chunk_size):
        pid = r.pop("id")
        yield {"prediction_id": pid, "evaluation_id": evaluation.pk, "model": evaluation.model, **r}


def jsonl_lines(evaluation: Evaluation) -> Iterator[str]:
    """The export as JSON lines (UTF-8 text, one object a line)."""
    for row in export_rows(evaluation):
        yield json.dumps(row, ensure_ascii=False) + "\n"


def _cell(value) -> object:
    """A CSV cell: lists and objects as JSON text, null as empty; a text starting with = + - @ (or
    a tab or carriage return) gets a leading apostrophe, so a spreadsheet shows model output as
    text instead of running it as a formula (OWASP "CSV injection")."""
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    if value is None:
        return ""
    return guard_cell(value)


def csv_lines(evaluation: Evaluation) -> Iterator[str]:
    """The export as CSV: a header, then one row per item (cells by ``_cell``)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(EXPORT_COLUMNS)
    for row in export_rows(evaluation):
        writer.writerow([_cell(row[k]) for k in EXPORT_COLUMNS])
        yield buf.getvalue()
        buf.seek(0)
        buf.truncate()
    if buf.getvalue():
        yield buf.getvalue()
