"""drafts.0007: llm runs made before ``llm`` was an ordinary pipeline get the server of their one
stage, and video jobs that waited on the retired ``drafts.llm`` task are handed to the run's one
``drafts.run`` job; no row is lost."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotator.core.models import Job
from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.runs import ENGINE
from tests.migrating import at_state

BEFORE = [("drafts", "0006_templates_runs_on_the_run_engine")]


@pytest.mark.django_db(transaction=True)
def test_old_llm_runs_get_their_server_and_waiting_jobs_one_run_job(monkeypatch):
    monkeypatch.delenv("LLM_API_KEY", raising=False)
    with at_state(BEFORE) as old:
        project = old.get_model("projects", "Project").objects.create(slug="llm-move", name="L")
        Video = old.get_model("media", "Video")
        OldRun, OldJob = old.get_model("drafts", "DraftRun"), old.get_model("drafts", "DraftJob")
        OldCoreJob = old.get_model("core", "Job")
        # As services.start_run stored them: the global endpoint, or a server's snapshot merged in.
        plain = OldRun.objects.create(
            project=project,
            pipeline="llm",
            qa_type="open_ended",
            model="local-model",
            prompt_version="llm-qa-v1",
            status="running",
            params={"base_url": "http://127.0.0.1:8001/v1", "frames": 6},
        )
        named = OldRun.objects.create(
            project=project,
            pipeline="llm",
            qa_type="counting",
            model="qwen-vl",
            prompt_version="llm-qa-v1",
            status="done",
            params={
                "base_url": "http://vlm.lan/v1",
                "frames": 6,
                "server": "vlm",
                "server_id": 7,
                "model": "qwen-vl",
                "key_env": "VLM_API_KEY",
                "concurrency": 2,
                "timeout_s": 60.0,
                "price_prompt_per_mtok": 0.5,
                "price_completion_per_mtok": 1.5,
            },
        )
        videos = [
            Video.objects.create(project=project, sha256=f"{i:064d}", filename=f"v{i}.mp4", status="ready")
            for i in range(3)
        ]
        jobs = [
            OldJob.objects.create(run=plain, video=v, status=s) for v, s in zip(videos, ["done", "queued", "queued"])
        ]
        OldJob.objects.create(run=named, video=videos[0], status="done")
        now = timezone.now()
        for job, status in zip(jobs, ["done", "queued", "running"]):
            OldCoreJob.objects.create(
                task="drafts.llm", key=f"drafts.llm:{job.pk}", args=[job.pk], status=status, due_at=now
            )
    assert DraftRun.objects.get(pk=plain.pk).servers == {
        "llm": {"server": "", "base_url": "http://127.0.0.1:8001/v1", "model": "local-model", "key_env": ""}
    }
    assert DraftRun.objects.get(pk=named.pk).servers == {
        "llm": {
            "server": "vlm",
            "server_id": 7,
            "base_url": "http://vlm.lan/v1",
            "model": "qwen-vl",
            "key_env": "VLM_API_KEY",
            "concurrency": 2,
            "timeout_s": 60.0,
            "price_prompt_per_mtok": 0.5,
            "price_completion_per_mtok": 1.5,
        }
    }
    assert list(Job.objects.filter(task="drafts.llm").order_by("id").values_list("status", "result")) == [
        ("done", ""),
        ("done", f"handed to drafts.run:{plain.pk}"),
        ("done", f"handed to drafts.run:{plain.pk}"),
    ]
    assert list(Job.objects.filter(task="drafts.run").values_list("key", "args", "status")) == [
        (f"drafts.run:{plain.pk}", [plain.pk], "queued")
    ]
    assert list(DraftJob.objects.filter(run_id=plain.pk).order_by("id").values_list("status", flat=True)) == [
        "done",
        "queued",
        "queued",
    ]
    # The run engine reads the handed-over run: one endpoint for the llm stage, the old URL and model.
    endpoint = ENGINE.endpoints(DraftRun.objects.get(pk=plain.pk))["llm"]
    assert (endpoint.base_url, endpoint.model, endpoint.api_key()) == (
        "http://127.0.0.1:8001/v1",
        "local-model",
        "no-key",
    )
