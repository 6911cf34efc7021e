"""Drafting through Celery: the templates pipeline on real footage, and the llm pipeline (an ordinary
pipeline on the run engine, one stage ``llm``) against an OpenAI-compatible server on loopback, fed
good and malformed answers."""

import base64
import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotator.drafts.models import Draft, DraftJob, DraftRun
from annotator.inference.models import ModelCall, ModelServer
from annotator.media.models import Video
from annotator.qa.models import QAPair, Revision, WorkUnit

GOOD = json.dumps(
    {
        "qa_pairs": [
            {"question": "How many people ride bicycles?", "answer": "two"},
            {"question": "Is it day or night?", "answer": "day"},
        ]
    }
)


@pytest.fixture
def ready_video(worker, short_video):
    call_command("ingest", str(short_video), "--project", "llm", "--wait", stdout=StringIO())
    return Video.objects.get(filename="short.mp4", status="ready")


def _server(video, base_url: str, name: str = "fake") -> ModelServer:
    """A model server of the video's project (the llm stage's ``--server``)."""
    return ModelServer.objects.create(project=video.project, name=name, base_url=base_url, model="fake-vlm")


def _draft(*args):
    out, err = StringIO(), StringIO()
    try:
        call_command("draft", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_llm_pipeline_sends_frames_and_saves_the_answer(ready_video, model_server, settings):
    settings.LLM_FRAMES = 4
    _server(ready_video, model_server.base_url)
    model_server.replies = [GOOD]
    code, out, _ = _draft("--project", "llm", "--pipeline", "llm", "--qa-type", "counting", "--server", "fake")
    assert code == 0, out
    assert "1 videos queued" in out and "1/1 videos done (0 failed), 2 drafts" in out

    (request,) = model_server.requests
    assert request["model"] == "fake-vlm" and "response_format" not in request  # JSON asked for in the text
    parts = request["messages"][1]["content"]
    images = [p for p in parts if p["type"] == "image_url"]
    assert len(images) == 4
    jpeg = base64.b64decode(images[0]["image_url"]["url"].split(",", 1)[1])
    assert jpeg[:3] == b"\xff\xd8\xff"  # a real JPEG frame from ffmpeg
    assert "0.38 s, 1.12 s, 1.88 s, 2.62 s" in parts[0]["text"]

    drafts = list(
        Draft.objects.order_by("id").values_list("qa_type", "question", "answer", "clip_start_s", "clip_end_s")
    )
    assert drafts == [
        ("counting", "How many people ride bicycles?", "two", 0.0, 3.0),
        ("counting", "Is it day or night?", "day", 0.0, 3.0),
    ]
    call = ModelCall.objects.get()
    assert (call.raw_output, call.error, call.prompt_tokens, call.model) == (GOOD, "", 101, "fake-vlm")
    assert (call.stage, call.prompt_version, call.request["frame_times_s"]) == (
        "llm",
        "llm-qa-v1",
        [0.375, 1.125, 1.875, 2.625],
    )
    run = DraftJob.objects.get().run
    assert (run.pipeline, run.model, run.prompt_version) == ("llm", "fake-vlm", "llm-qa-v1")
    assert (run.servers["llm"]["server"], run.params) == ("fake", {"qa_type": "counting", "frames": 4})
    assert WorkUnit.objects.get().qa_pairs.count() == 2
    assert set(Revision.objects.values_list("actor_model", flat=True)) == {"llm/fake-vlm/llm-qa-v1"}


@pytest.mark.django_db(transaction=True)
def test_a_malformed_answer_is_recorded_and_retried(ready_video, model_server, settings):
    _server(ready_video, model_server.base_url)
    model_server.replies = ['{"qa_pairs": [{"question": "Who', GOOD]
    code, out, _ = _draft("--project", "llm", "--pipeline", "llm", "--qa-type", "counting", "--server", "fake")
    assert code == 0, out
    calls = list(ModelCall.objects.order_by("attempt").values_list("attempt", "error", "raw_output"))
    assert calls[0][:2] == (1, "malformed: not JSON: Unterminated string starting at: line 1 column 28 (char 27)")
    assert calls[0][2] == '{"qa_pairs": [{"question": "Who'
    assert calls[1] == (2, "", GOOD)
    assert Draft.objects.count() == 2 and QAPair.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_model_that_never_answers_well_fails_the_job_and_writes_nothing(ready_video, model_server, settings):
    settings.LLM_MAX_ATTEMPTS = 3
    _server(ready_video, model_server.base_url)
    model_server.replies = ["I cannot help with that.", '{"qa_pairs": "none"}', "```json\n{}\n```"]
    code, out, err = _draft("--project", "llm", "--pipeline", "llm", "--qa-type", "counting", "--server", "fake")
    assert code == 1
    assert "1/1 videos done (1 failed), 0 drafts" in out
    assert (
        "failed short.mp4 at stage llm: no usable answer in 3 attempts; last: malformed: expected an object with a "
        '"qa_pairs" list'
    ) in err
    assert list(ModelCall.objects.order_by("attempt").values_list("attempt", "error")) == [
        (1, "malformed: not JSON: Expecting value: line 1 column 1 (char 0)"),
        (2, 'malformed: expected an object with a "qa_pairs" list'),
        (3, 'malformed: expected an object with a "qa_pairs" list'),
    ]
    assert len(model_server.requests) == 3
    job = DraftJob.objects.get()
    assert (job.status, job.stage, job.run.status) == ("failed", "llm", "failed")
    assert (Draft.objects.count(), QAPair.objects.count(), WorkUnit.objects.count()) == (0, 0, 0)


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_server_is_recorded_as_a_connection_error(ready_video, settings):
    _server(ready_video, "http://127.0.0.1:9/v1")  # discard port: nothing listens
    settings.LLM_MAX_ATTEMPTS = 1
    code, _, err = _draft("--project", "llm", "--pipeline", "llm", "--qa-type", "counting", "--server", "fake")
    assert code == 1 and "APIConnectionError" in err
    assert Draft.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_templates_draft_the_real_footage_once(worker, real_video, tmp_path):
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {
                    "file": "bikes.mp4",
                    "annotations": {
                        "description": "Cyclists pass on a street.",
                        "objects": ["bicycle", "car", "tree"],
                        "counts": [{"what": "cyclists", "count": 2, "at_s": 3.0}],
                    },
                }
            ]
        )
        + "\n"
    )
    call_command(
        "ingest", str(real_video), "--project", "tpl", "--manifest", str(manifest), "--wait", stdout=StringIO()
    )
    code, out, _ = _draft("--project", "tpl")
    assert code == 0 and "1/1 videos done (0 failed), 2 drafts" in out  # no object item: no distractor pool
    assert sorted(Draft.objects.values_list("qa_type", flat=True)) == ["counting", "scene_description"]
    counting = QAPair.objects.get(qa_type__slug="counting")
    assert (counting.question, counting.answer, counting.clip_start_s, counting.clip_end_s) == (
        "How many cyclists are there at 3.0 s?",
        "2",
        1.5,
        4.5,
    )

    code, out, _ = _draft("--project", "tpl")
    assert (code, out) == (0, "nothing to draft; skipped: 1 already drafted\n")
    assert Draft.objects.count() == 2 and DraftRun.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_window_type_is_drafted_window_by_window(worker, model_server, settings, tmp_path):
    from annotator.projects.services import ensure_project
    from annotator.qa.services import ensure_qa_type
    from tests.conftest import make_video

    settings.LLM_FRAMES, settings.LLM_WINDOWS = 2, 3
    clip = make_video(tmp_path / "ten.mp4", seconds=10.0, audio=False)
    call_command("ingest", str(clip), "--project", "win", "--wait", stdout=StringIO())
    ensure_qa_type(
        ensure_project("win"), "counting_statics", name="Counting of statics", clip_policy="window", window_s=3.0
    )
    ModelServer.objects.create(
        project=Video.objects.get().project, name="fake", base_url=model_server.base_url, model="fake-vlm"
    )
    model_server.replies = [GOOD]
    code, out, _ = _draft("--project", "win", "--pipeline", "llm", "--qa-type", "counting_statics", "--server", "fake")
    assert code == 0, out
    assert len(model_server.requests) == 3
    assert (
        "The clip covers 3.5-6.5 s of a 10.0 s video" in model_server.requests[1]["messages"][1]["content"][0]["text"]
    )
    clips = sorted(set(Draft.objects.values_list("clip_start_s", "clip_end_s")))
    assert clips == [(0.167, 3.167), (3.5, 6.5), (6.833, 9.833)]
    assert Draft.objects.count() == 6 and ModelCall.objects.count() == 3
    assert ModelCall.objects.order_by("id").first().request["clip_s"] == [0.167, 3.167]
