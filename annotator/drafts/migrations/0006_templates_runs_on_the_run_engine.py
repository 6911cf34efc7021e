"""``templates`` is an ordinary pipeline now (issue 18): its videos are worked by the run's one job
``drafts.run`` instead of one ``drafts.templates`` job per video, a task that no longer exists.

Every row is kept. For each templates run with a video job still waiting (its ``drafts.templates``
job row queued or running), one ``drafts.run`` job row is queued for the run (the reconciler sends
it); the old job rows are closed as done, their ``result`` naming the job that took their work.
Draft runs, draft jobs and drafts are not touched. Backwards: nothing to undo (the rows stay).
"""

from django.db import migrations
from django.utils import timezone


def hand_over_task(apps, task: str) -> None:
    """Close the waiting job rows of the retired per-video ``task`` (its one argument a draft job's
    id), naming the ``drafts.run`` job row queued for each of their runs (drafts.0007 uses it too)."""
    Job = apps.get_model("core", "Job")
    DraftJob = apps.get_model("drafts", "DraftJob")
    now = timezone.now()
    waiting = list(Job.objects.filter(task=task, status__in=["queued", "running"]))
    if not waiting:
        return
    run_of = dict(DraftJob.objects.filter(pk__in=[j.args[0] for j in waiting if j.args]).values_list("pk", "run_id"))
    runs = sorted({run_of[j.args[0]] for j in waiting if j.args and j.args[0] in run_of})
    Job.objects.bulk_create(
        [Job(task="drafts.run", key=f"drafts.run:{r}", args=[r], max_deliveries=3, due_at=now) for r in runs],
        ignore_conflicts=True,
    )
    for job in waiting:
        run = run_of.get(job.args[0]) if job.args else None
        job.status, job.finished_at = "done", now
        job.result = f"handed to drafts.run:{run}" if run else "its draft job is gone"
        job.save(update_fields=["status", "finished_at", "result", "updated_at"])


def hand_over(apps, schema_editor):
    hand_over_task(apps, "drafts.templates")


class Migration(migrations.Migration):
    dependencies = [("core", "0002_adopt_stranded_work"), ("drafts", "0005_servers_and_calls_to_inference")]

    operations = [migrations.RunPython(hand_over, migrations.RunPython.noop)]
