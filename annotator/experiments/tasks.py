"""Celery tasks of ordering experiments, run through job rows (``annotator.jobs``)."""

from annotator.experiments import services
from annotator.jobs import job_task


@job_task("experiments.score", time_limit_s=600, max_deliveries=3)
def score_ordering(experiment_id: int) -> str:
    """Score the experiment's answered trials and imported predictions not scored yet (idempotent)."""
    return f"scored {services.score_pending(experiment_id)}"
