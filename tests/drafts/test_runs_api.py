"""The runs API (issue 10, "Progress"): start, list, read, cancel and resume pipeline runs, and the
project's model servers; who may do what; bounds and plain-word refusals that change nothing; and
a run started through the API, worked by the real worker against the loopback model server."""

import hashlib
import json
import os
import subprocess
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from annotator.core.models import Job
from annotator.drafts.models import DraftJob, DraftRun
from annotator.inference.models import ModelCall, ModelServer
from annotator.media.models import Video
from annotator.projects.services import ensure_member, ensure_project, token_for
from annotator.qa.models import QAType
from tests.conftest import wait_for

SNAPSHOT = {
    "server": "gpt",
    "server_id": None,
    "base_url": "http://127.0.0.1:9/v1",
    "model": "fake-gpt",
    "key_env": "",
    "concurrency": 4,
    "timeout_s": 120.0,
    "price_prompt_per_mtok": 0.0,
    "price_completion_per_mtok": 0.0,
}


# ------------------------------------------------------------------------------ helpers (also the page tests')


def api(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


def member(project, role: str):
    return ensure_member(f"runs-{role}", role=role, project=project, password=f"pw-runs-{role}-1")[0]


def night_video(project, name: str, *, seconds: float = 3.0, stored: bool = False) -> Video:
    """A ready night video of ``project``; with ``stored``, a real ffmpeg clip (testsrc, ``seconds``
    long) saved as its rendition, so a pipeline can sample frames from it."""
    rendition, sha = "", hashlib.sha256(f"{project.slug}/{name}".encode()).hexdigest()
    if stored:
        path = os.path.join(default_storage.location, f"src-{name}")
        subprocess.run(
            [
                "ffmpeg",
                "-v",
                "error",
                "-y",
                "-f",
                "lavfi",
                "-i",
                f"testsrc=size=160x120:rate=10:duration={seconds}",
                "-c:v",
                "libx264",
                "-pix_fmt",
                "yuv420p",
                path,
            ],
            check=True,
        )
        with open(path, "rb") as fh:
            data = fh.read()
        os.unlink(path)
        sha = hashlib.sha256(data).hexdigest()
        rendition = default_storage.save(f"renditions/{sha[:16]}/{name}", ContentFile(data))
    return Video.objects.create(
        project=project,
        sha256=sha,
        filename=name,
        status=Video.Status.READY,
        duration_s=seconds,
        fps=10.0,
        width=160,
        height=120,
        rendition=rendition,
        illumination="night",
        domain="street",
    )


def made_run(
    project, *, statuses=(), pipeline="egonight", status="running", minutes_ago=0, calls=(), user=None
) -> DraftRun:
    """A run row of ``project`` made directly: one job per entry of ``statuses`` (job status, or
    (status, drafts, stage, error)), and ``calls`` (stage, error, cost, cached) on its first job."""
    run = DraftRun.objects.create(
        project=project,
        pipeline=pipeline,
        prompt_version="v",
        status=status,
        created_by=user,
        servers={s: {**SNAPSHOT} for s in ("caption", "questions", "answer")},
        params={"frames": 2, "questions": 3},
    )
    DraftRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    jobs = []
    for i, st in enumerate(statuses):
        st, drafts, stage, error = (st, 0, "", "") if isinstance(st, str) else st
        video = night_video(project, f"r{run.pk}-v{i}.mp4")
        jobs.append(DraftJob.objects.create(run=run, video=video, status=st, n_drafts=drafts, stage=stage, error=error))
    for stage, error, cost, cached in calls:
        source = (
            ModelCall.objects.filter(job=jobs[0], stage=stage, cached_from__isnull=True).first() if cached else None
        )
        ModelCall.objects.create(
            project=project,
            job=jobs[0],
            stage=stage,
            attempt=1,
            model="fake-gpt",
            request={},
            error=error,
            cost_usd=cost,
            cached_from=source,
            latency_ms=0 if cached else 500,
            prompt_tokens=None if cached else 100,
            completion_tokens=None if cached else 20,
            output=None if error else {"ok": 1},
        )
    run.refresh_from_db()
    return run


@pytest.fixture
def people(project):
    return {role: member(project, role) for role in ("admin", "researcher", "reviewer", "annotator")}


@pytest.fixture
def gpt(project):
    return ModelServer.objects.create(project=project, name="gpt", base_url="http://127.0.0.1:9/v1", model="fake-gpt")


def _nothing_started():
    assert DraftRun.objects.count() == 0 and DraftJob.objects.count() == 0
    assert not Job.objects.filter(task="drafts.run").exists()
    assert QAType.objects.count() == 0  # egonight's preset is applied only when a run starts


# ------------------------------------------------------------------------------ starting


@pytest.mark.django_db
def test_an_admin_starts_a_run_and_gets_its_report(project, people, gpt):
    night_video(project, "a.mp4")
    night_video(project, "b.mp4")
    res = api(people["admin"]).post(
        f"/api/projects/{project.slug}/runs/",
        {
            "pipeline": "egonight",
            "server": "gpt",
            "qa_type": "lighting_change",
            "params": {"frames": 2, "questions": 2},
        },
    )
    assert res.status_code == 201, res.content
    body = res.json()
    run = DraftRun.objects.get()
    assert body["run"] == run.pk and body["status"] == "queued" and body["pipeline"] == "egonight"
    assert body["queued"] == 2 and body["skipped"] == {}
    assert body["videos"] == {"total": 2, "queued": 2, "running": 0, "done": 0, "failed": 0, "cancelled": 0}
    assert body["servers"] == {
        s: {"server": "gpt", "model": "fake-gpt", "base_url": "http://127.0.0.1:9/v1"}
        for s in ("caption", "questions", "answer")
    }
    assert body["params"] == {"frames": 2, "questions": 2, "qa_type": "lighting_change", "preset_applied": True}
    assert body["calls"] == {} and body["failures"] == [] and body["failed_calls"] == [] and body["drafts"] == 0
    assert body["created_by"] == "runs-admin" and run.created_by == people["admin"]
    assert Job.objects.filter(task="drafts.run", args=[run.pk]).count() == 1


@pytest.mark.django_db
def test_a_researcher_starts_a_run_with_a_server_per_stage(project, people, gpt):
    ModelServer.objects.create(project=project, name="judge", base_url="http://127.0.0.1:8/v1", model="judge-m")
    night_video(project, "a.mp4")
    res = api(people["researcher"]).post(
        f"/api/projects/{project.slug}/runs/",
        {"pipeline": "egonight", "server": "gpt", "stage_servers": {"answer": "judge"}},
        format="json",
    )
    assert res.status_code == 201, res.content
    assert {s: v["server"] for s, v in res.json()["servers"].items()} == {
        "caption": "gpt",
        "questions": "gpt",
        "answer": "judge",
    }
    assert DraftRun.objects.get().servers["answer"]["model"] == "judge-m"


@pytest.mark.django_db
def test_reviewers_read_runs_but_cannot_start_cancel_or_resume_them_and_annotators_see_nothing(project, people, gpt):
    night_video(project, "a.mp4")
    run = made_run(project, statuses=["running"])
    reviewer, annotator = api(people["reviewer"]), api(people["annotator"])
    assert reviewer.get(f"/api/projects/{project.slug}/runs/").status_code == 200
    assert reviewer.get(f"/api/runs/{run.pk}/").status_code == 200
    assert reviewer.get(f"/api/projects/{project.slug}/model-servers/").status_code == 200
    assert (
        reviewer.post(f"/api/projects/{project.slug}/runs/", {"pipeline": "egonight", "server": "gpt"}).status_code
        == 403
    )
    assert reviewer.post(f"/api/runs/{run.pk}/cancel/").status_code == 403
    assert reviewer.post(f"/api/runs/{run.pk}/resume/").status_code == 403
    for path in (
        f"/api/projects/{project.slug}/runs/",
        f"/api/runs/{run.pk}/",
        f"/api/projects/{project.slug}/model-servers/",
    ):
        assert annotator.get(path).status_code == 403
    outsider = ensure_member("runs-outsider", role="admin", project=ensure_project("other"))[0]
    assert api(outsider).get(f"/api/runs/{run.pk}/").status_code == 404
    assert api(outsider).post(f"/api/runs/{run.pk}/cancel/").status_code == 404
    assert DraftRun.objects.count() == 1 and DraftRun.objects.get().status == "running"


PIPELINES = "egoexobench_checks, egonight, import, llm, templates, vudg"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, detail, errors",
    [
        ({"pipeline": "nope", "server": "gpt"}, "unknown pipeline 'nope'; choose one of ", {"pipeline": "unknown"}),
        (
            {"pipeline": "egonight", "server": "gtp"},
            "project proj has no model server 'gtp' (known: gpt)",
            {"server": "unknown"},
        ),
        (
            {"pipeline": "egonight"},
            "stage caption of pipeline egonight needs a model server: pass --server NAME "
            "(or --stage-server caption=NAME)",
            {"server": "required"},
        ),
        (
            {"pipeline": "egonight", "server": "gpt", "stage_servers": {"judge": "gpt"}},
            "pipeline egonight has no stage judge; its stages are caption, questions, answer",
            {"stage_servers": "unknown stage"},
        ),
        (
            {"pipeline": "egonight", "server": "gpt", "params": {"frames": 500}},
            "frames must be a whole number from 1 to 32",
            {"params": "frames must be a whole number from 1 to 32"},
        ),
        (
            {"pipeline": "egonight", "server": "gpt", "qa_type": "no_such_type"},
            "project proj has no QA type 'no_such_type'",
            {"qa_type": "project proj has no QA type 'no_such_type'"},
        ),
    ],
)
def test_a_bad_start_is_a_400_in_plain_words_and_starts_nothing(project, people, gpt, body, detail, errors):
    night_video(project, "a.mp4")
    res = api(people["admin"]).post(f"/api/projects/{project.slug}/runs/", body, format="json")
    assert res.status_code == 400, res.content
    assert res.json()["detail"].startswith(detail) and res.json()["errors"] == errors
    _nothing_started()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, errors",
    [
        (
            {"pipeline": "egonight", "server": "gpt", "params": [1, 2]},
            {"params": "params must be a JSON object of parameter names and values"},
        ),
        (
            {"pipeline": "egonight", "server": "gpt", "params": {f"p{i}": i for i in range(21)}},
            {"params": "at most 20 parameters, got 21"},
        ),
        (
            {"pipeline": "egonight", "server": "gpt", "params": {"note": "x" * 3000}},
            {"params": "the parameters take 3011 characters as JSON; at most 2000"},
        ),
        (
            {"pipeline": "llm", "params": {"base_url": "http://evil.example/v1", "key_env": "DJANGO_SECRET_KEY"}},
            {
                "params": "parameter base_url, key_env cannot be set here: a run's servers come from the project's model servers "
                "(server, stage_servers), and files are imported with the draft command"
            },
        ),
        (
            {"pipeline": "import", "params": {"file": "/etc/passwd"}},
            {
                "params": "parameter file cannot be set here: a run's servers come from the project's model servers "
                "(server, stage_servers), and files are imported with the draft command"
            },
        ),
        (
            {"pipeline": "egonight", "server": "gpt", "params": {"a": "\x00"}},
            {"params": "a must not contain NUL (\\u0000) characters"},
        ),
        (
            {"pipeline": "egonight", "server": "gpt", "stage_servers": ["gpt"]},
            {"stage_servers": 'Expected a dictionary of items but got type "list".'},
        ),
        ({"pipeline": "egonight", "server": "g" * 65}, {"server": "Ensure this field has no more than 64 characters."}),
        (
            {"pipeline": "egonight", "server": "gpt", "qa_type": "not a slug"},
            {"qa_type": 'Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.'},
        ),
        ({"server": "gpt"}, {"pipeline": "This field is required."}),
    ],
)
def test_start_input_out_of_bounds_is_a_400_with_the_field(project, people, gpt, body, errors):
    night_video(project, "a.mp4")
    res = api(people["admin"]).post(f"/api/projects/{project.slug}/runs/", body, format="json")
    assert res.status_code == 400, res.content
    assert res.json() == {"detail": "the request has errors; nothing was saved", "errors": errors}
    _nothing_started()


