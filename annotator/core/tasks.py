"""The periodic reconciler of job rows (Celery beat runs it every ``JOBS_RECONCILE_EVERY_S``)."""

from celery import shared_task

from annotator import jobs


@shared_task(name="core.reconcile_jobs", time_limit=300, soft_time_limit=280, ignore_result=True)
def reconcile_jobs() -> dict:
    """Re-send stale jobs and fail those out of deliveries (``annotator.jobs.reconcile``)."""
    return vars(jobs.reconcile())
