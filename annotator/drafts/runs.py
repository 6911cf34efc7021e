"""Pipeline runs: start, execute, cancel, resume, and report progress (issue 10).

``start`` is the one entry point for every pipeline (the ``draft`` command, the API and the runs
page call it). Every pipeline of ``annotator.drafts.pipelines`` (``templates``, with no model,
``llm``, one prompt, and the multi-stage ones) is run by one job task per run (``drafts.run``) on
the one run engine (``annotator.inference.runs``),
which works the run's videos on twice as many threads as its servers allow (the largest
concurrency; at most ``DRAFT_RUN_MAX_THREADS``), each video through all its stages: while some
threads sample frames with ffmpeg, the others keep the server's slots (which bound the requests in
flight) busy. After ``DRAFT_RUN_SLICE_S`` seconds the task queues itself to go on. This module
gives the engine one video's work (``DraftRuns.work``).

A video's job is written in one transaction when all its stages succeeded, so a failed or
cancelled video writes nothing. ``resume`` puts failed and cancelled videos back in the queue;
stages that had already succeeded are answered from the call cache, so the run goes on from the
stage that failed and pays only for what is new.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce

from annotator import jobs
from annotator.drafts import services
from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.pipelines import PIPELINES, JobContext, PipelineDef
from annotator.errors import Conflict, Invalid
from annotator.inference import engine
from annotator.inference import runs as inference_runs
from annotator.inference.models import ModelCall, ModelServer
from annotator.projects.models import Project
from annotator.qa.models import QAType

log = logging.getLogger(__name__)

QA_TYPE_SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")


@dataclass(frozen=True)
class Launch:
    """What ``start`` did: the run (None when no video needed work), jobs queued, videos left out
    by reason."""

    run: DraftRun | None
    queued: int
    skipped: dict[str, int]


def resolve_servers(
    project: Project, pipeline: PipelineDef, server: str, stage_servers: dict[str, str]
) -> dict[str, dict]:
    """Stage -> server snapshot for ``pipeline``: ``stage_servers[stage]`` or else ``server``.
    Raises Invalid naming the stage that has no server, an unknown stage, or an unknown server."""
    unknown = sorted(set(stage_servers) - set(pipeline.stages))
    if unknown:
        raise Invalid(
            f"pipeline {pipeline.name} has no stage {', '.join(unknown)}; its stages are "
            f"{', '.join(pipeline.stages) or 'none'}",
            errors={"stage_servers": "unknown stage"},
        )
    by_name = {s.name: s for s in ModelServer.objects.filter(project=project)}
    out = {}
    for stage in pipeline.stages:
        name = stage_servers.get(stage) or server
        if not name:
            raise Invalid(
                f"stage {stage} of pipeline {pipeline.name} needs a model server: pass --server NAME "
                f"(or --stage-server {stage}=NAME)",
                errors={"server": "required"},
            )
        if name not in by_name:
            known = ", ".join(sorted(by_name)) or "none yet: add one with the model_server command"
            raise Invalid(
                f"project {project.slug} has no model server {name!r} (known: {known})", errors={"server": "unknown"}
            )
        out[stage] = by_name[name].snapshot()
    return out


def start(
    project: Project,
    pipeline: str,
    *,
    server: str = "",
    stage_servers: dict[str, str] | None = None,
    params: dict | None = None,
    qa_type: str = "",
    user=None,
) -> Launch:
    """Start a run of ``pipeline`` over the project's videos and queue its one job on commit.

    ``qa_type`` defaults to the pipeline's ``default_qa_type``. Raises Invalid for an unknown
    pipeline, a stage without a server, an unknown server, a QA type that is not a slug, bad
    parameters (each message says what to pass), or, for a pipeline that creates a missing QA type
    (``creates_qa_type``, e.g. ``llm``) started by a person (``user``), a QA type the project does
    not have (only the command, run by an operator, may create one).
    """
    stage_servers, params = dict(stage_servers or {}), dict(params or {})
    definition = PIPELINES.get(pipeline)
    if definition is None:
        raise Invalid(
            f"unknown pipeline {pipeline!r}; choose one of {', '.join(sorted(PIPELINES))}",
            errors={"pipeline": "unknown"},
        )
    qa_type = qa_type or definition.default_qa_type
    if qa_type and not QA_TYPE_SLUG.fullmatch(qa_type):
        raise Invalid("the QA type is a slug: 1 to 64 letters, digits, - and _", errors={"qa_type": "not a slug"})
    if (
        definition.creates_qa_type
        and user is not None
        and not QAType.objects.filter(project=project, slug=qa_type).exists()
    ):
        # Only admins define QA types (QA types page, API); a run started by a person may not add one.
        raise Invalid(
            f"project {project.slug} has no QA type {qa_type!r}; an admin defines QA types on the QA types page",
            errors={"qa_type": "unknown"},
        )
    servers = resolve_servers(project, definition, server, stage_servers)
    if qa_type:
        params["qa_type"] = qa_type
    # One transaction from the parameters' check on: ``clean_params`` may write (egonight applies
    # its QA-type preset), and a refused start, or one with no video to draft, writes nothing.
    with transaction.atomic():
        params = definition.clean_params(project, params)
        run = DraftRun(
            project=project,
            pipeline=pipeline,
            servers=servers,
            params=params,
            created_by=user,
            qa_type=params.get("qa_type", ""),
            model=", ".join(sorted({s["model"] for s in servers.values()}))[:200],
            prompt_version=definition.prompt_version
            or ", ".join(f"{s}:{engine.STAGES[s].prompt_version}" for s in definition.stages if s in engine.STAGES)[
                :300
            ]
            or pipeline,
        )
        videos, skipped = definition.select(run)
        if not videos:
            transaction.set_rollback(True)
            return Launch(None, 0, skipped)
        run.save()
        DraftJob.objects.bulk_create([DraftJob(run=run, video=v) for v in videos])
        jobs.enqueue("drafts.run", run.pk)
    return Launch(run, len(videos), skipped)


# ----------------------------------------------------------------------------- executing a run


class DraftRuns(inference_runs.RunEngine):
    """Drafting runs on the one run engine (``annotator.inference.runs``): the items are the
    run's videos (``DraftJob``), each worked through all its pipeline's stages in its thread."""

    run_model, item_model, item_run = DraftRun, DraftJob, "run"
    task, noun, thread_prefix = "drafts.run", "run", "run"
    threads_per_slot = 2  # while some threads sample frames with ffmpeg, the others keep the slots busy

    def endpoints(self, run: DraftRun) -> dict[str, engine.Endpoint]:
        return {stage: engine.Endpoint.from_snapshot(snap) for stage, snap in run.servers.items()}

    def work(self, run: DraftRun, endpoints: dict, job_id: int, cancelled) -> str:
        """One video's job: its pipeline's stages, then its drafts saved in one transaction
        (``services.save_drafts``); a cancelled, failed or unusable video writes nothing but its
        status, failed stage and reason."""
        definition = PIPELINES[run.pipeline]
        job = DraftJob.objects.select_related("video", "run__project").get(pk=job_id)
        ctx = JobContext(run, job, endpoints, cancelled)
        try:
            result = definition.work(ctx)
            services.save_drafts(job, result.specs, definition.actor(run), commit=result.commit, summary=result.summary)
            DraftJob.objects.filter(pk=job_id).update(stage="")
            return DraftJob.Status.DONE
        except engine.RunCancelled:
            DraftJob.objects.filter(pk=job_id).update(status=DraftJob.Status.CANCELLED)
            return DraftJob.Status.CANCELLED
        except engine.StageFailed as exc:
            DraftJob.objects.filter(pk=job_id).update(status=DraftJob.Status.FAILED, stage=exc.stage, error=exc.reason)
            return DraftJob.Status.FAILED
        except Invalid as exc:  # the video's own input cannot be used (e.g. no annotations to check against)
            DraftJob.objects.filter(pk=job_id).update(status=DraftJob.Status.FAILED, error=str(exc))
            return DraftJob.Status.FAILED


ENGINE = DraftRuns()


def execute(run_id: int) -> str:
    """Work the queued videos of run ``run_id`` for up to ``DRAFT_RUN_SLICE_S`` seconds, on
    threads; then queue the run again if videos remain, else settle its status. Returns
    "done", "failed", "cancelled", "continued" or "gone" (``inference.runs.RunEngine.execute``)."""
    return ENGINE.execute(run_id)


def settle(run_id: int) -> str:
    """Settle a run after a slice: cancelled stays cancelled (queued videos become cancelled);
    videos left queued queue the run again ("continued"); else done, or failed if any video failed."""
    return ENGINE.settle(run_id)


def mark_failed(run_id: int, reason: str) -> None:
    """The run's task gave up (a worker died on it every time): fail the run with ``reason``."""
    ENGINE.mark_failed(run_id, reason)


