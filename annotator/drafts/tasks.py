"""Celery tasks of drafting, run through job rows (``annotator.jobs``)."""

from django.conf import settings

from annotator.drafts import runs, services
from annotator.drafts.models import DraftJob
from annotator.jobs import RetryLater, job_task


def _settle_job_run(draft_job_id: int) -> None:
    run_id = DraftJob.objects.filter(pk=draft_job_id).values_list("run_id", flat=True).first()
    if run_id is not None:
        runs.settle_old_style(run_id)


def _give_up(draft_job_id: int, reason: str) -> None:
    services.mark_job_failed(draft_job_id, reason)
    _settle_job_run(draft_job_id)


# One attempt samples frames and waits on the model for up to LLM_WINDOWS calls.
@job_task("drafts.llm", time_limit_s=int(settings.LLM_TIMEOUT_S * settings.LLM_WINDOWS) + 600,
          max_deliveries=settings.LLM_MAX_ATTEMPTS + 2, on_give_up=_give_up)
def draft_llm(draft_job_id: int) -> str:
    """Ask the model server for drafts for one video's draft job.

    A malformed answer, timeout or refusal is recorded on the draft job and retried with exponential
    backoff (2, 4, 8, ... s, capped at 60 s) until ``LLM_MAX_ATTEMPTS`` calls were made; then the
    draft job is marked failed. Nothing is half-written: drafts are saved only from a fully valid answer.
    """
    outcome = services.run_llm_job(draft_job_id)
    if outcome == "retry":
        attempts = services.attempts_of(draft_job_id)
        raise RetryLater("the model's answer was not usable; see the draft job's calls", min(60, 2 ** attempts))
    _settle_job_run(draft_job_id)
    return outcome


# A slice works for DRAFT_RUN_SLICE_S, plus the longest call in flight (all attempts with backoff).
@job_task("drafts.run", time_limit_s=int(settings.DRAFT_RUN_SLICE_S + settings.LLM_MAX_ATTEMPTS
                                         * (settings.LLM_TIMEOUT_S + settings.LLM_BACKOFF_CAP_S) + 600),
          max_deliveries=3, on_give_up=runs.mark_failed)
def draft_run(run_id: int) -> str:
    """Work a multi-stage pipeline run's videos for one slice (``annotator.drafts.runs.execute``)."""
    return runs.execute(run_id)