@pytest.mark.django_db
def test_starting_when_no_video_needs_the_work_is_a_409_saying_why(project, people, gpt):
    Video.objects.create(
        project=project,
        sha256="d" * 64,
        filename="day.mp4",
        status=Video.Status.READY,
        duration_s=3,
        illumination="day",
    )
    Video.objects.create(project=project, sha256="e" * 64, filename="wip.mp4", status=Video.Status.PROCESSING)
    res = api(people["admin"]).post(f"/api/projects/{project.slug}/runs/", {"pipeline": "egonight", "server": "gpt"})
    assert res.status_code == 409
    assert res.json() == {
        "detail": "nothing to draft: no video needs this pipeline's work (1 not a night video or the "
        "day video of a pair, 1 still processing)",
        "errors": {"skipped.not a night video or the day video of a pair": "1", "skipped.still processing": "1"},
    }
    _nothing_started()


# ------------------------------------------------------------------------------ listing and reading


@pytest.mark.django_db
def test_the_list_is_newest_first_a_page_at_a_time_with_progress_counts(project, people):
    oldest = made_run(
        project,
        statuses=[("done", 3, "", ""), ("failed", 0, "answer", "no usable answer")],
        status="failed",
        minutes_ago=30,
        calls=[
            ("caption", "", 0.002, False),
            ("answer", "malformed: not JSON", None, False),
            ("caption", "", 0.0, True),
        ],
    )
    middle = made_run(project, statuses=["done"], status="done", minutes_ago=20, user=people["admin"])
    newest = made_run(project, statuses=["running", "queued", "queued"], minutes_ago=10)
    reader = api(people["reviewer"])

    body = reader.get(f"/api/projects/{project.slug}/runs/", {"limit": 2}).json()
    assert body["count"] == 3 and [r["run"] for r in body["results"]] == [newest.pk, middle.pk]
    first = body["results"][0]
    assert first["videos"] == {"total": 3, "queued": 2, "running": 1, "done": 0, "failed": 0, "cancelled": 0}
    assert first["status"] == "running" and first["pipeline"] == "egonight"
    assert first["servers"] == {s: {"server": "gpt", "model": "fake-gpt"} for s in ("caption", "questions", "answer")}
    assert body["results"][1]["created_by"] == "runs-admin"

    body = reader.get(f"/api/projects/{project.slug}/runs/", {"limit": 2, "offset": 2}).json()
    assert body["count"] == 3 and len(body["results"]) == 1
    last = body["results"][0]
    assert (
        last["run"],
        last["status"],
        last["drafts"],
        last["calls"],
        last["cache_hits"],
        last["errors"],
        last["cost_usd"],
    ) == (oldest.pk, "failed", 3, 3, 1, 1, 0.002)
    assert last["videos"] == {"total": 2, "queued": 0, "running": 0, "done": 1, "failed": 1, "cancelled": 0}

    body = reader.get(f"/api/projects/{project.slug}/runs/", {"status": "done"}).json()
    assert body["count"] == 1 and [r["run"] for r in body["results"]] == [middle.pk]