# ----------------------------------------------------------------------------- cancel and resume


def cancel(run: DraftRun) -> DraftRun:
    """Cancel a queued or running run: videos not started are cancelled at once, videos in flight
    stop before their next model call and write nothing. Raises Conflict for a finished run."""
    return ENGINE.cancel(run)


def resume(run: DraftRun) -> int:
    """Queue a failed or cancelled run's failed and cancelled videos again; returns how many.
    Stages that succeeded before are answered from the cache. Raises Conflict for a run that is
    queued, running or done with nothing to redo."""
    with transaction.atomic():
        run = DraftRun.objects.select_for_update().get(pk=run.pk)
        if run.status not in (DraftRun.Status.FAILED, DraftRun.Status.CANCELLED):
            raise Conflict(f"run {run.pk} is {run.status}; only a failed or cancelled run can be resumed")
        redo = list(
            run.jobs.filter(status__in=[DraftJob.Status.FAILED, DraftJob.Status.CANCELLED]).values_list("id", flat=True)
        )
        if not redo:
            raise Conflict(f"run {run.pk} has no failed or cancelled video to resume")
        DraftJob.objects.filter(pk__in=redo).update(status=DraftJob.Status.QUEUED)
        run.status, run.finished_at, run.error = DraftRun.Status.QUEUED, None, ""
        run.save(update_fields=["status", "finished_at", "error"])
        jobs.enqueue("drafts.run", run.pk)
    return len(redo)


