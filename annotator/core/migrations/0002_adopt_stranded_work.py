"""Work queued before job rows existed gets its row, so the reconciler sends it: videos left
``processing`` and draft jobs left ``queued`` (their messages may have been lost long ago)."""

from django.db import migrations
from django.utils import timezone


def adopt(apps, schema_editor):
    Job = apps.get_model("core", "Job")
    Video = apps.get_model("media", "Video")
    DraftJob = apps.get_model("drafts", "DraftJob")
    now = timezone.now()
    rows = [
        Job(task="media.transcode", key=f"media.transcode:{pk}", args=[pk], max_deliveries=3, due_at=now)
        for pk in Video.objects.filter(status="processing").values_list("pk", flat=True)
    ]
    for pk, pipeline in DraftJob.objects.filter(status="queued").values_list("pk", "run__pipeline"):
        task = "drafts.templates" if pipeline == "templates" else "drafts.llm"
        rows.append(Job(task=task, key=f"{task}:{pk}", args=[pk], max_deliveries=6, due_at=now))
    Job.objects.bulk_create(rows, ignore_conflicts=True)


class Migration(migrations.Migration):
    dependencies = [("core", "0001_jobs"), ("media", "0001_initial"), ("drafts", "0001_initial")]

    operations = [migrations.RunPython(adopt, migrations.RunPython.noop)]
