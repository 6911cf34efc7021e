"""Celery tasks of human-baseline studies, run through job rows (``annotator.jobs``)."""

from celery import shared_task

from annotator import jobs
from annotator.jobs import job_task
from annotator.studies import links, services


@job_task("studies.score", time_limit_s=600, max_deliveries=3)
def score_study(study_id: int) -> str:
    """Score the study's answered trials and imported predictions not scored yet (idempotent)."""
    return f"scored {services.score_pending(study_id)}"


@job_task("studies.build", time_limit_s=3600, max_deliveries=2, on_give_up=services.mark_build_failed)
def build_study(study_id: int) -> str:
    """Build the items of a study created through the API (``services.build_study``)."""
    return services.build_study(study_id)


@job_task("studies.release_idle", time_limit_s=600, max_deliveries=3)
def release_idle() -> str:
    """Time out idle link participants and release their unanswered trials (``links.release_idle``;
    idempotent: a participant already timed out is not touched again)."""
    return f"timed out {links.release_idle()}"


@shared_task(name="studies.release_idle_schedule", time_limit=60, soft_time_limit=50, ignore_result=True)
def release_idle_schedule() -> int | None:
    """Celery beat, every ``STUDY_RELEASE_EVERY_S``: queue the ``studies.release_idle`` job (its row
    first; a job already queued is not queued twice)."""
    return jobs.enqueue("studies.release_idle")
