"""Celery tasks of human-baseline studies, run through job rows (``annotator.jobs``)."""

from annotator.jobs import job_task
from annotator.studies import services


@job_task("studies.score", time_limit_s=600, max_deliveries=3)
def score_study(study_id: int) -> str:
    """Score the study's answered trials and imported predictions not scored yet (idempotent)."""
    return f"scored {services.score_pending(study_id)}"