# ----------------------------------------------------------------------------- progress


def progress(run: DraftRun, *, failures: int = 50) -> dict:
    """A run's state for the command, the API and the page::

        {"run": id, "pipeline": str, "status": str, "servers": {stage: {server, model, base_url}},
         "videos": {"total", "queued", "running", "done", "failed", "cancelled"}, "drafts": int,
         "summary": {name: count summed over videos},
         "calls": {stage: {"calls", "errors", "cache_hits", "prompt_tokens", "completion_tokens",
                           "cost_usd", "latency_ms_mean"}},
         "cost_usd": float, "failures": [{"video", "stage", "error"}], "created_at", "finished_at"}

    ``failures`` bounds the failed videos listed (newest first).
    """
    counts = dict(run.jobs.values_list("status").annotate(n=Count("id")))
    videos = {s: counts.get(s, 0) for s in DraftJob.Status.values}
    videos["total"] = sum(counts.values())
    summary: dict[str, int] = {}
    for row in run.jobs.exclude(summary={}).values_list("summary", flat=True):
        for key, value in row.items():
            if isinstance(value, (int, float)):
                summary[key] = summary.get(key, 0) + value
    calls = {}
    rows = (
        ModelCall.objects.filter(job__run=run)
        .values("stage")
        .annotate(
            calls=Count("id"),
            errors=Count("id", filter=~Q(error="")),
            cache_hits=Count("id", filter=Q(cached_from__isnull=False)),
            prompt_tokens=Coalesce(Sum("prompt_tokens"), 0),
            completion_tokens=Coalesce(Sum("completion_tokens"), 0),
            cost=Sum("cost_usd"),
            latency=Sum("latency_ms", filter=Q(cached_from__isnull=True)),
            requests=Count("id", filter=Q(cached_from__isnull=True)),
        )
    )
    for row in rows.order_by("stage"):
        calls[row["stage"] or "llm"] = {
            "calls": row["calls"],
            "errors": row["errors"],
            "cache_hits": row["cache_hits"],
            "prompt_tokens": row["prompt_tokens"],
            "completion_tokens": row["completion_tokens"],
            "cost_usd": round(row["cost"] or 0.0, 6),
            "latency_ms_mean": round((row["latency"] or 0) / row["requests"]) if row["requests"] else None,
        }
    failed = run.jobs.filter(status=DraftJob.Status.FAILED).select_related("video").order_by("-updated_at")[:failures]
    return {
        "run": run.pk,
        "pipeline": run.pipeline,
        "status": run.status,
        "error": run.error,
        "servers": {
            stage: {k: snap.get(k) for k in ("server", "model", "base_url")} for stage, snap in run.servers.items()
        },
        "params": run.params,
        "videos": videos,
        "drafts": run.jobs.aggregate(n=Coalesce(Sum("n_drafts"), 0))["n"],
        "summary": summary,
        "calls": calls,
        "cost_usd": round(sum(c["cost_usd"] for c in calls.values()), 6),
        "failures": [{"video": j.video.filename, "stage": j.stage, "error": j.error} for j in failed],
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }
