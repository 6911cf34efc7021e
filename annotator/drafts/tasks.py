"""Celery tasks of drafting, run through job rows (``annotator.jobs``)."""

from django.conf import settings

from annotator.drafts import runs
from annotator.jobs import job_task


# A slice works for DRAFT_RUN_SLICE_S, plus the longest call in flight (all attempts with backoff).
@job_task(
    "drafts.run",
    time_limit_s=int(
        settings.DRAFT_RUN_SLICE_S
        + settings.LLM_MAX_ATTEMPTS * (settings.LLM_TIMEOUT_S + settings.LLM_BACKOFF_CAP_S)
        + 600
    ),
    max_deliveries=3,
    on_give_up=runs.mark_failed,
)
def draft_run(run_id: int) -> str:
    """Work a pipeline run's videos for one slice (``annotator.drafts.runs.execute``)."""
    return runs.execute(run_id)
