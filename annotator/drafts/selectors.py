"""Reads of pipeline runs that the runs page and the API share (issue 10, "Progress").

``run_rows`` lists a project's runs with their progress counts in a fixed number of queries
whatever the page size; ``run_report`` is one run's full report (``runs.progress``) with the
latest failed model calls and who started it.
"""

from __future__ import annotations

from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce

from annotator.drafts import runs
from annotator.drafts.models import DraftJob, DraftRun
from annotator.inference.models import ModelCall, ModelServer
from annotator.projects.models import Project

FAILED_CALLS = 20  # failed model calls shown on a run's page and in its API report


def _servers(run: DraftRun) -> dict[str, dict]:
    """Stage -> {server, model} from the run's snapshot (never more of it: no key names, no URLs)."""
    return {
        stage: {"server": snap.get("server", ""), "model": snap.get("model", "")} for stage, snap in run.servers.items()
    }


def run_rows(
    project: Project, *, status: str | None = None, limit: int = 20, offset: int = 0
) -> tuple[int, list[dict]]:
    """(count, rows): the project's runs, newest first, ``limit`` of them from ``offset``, each::

        {"run": id, "pipeline", "status", "error", "qa_type", "servers": {stage: {server, model}},
         "created_by": username or None, "created_at", "finished_at" (datetimes),
         "videos": {"total", "queued", "running", "done", "failed", "cancelled"}, "drafts": int,
         "calls": int, "cache_hits": int, "errors": int (failed calls), "cost_usd": float}

    ``status`` keeps runs of that status only. Four queries, whatever ``limit``.
    """
    qs = DraftRun.objects.filter(project=project)
    if status:
        qs = qs.filter(status=status)
    count = qs.count()
    page = list(qs.select_related("created_by").order_by("-created_at", "-id")[offset : offset + limit])
    ids = [r.pk for r in page]
    videos: dict[int, dict] = {pk: dict.fromkeys(["total", *DraftJob.Status.values], 0) for pk in ids}
    drafts: dict[int, int] = dict.fromkeys(ids, 0)
    for row in (
        DraftJob.objects.filter(run_id__in=ids)
        .values("run_id", "status")
        .annotate(n=Count("id"), drafts=Coalesce(Sum("n_drafts"), 0))
    ):
        videos[row["run_id"]][row["status"]] = row["n"]
        videos[row["run_id"]]["total"] += row["n"]
        drafts[row["run_id"]] += row["drafts"]
    calls = {
        row["job__run_id"]: row
        for row in (
            ModelCall.objects.filter(job__run_id__in=ids)
            .values("job__run_id")
            .annotate(
                calls=Count("id"),
                cache_hits=Count("id", filter=Q(cached_from__isnull=False)),
                errors=Count("id", filter=~Q(error="")),
                cost=Sum("cost_usd"),
            )
        )
    }
    rows = []
    for run in page:
        c = calls.get(run.pk, {})
        rows.append(
            {
                "run": run.pk,
                "pipeline": run.pipeline,
                "status": run.status,
                "error": run.error,
                "qa_type": run.qa_type,
                "servers": _servers(run),
                "created_by": run.created_by.username if run.created_by else None,
                "created_at": run.created_at,
                "finished_at": run.finished_at,
                "videos": videos[run.pk],
                "drafts": drafts[run.pk],
                "calls": c.get("calls", 0),
                "cache_hits": c.get("cache_hits", 0),
                "errors": c.get("errors", 0),
                "cost_usd": round(c.get("cost") or 0.0, 6),
            }
        )
    return count, rows


def failed_calls(run: DraftRun, limit: int = FAILED_CALLS) -> list[dict]:
    """The run's latest failed model calls, newest first: ``[{"id", "video", "stage", "attempt",
    "error", "at"}]`` (``at`` ISO 8601), at most ``limit``."""
    rows = (
        ModelCall.objects.filter(job__run=run)
        .exclude(error="")
        .select_related("job__video")
        .only("id", "stage", "attempt", "error", "created_at", "job__video__filename")
        .order_by("-id")[:limit]
    )
    return [
        {
            "id": c.pk,
            "video": c.job.video.filename,
            "stage": c.stage,
            "attempt": c.attempt,
            "error": c.error,
            "at": c.created_at.isoformat(),
        }
        for c in rows
    ]


def run_report(run: DraftRun) -> dict:
    """``runs.progress(run)`` (see its docstring) plus ``failed_calls`` (``failed_calls``),
    ``qa_type``, ``created_by`` (username or None) and ``started_at``. Server snapshots are cut to
    server, model and base URL by ``progress``."""
    report = runs.progress(run)
    report["failed_calls"] = failed_calls(run)
    report["qa_type"] = run.qa_type
    report["created_by"] = run.created_by.username if run.created_by_id else None
    report["started_at"] = run.started_at.isoformat() if run.started_at else None
    return report


def model_servers(project: Project):
    """The project's model servers by name."""
    return ModelServer.objects.filter(project=project).order_by("name")
