"""Celery tasks of agreement: one scope's computation (a job row first, ``annotator.jobs``) and the
periodic scheduler (Celery beat, every ``AGREEMENT_SCHEDULE_EVERY_S``)."""

from celery import shared_task

from annotator.agreement import services
from annotator.jobs import job_task


@job_task("agreement.compute", time_limit_s=1800, max_deliveries=2)
def compute_scope(scope_id: int, trigger: str = "schedule") -> str:
    """Measure one scope and store its reports (``services.compute``)."""
    return services.compute_job(scope_id, trigger)


@job_task("agreement.overlap_consensus", time_limit_s=300, max_deliveries=3)
def overlap_consensus(unit_id: int) -> str:
    """Send the QA pairs of a unit its blind passes disagree on to the consensus round
    (``services.send_overlap_disagreements``)."""
    return f"{len(services.send_overlap_disagreements(unit_id))} QA pairs sent to the consensus round"


@shared_task(name="agreement.schedule", time_limit=300, soft_time_limit=280, ignore_result=True)
def schedule() -> int:
    """Queue a computation of every scope with new responses since its last report."""
    return len(services.schedule())
