"""drafts.0006: a templates run whose video jobs waited on the retired ``drafts.templates`` task is
handed to the run engine's one ``drafts.run`` job, and no row is lost."""

from __future__ import annotations

import pytest

from annotator.core.models import Job
from annotator.drafts.models import DraftJob, DraftRun
from tests.migrating import at_state

BEFORE = [("drafts", "0005_servers_and_calls_to_inference")]


@pytest.mark.django_db(transaction=True)
def test_waiting_template_jobs_are_handed_to_one_run_job_per_run():
    with at_state(BEFORE) as old:
        project = old.get_model("projects", "Project").objects.create(slug="tpl-move", name="T")
        Video = old.get_model("media", "Video")
        OldRun, OldJob = old.get_model("drafts", "DraftRun"), old.get_model("drafts", "DraftJob")
        OldCoreJob = old.get_model("core", "Job")
        run = OldRun.objects.create(
            project=project, pipeline="templates", prompt_version="templates-v1", status="running"
        )
        jobs = [
            OldJob.objects.create(
                run=run,
                video=Video.objects.create(project=project, sha256=f"{i:064d}", filename=f"v{i}.mp4", status="ready"),
                status=status,
            )
            for i, status in enumerate(["done", "queued", "queued"])
        ]
        from django.utils import timezone

        now = timezone.now()
        for job, status in zip(jobs, ["done", "queued", "running"]):
            OldCoreJob.objects.create(
                task="drafts.templates", key=f"drafts.templates:{job.pk}", args=[job.pk], status=status, due_at=now
            )
    assert list(Job.objects.filter(task="drafts.templates").order_by("id").values_list("status", "result")) == [
        ("done", ""),
        ("done", f"handed to drafts.run:{run.pk}"),
        ("done", f"handed to drafts.run:{run.pk}"),
    ]
    assert list(Job.objects.filter(task="drafts.run").values_list("key", "args", "status")) == [
        (f"drafts.run:{run.pk}", [run.pk], "queued")
    ]
    assert list(DraftJob.objects.filter(run_id=run.pk).order_by("id").values_list("status", flat=True)) == [
        "done",
        "queued",
        "queued",
    ]
    assert DraftRun.objects.get(pk=run.pk).status == "running"
