"""Celery tasks of drafting, run through job rows (``annotator.jobs``)."""

from django.conf import settings

from annotator.drafts import services
from annotator.jobs import RetryLater, job_task


@job_task("drafts.templates", time_limit_s=600, max_deliveries=3, on_give_up=services.mark_job_failed)
def draft_templates(draft_job_id: int) -> str:
    """Write annotation-derived template drafts for one video's draft job (no model needed)."""
    return services.run_templates_job(draft_job_id)


# One attempt samples frames and waits on the model for up to LLM_WINDOWS calls.
@job_task("drafts.llm", time_limit_s=int(settings.LLM_TIMEOUT_S * settings.LLM_WINDOWS) + 600,
          max_deliveries=settings.LLM_MAX_ATTEMPTS + 2, on_give_up=services.mark_job_failed)
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
    return outcome
