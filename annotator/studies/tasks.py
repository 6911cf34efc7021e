"""Celery tasks of human-baseline studies, run through job rows (``annotator.jobs``)."""

from annotator.jobs import job_task
from annotator.studies import services


@job_task("studies.score", time_limit_s=600, max_deliveries=3)
def score_study(study_id: int) -> str:
    """Score the study's answered trials and imported predictions not scored yet (idempotent)."""
    return f"scored {services.score_pending(study_id)}"


@job_task("studies.build", time_limit_s=3600, max_deliveries=2, on_give_up=services.mark_build_failed)
def build_study(study_id: int) -> str:
    """Build the items of a study created through the API (``services.build_study``)."""
    return services.build_study(study_id)