@pytest.mark.django_db
def test_the_list_reads_a_fixed_number_of_queries_whatever_its_length(project, people):
    client = api(people["reviewer"])

    def queries():
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/api/projects/{project.slug}/runs/").status_code == 200
        return len(ctx.captured_queries)

    made_run(project, statuses=["done"], calls=[("caption", "", 0.001, False)])
    one = queries()
    for _ in range(5):
        made_run(
            project, statuses=["done", "failed"], calls=[("caption", "", 0.001, False), ("answer", "x", None, False)]
        )
    assert queries() == one


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query, errors",
    [
        ({"limit": 0}, {"limit": "Ensure this value is greater than or equal to 1."}),
        ({"limit": 101}, {"limit": "Ensure this value is less than or equal to 100."}),
        ({"offset": -1}, {"offset": "Ensure this value is greater than or equal to 0."}),
        ({"offset": 10**30}, {"offset": "Ensure this value is less than or equal to 1000000000."}),
        ({"limit": "ten"}, {"limit": "A valid integer is required."}),
        ({"status": "sleeping"}, {"status": '"sleeping" is not a valid choice.'}),
    ],
)
def test_list_queries_out_of_bounds_are_400s(project, people, query, errors):
    res = api(people["reviewer"]).get(f"/api/projects/{project.slug}/runs/", query)
    assert res.status_code == 400
    assert res.json() == {"detail": "the query has errors", "errors": errors}


