"""Celery tasks of model evaluation, run through job rows (``annotator.jobs``)."""

from django.conf import settings

from annotator.evaluation import runs
from annotator.jobs import job_task


# A slice works for DRAFT_RUN_SLICE_S, plus the longest item in flight: the model's and the judge's
# calls, each with all their attempts and backoff.
@job_task(
    "evaluation.run",
    time_limit_s=int(
        settings.DRAFT_RUN_SLICE_S
        + 2 * settings.LLM_MAX_ATTEMPTS * (settings.LLM_TIMEOUT_S + settings.LLM_BACKOFF_CAP_S)
        + 600
    ),
    max_deliveries=3,
    on_give_up=runs.mark_failed,
)
def evaluation_run(evaluation_id: int) -> str:
    """Work an evaluation's items for one slice (``annotator.evaluation.runs.execute``)."""
    return runs.execute(evaluation_id)


@job_task("evaluation.judge_study", time_limit_s=int(4 * 3600), max_deliveries=3)
def evaluation_judge_study(study_id: int, server: str, rubric: str) -> str:
    """Judge a study's open answers, people's and models' (``annotator.evaluation.judging``); the
    job's result is the JSON of what was judged and what failed."""
    import json

    from annotator.evaluation import judging

    return json.dumps(judging.judge_study(study_id, server, rubric))
