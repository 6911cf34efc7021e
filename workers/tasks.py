"""Celery tasks. Each takes primary keys, re-fetches, and calls one service.

Tasks are idempotent: the services return early when the row is gone or already done, and
unique constraints turn a redelivered message into a no-op.
"""

from celery import shared_task
from celery.utils.log import get_task_logger

from annotator.drafts import services as drafts
from annotator.media import services as media

log = get_task_logger(__name__)


@shared_task(
    bind=True, autoretry_for=(OSError,), retry_backoff=2, retry_backoff_max=120, retry_jitter=True, max_retries=4,
)
def transcode_video(self, video_id: int) -> str:
    """Transcode one video (see ``media.services.transcode``); storage errors retry with backoff."""
    try:
        video = media.transcode(video_id)
    except OSError as exc:
        if self.request.retries >= self.max_retries:
            media.mark_transcode_failed(video_id, f"storage error after {self.max_retries + 1} attempts: {exc}")
            return "failed"
        raise
    return video.status if video else "gone"


@shared_task(bind=True, autoretry_for=(OSError,), retry_backoff=2, retry_backoff_max=120, max_retries=4)
def derive_night(self, video_id: int, level: str) -> str:
    """Render and ingest the synthetic night version of a day video (``media.services.derive_night``);
    storage errors retry with backoff, a render failure is reported as the task's result."""
    from annotator.adapters.ffmpeg import MediaError

    try:
        video = media.derive_night(video_id, level)
    except MediaError as exc:
        log.warning("night rendition of video %s at %s failed: %s", video_id, level, exc)
        return f"failed: {exc}"
    return "gone" if video is None else f"video {video.pk}"


@shared_task
def draft_templates(job_id: int) -> str:
    """Write annotation-derived template drafts for one video job (no model needed)."""
    return drafts.run_templates_job(job_id)


@shared_task(bind=True, max_retries=None)
def draft_llm(self, job_id: int) -> str:
    """Ask the model server for drafts for one video job.

    A malformed answer, timeout or refusal is recorded on the job and retried with exponential
    backoff (2, 4, 8, ... s, capped at 60 s) until ``LLM_MAX_ATTEMPTS`` calls were made; then the
    job is marked failed. Nothing is half-written: drafts are saved only from a fully valid answer.
    """
    outcome = drafts.run_llm_job(job_id)
    if outcome == "retry":
        raise self.retry(countdown=min(60, 2 ** max(self.request.retries, 0) * 2))
    return outcome


@shared_task(bind=True, autoretry_for=(OSError,), retry_backoff=2, max_retries=4)
def score_ordering(self, experiment_id: int) -> int:
    """Score the experiment's answered trials and imported predictions not scored yet (idempotent)."""
    from annotator.experiments.services import score_pending

    return score_pending(experiment_id)