@pytest.mark.django_db
def test_a_runs_report_has_calls_per_stage_failures_and_the_latest_failed_calls(project, people):
    run = made_run(
        project,
        statuses=[("failed", 0, "answer", "answer: no usable answer in 2 attempts"), ("done", 2, "", "")],
        status="failed",
        calls=[
            ("caption", "", 0.002, False),
            ("caption", "", 0.0, True),
            ("answer", "malformed: not JSON", None, False),
            ("answer", "rate_limited: 429", None, False),
        ],
    )
    body = api(people["reviewer"]).get(f"/api/runs/{run.pk}/").json()
    assert body["status"] == "failed" and body["drafts"] == 2
    assert body["calls"] == {
        "answer": {
            "calls": 2,
            "errors": 2,
            "cache_hits": 0,
            "prompt_tokens": 200,
            "completion_tokens": 40,
            "cost_usd": 0.0,
            "latency_ms_mean": 500,
        },
        "caption": {
            "calls": 2,
            "errors": 0,
            "cache_hits": 1,
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "cost_usd": 0.002,
            "latency_ms_mean": 500,
        },
    }
    assert body["cost_usd"] == 0.002
    video = DraftJob.objects.filter(run=run, status="failed").get().video.filename
    assert body["failures"] == [{"video": video, "stage": "answer", "error": "answer: no usable answer in 2 attempts"}]
    assert [(c["video"], c["stage"], c["attempt"], c["error"]) for c in body["failed_calls"]] == [
        (video, "answer", 1, "rate_limited: 429"),
        (video, "answer", 1, "malformed: not JSON"),
    ]


