"""Writes for machine drafts: launch an llm run, execute one video's job, save its drafts.

An llm run makes one DraftJob per ready video and queues one Celery task per job on commit. Jobs save
their drafts, QA pairs, the unit that serves them and a ``draft`` revision per pair in one
transaction, so a job either wrote everything or nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotator import jobs
from annotator.adapters import ffmpeg, llm
from annotator.drafts import llm as llm_format
from annotator.drafts.models import Draft, DraftJob, DraftRun, Pipeline
from annotator.drafts.templates import DraftSpec
from annotator.inference.engine import Endpoint, MissingKey
from annotator.inference.frames import FRAME_MAX_SIDE
from annotator.inference.models import ModelCall
from annotator.media.models import Video
from annotator.media.services import local_copy
from annotator.projects.models import Project
from annotator.qa import services as qa_services
from annotator.qa.models import QAPair

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class RunLaunch:
    """What ``start_run`` did: the run (None when no video needed drafting, so no empty run is
    recorded), how many jobs it queued, and videos it left out and why."""

    run: DraftRun | None
    queued: int
    skipped: dict[str, int]


def start_run(project: Project, pipeline: str, *, qa_type: str = "", model: str = "", params: dict | None = None) -> RunLaunch:
    """Create an ``llm`` run over the project's ready videos and queue one task per video on commit
    (``templates`` is a pipeline module now: ``annotator.drafts.pipelines.templates``).

    ``llm`` drafts every ready video and needs ``qa_type``. ``params`` of an llm run may hold a model server's snapshot (``ModelServer.snapshot``), whose base URL and
    key variable then replace the ``LLM_*`` settings.
    Raises ValueError for an unknown pipeline or a missing qa_type.
    """
    if pipeline != Pipeline.LLM:
        raise ValueError(f"pipeline {pipeline!r} is not a one-task-per-video pipeline; use annotator.drafts.runs.start")
    if not qa_type:
        raise ValueError("the llm pipeline needs a QA type")
    videos = list(Video.objects.filter(project=project))
    skipped = {"failed": 0, "still processing": 0}
    chosen = []
    for video in videos:
        if video.status == Video.Status.FAILED:
            skipped["failed"] += 1
        elif video.status == Video.Status.PROCESSING:
            skipped["still processing"] += 1
        else:
            chosen.append(video)
    skipped = {k: v for k, v in skipped.items() if v}
    if not chosen:
        return RunLaunch(run=None, queued=0, skipped=skipped)
    with transaction.atomic():
        qa_services.ensure_qa_type(project, qa_type)
        run = DraftRun.objects.create(
            project=project, pipeline=pipeline, qa_type=qa_type,
            model=model or settings.LLM_MODEL, prompt_version=llm_format.PROMPT_VERSION,
            status=DraftRun.Status.RUNNING, started_at=timezone.now(),
            params={"base_url": settings.LLM_BASE_URL, "frames": settings.LLM_FRAMES, **(params or {})},
        )
        draft_jobs = DraftJob.objects.bulk_create([DraftJob(run=run, video=v) for v in chosen])
        for draft_job in draft_jobs:
            jobs.enqueue("drafts.llm", draft_job.pk)  # rows now, messages on commit
    return RunLaunch(run=run, queued=len(draft_jobs), skipped=skipped)


def mark_job_failed(draft_job_id: int, reason: str) -> None:
    """Record a draft job that gave up (``reason`` in plain words); a done job is left as it is."""
    DraftJob.objects.filter(pk=draft_job_id, status=DraftJob.Status.QUEUED).update(status=DraftJob.Status.FAILED, error=reason)


def attempts_of(draft_job_id: int) -> int:
    """How many model attempts the draft job has made (0 if it is gone)."""
    return DraftJob.objects.filter(pk=draft_job_id).values_list("attempts", flat=True).first() or 0


def save_drafts(job: DraftJob, specs: list[DraftSpec], actor: str, *, commit=None, summary: dict | None = None) -> int:
    """Save ``specs`` as drafts of ``job`` with their QA pairs and one unit; mark the job done.

    Specs with a ``flag`` become model flags (``qa.services.flag_qa_pair``, source ``actor``):
    their unit is served first. ``commit(job)``, if given, runs last in the same transaction, and
    ``summary`` is stored on the job. Returns how many drafts were written (0 if the job was
    already done or cancelled: a redelivered task).
    """
    with transaction.atomic():
        job = DraftJob.objects.select_for_update().select_related("run", "video").get(pk=job.pk)
        if job.status in (DraftJob.Status.DONE, DraftJob.Status.CANCELLED):
            return 0
        drafts = Draft.objects.bulk_create([
            Draft(job=job, qa_type=s.qa_type, question=s.question, answer=s.answer, options=s.options,
                  answer_index=s.answer_index, clip_start_s=s.clip_start_s, clip_end_s=s.clip_end_s,
                  source_key=s.source_key, params=s.params)
            for s in specs
        ])
        if drafts:
            qa_services.open_units_for_drafts(job.run.project, job.video, drafts, actor=actor)
        flags = {d.pk: s.flag for d, s in zip(drafts, specs) if s.flag}
        for pair_id, draft_id in QAPair.objects.filter(draft_id__in=flags).values_list("id", "draft_id"):
            qa_services.flag_qa_pair(pair_id, reason=flags[draft_id], source=actor)
        if commit is not None:
            commit(job)
        job.status = DraftJob.Status.DONE
        job.n_drafts = len(drafts)
        job.error = ""
        job.summary = summary or job.summary
        job.save(update_fields=["status", "n_drafts", "error", "summary", "updated_at"])
    return len(drafts)


def run_llm_job(job_id: int) -> str:
    """One attempt at drafting a video with the model server.

    Steps: choose the clips the QA type is drafted on (``llm.clips_for``: ``LLM_WINDOWS`` windows of
    its ``window_s`` for a window clip policy, else the whole video); for each clip sample
    ``LLM_FRAMES`` frames evenly with ffmpeg, send them with the prompt, record the call (request,
    raw output, tokens, latency, error) and parse. When every clip got a valid answer, save all the
    drafts (each with its clip) and return "done". On a malformed answer, error or refusal for any
    clip, nothing is saved: return "retry" while attempts < ``LLM_MAX_ATTEMPTS``, else mark the job
    failed and return "failed".
    """
    job = DraftJob.objects.select_related("run__project", "video").filter(pk=job_id).first()
    if job is None or job.status != DraftJob.Status.QUEUED:
        return "gone"
    run, video = job.run, job.video
    DraftJob.objects.filter(pk=job.pk).update(attempts=F("attempts") + 1)
    job.refresh_from_db(fields=["attempts"])
    qa_type = qa_services.ensure_qa_type(run.project, run.qa_type)
    clips = llm_format.clips_for(qa_type.clip_policy, qa_type.window_s, video.duration_s, settings.LLM_WINDOWS)
    specs: list[DraftSpec] = []
    with local_copy(video.rendition.name or video.original.name) as src:
        for clip in clips:
            times = ffmpeg.sample_times(clip[0], clip[1], settings.LLM_FRAMES)
            text = llm_format.user_text(qa_type.name, qa_type.guidelines, times, video.duration_s, n_pairs=5, clip=clip)
            call = ModelCall(job=job, project_id=run.project_id, attempt=job.attempts, model=run.model, stage="llm",
                             prompt_version=run.prompt_version,
                             request={"system": llm_format.SYSTEM_PROMPT, "text": text, "frame_times_s": times,
                                      "clip_s": list(clip), "prompt_version": run.prompt_version})
            try:
                frames = ffmpeg.sample_frames(src, times, max_side=FRAME_MAX_SIDE)
                api_key = Endpoint.from_snapshot(run.params).api_key() if run.params.get("server") else settings.LLM_API_KEY
                reply = llm.chat(
                    base_url=run.params.get("base_url", settings.LLM_BASE_URL), api_key=api_key,
                    model=run.model, system=llm_format.SYSTEM_PROMPT,
                    content=[{"type": "text", "text": text}, *map(llm.image_part, frames)],
                    timeout_s=settings.LLM_TIMEOUT_S,
                )
                call.raw_output, call.latency_ms = reply.text, reply.latency_ms
                call.prompt_tokens, call.completion_tokens = reply.prompt_tokens, reply.completion_tokens
                pairs = llm_format.parse_answer(reply.text)
            except (ffmpeg.MediaError, llm.ModelCallError, llm_format.MalformedModelOutput, MissingKey) as exc:
                call.error = f"{type(exc).__name__}: {exc}"
                call.save()
                final = job.attempts >= settings.LLM_MAX_ATTEMPTS
                DraftJob.objects.filter(pk=job.pk).update(
                    error=call.error, status=DraftJob.Status.FAILED if final else DraftJob.Status.QUEUED
                )
                log.warning("llm job %s attempt %s: %s", job.pk, job.attempts, call.error)
                return "failed" if final else "retry"
            call.save()
            specs += [DraftSpec(run.qa_type, q, a, clip[0], clip[1], source_key=f"call-{call.pk}-{i}",
                                params={"model_call": call.pk}) for i, (q, a) in enumerate(pairs)]
    save_drafts(job, specs, actor=f"llm/{run.model}/{run.prompt_version}")
    return "done"