@pytest.mark.django_db
def test_an_unknown_run_is_a_404(people):
    client = api(people["admin"])
    assert client.get("/api/runs/999999/").status_code == 404
    assert client.post("/api/runs/999999/cancel/").status_code == 404
    assert client.get("/api/runs/" + "9" * 30 + "/").status_code == 404  # beyond a bigint: no such path


@pytest.mark.django_db
def test_model_servers_are_listed_with_the_keys_variable_name_never_the_key(project, people, monkeypatch):
    monkeypatch.setenv("RUNS_TEST_API_KEY", "sk-very-secret-value")
    ModelServer.objects.create(
        project=project,
        name="openai",
        base_url="https://api.openai.com/v1",
        model="gpt-4o",
        key_env="RUNS_TEST_API_KEY",
        concurrency=8,
        price_prompt_per_mtok=2.5,
        price_completion_per_mtok=10,
    )
    ModelServer.objects.create(project=project, name="local", base_url="http://127.0.0.1:8001/v1", model="qwen")
    res = api(people["reviewer"]).get(f"/api/projects/{project.slug}/model-servers/")
    assert res.status_code == 200
    assert "sk-very-secret-value" not in res.content.decode()
    assert res.json() == [
        {
            "name": "local",
            "base_url": "http://127.0.0.1:8001/v1",
            "model": "qwen",
            "key_env": "",
            "concurrency": 4,
            "timeout_s": 120.0,
            "price_prompt_per_mtok": 0.0,
            "price_completion_per_mtok": 0.0,
        },
        {
            "name": "openai",
            "base_url": "https://api.openai.com/v1",
            "model": "gpt-4o",
            "key_env": "RUNS_TEST_API_KEY",
            "concurrency": 8,
            "timeout_s": 120.0,
            "price_prompt_per_mtok": 2.5,
            "price_completion_per_mtok": 10.0,
        },
    ]


# ------------------------------------------------------------------------------ cancel and resume


@pytest.mark.django_db
def test_cancelling_a_running_run_cancels_its_queued_videos_and_a_second_cancel_is_a_409(project, people):
    run = made_run(project, statuses=["done", "running", "queued"])
    client = api(people["researcher"])
    res = client.post(f"/api/runs/{run.pk}/cancel/")
    assert res.status_code == 200
    body = res.json()
    assert body["status"] == "cancelled" and body["finished_at"] is not None
    assert body["videos"] == {"total": 3, "queued": 0, "running": 1, "done": 1, "failed": 0, "cancelled": 1}

    before = list(DraftJob.objects.filter(run=run).order_by("id").values_list("status", flat=True))
    res = client.post(f"/api/runs/{run.pk}/cancel/")
    assert res.status_code == 409
    assert res.json() == {
        "detail": f"run {run.pk} is cancelled; only a queued or running run can be cancelled",
        "errors": {},
    }
    assert list(DraftJob.objects.filter(run=run).order_by("id").values_list("status", flat=True)) == before


@pytest.mark.django_db
def test_a_cancelled_run_resumes_its_unfinished_videos_and_a_running_or_done_one_does_not(project, people):
    client = api(people["admin"])
    running = made_run(project, statuses=["queued"])
    res = client.post(f"/api/runs/{running.pk}/resume/")
    assert res.status_code == 409
    assert res.json()["detail"] == f"run {running.pk} is running; only a failed or cancelled run can be resumed"
    assert DraftRun.objects.get(pk=running.pk).status == "running"

    done = made_run(project, statuses=["done"], status="done")
    assert client.post(f"/api/runs/{done.pk}/resume/").status_code == 409

    cancelled = made_run(project, statuses=["done", "cancelled", ("failed", 0, "caption", "x")], status="cancelled")
    res = client.post(f"/api/runs/{cancelled.pk}/resume/")
    assert res.status_code == 200
    body = res.json()
    assert body["queued"] == 2 and body["status"] == "queued"
    assert body["videos"] == {"total": 3, "queued": 2, "running": 0, "done": 1, "failed": 0, "cancelled": 0}
    assert Job.objects.filter(task="drafts.run", args=[cancelled.pk]).count() == 1


# ------------------------------------------------------------------------------ end to end


@pytest.mark.django_db(transaction=True)
def test_a_run_started_through_the_api_is_worked_and_reported_per_stage(worker, model_server, project, settings):
    settings.LLM_WINDOWS = 1
    admin = member(project, "admin")
    ModelServer.objects.create(
        project=project,
        name="gpt",
        base_url=model_server.base_url,
        model="fake-gpt",
        price_prompt_per_mtok=2.0,
        price_completion_per_mtok=8.0,
    )
    night_video(project, "n1.mp4", stored=True)
    night_video(project, "n2.mp4", seconds=2.0, stored=True)
    model_server.fail_next("malformed", stage="questions")  # one failed call, retried
    client = api(admin)
    res = client.post(
        f"/api/projects/{project.slug}/runs/",
        {"pipeline": "egonight", "server": "gpt", "qa_type": "lighting_change", "params": {"frames": 2}},
        format="json",
    )
    assert res.status_code == 201, res.content
    run_id = res.json()["run"]

    body = wait_for(
        lambda: (b := client.get(f"/api/runs/{run_id}/").json())["status"] in ("done", "failed") and b,
        timeout=90,
        what="the run to finish",
    )
    assert body["status"] == "done", body
    assert body["videos"] == {"total": 2, "queued": 0, "running": 0, "done": 2, "failed": 0, "cancelled": 0}
    assert {s: (c["calls"], c["errors"]) for s, c in body["calls"].items()} == {
        "answer": (2, 0),
        "caption": (2, 0),
        "questions": (3, 1),
    }
    assert body["drafts"] == 2 and body["failures"] == []
    assert [(c["stage"], c["error"][:10]) for c in body["failed_calls"]] == [("questions", "malformed:")]
    assert body["cost_usd"] == pytest.approx(sum(c.cost_usd or 0 for c in ModelCall.objects.all()), abs=1e-6)
    listed = client.get(f"/api/projects/{project.slug}/runs/").json()["results"][0]
    assert (listed["run"], listed["status"], listed["calls"], listed["errors"], listed["drafts"]) == (
        run_id,
        "done",
        7,
        1,
        2,
    )
    assert json.loads(json.dumps(body))  # the report is plain JSON
