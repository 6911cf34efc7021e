"""The EgoNight day-augmented pipeline end to end on real footage and its night pair: caption and
questions from the night clip, answers from the aligned day clip for paired types; resume after a
failed stage; the cache."""

import json

import pytest

from annotator.drafts.models import DraftJob, DraftRun
from annotator.inference.models import ModelCall
from annotator.qa.models import QAPair, QAType
from tests.drafts.conftest import numbered, run_draft
from tests.fake_model_server import n_images


@pytest.fixture
def egonight_server(model_server, day_night_pair):
    from annotator.inference.models import ModelServer
    from annotator.projects.models import Project

    project = Project.objects.get(slug="pipe")
    ModelServer.objects.create(
        project=project,
        name="gpt",
        base_url=model_server.base_url,
        model="fake-gpt",
        price_prompt_per_mtok=2.0,
        price_completion_per_mtok=8.0,
    )
    model_server.responders["caption"] = lambda body: {"caption": "A dim street; two people ride bicycles."}
    model_server.responders["questions"] = lambda body: {
        "questions": ["How many bicycles are there?", "What colour is the door?"]
    }
    model_server.responders["answer"] = lambda body: {"answers": [f"answer to {q}" for q in numbered(body)]}
    return model_server


@pytest.mark.django_db(transaction=True)
def test_egonight_asks_the_night_clip_and_answers_paired_types_from_the_day_clip(
    egonight_server, day_night_pair, settings
):
    day, night = day_night_pair
    settings.LLM_WINDOWS = 1
    code, out, err = run_draft(
        "--project", "pipe", "--pipeline", "egonight", "--server", "gpt", "--param", "frames=3", "--json"
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "done" and report["videos"] == {
        "total": 2,
        "queued": 0,
        "running": 0,
        "done": 2,
        "failed": 0,
        "cancelled": 0,
    }
    assert QAType.objects.filter(project__slug="pipe").count() == 12  # the preset was applied
    # 8 paired types on the day video's pair, 4 unpaired on the night video; one clip each, 3 calls a clip.
    assert {s: c["calls"] for s, c in report["calls"].items()} == {"answer": 12, "caption": 12, "questions": 12}
    assert report["summary"] == {"clips": 12, "questions": 24} and report["drafts"] == 24
    assert report["cost_usd"] == pytest.approx(sum(c.cost_usd for c in ModelCall.objects.all()))

    for stage in ("caption", "questions", "answer"):
        body = egonight_server.calls_of(stage)[0]
        assert (
            body["response_format"]["json_schema"]["name"] == stage and body["response_format"]["json_schema"]["strict"]
        )
        assert n_images(body) == 3
    paired = ModelCall.objects.filter(stage="answer", request__qa_type="object_recognition").get()
    unpaired = ModelCall.objects.filter(stage="answer", request__qa_type="lighting_change").get()
    assert (paired.request["answered_from"], paired.request["video"]) == ("day", day.sha256)
    assert (unpaired.request["answered_from"], unpaired.request["video"]) == ("night", night.sha256)
    caption = ModelCall.objects.filter(stage="caption", request__qa_type="object_recognition").get()
    assert caption.request["video"] == night.sha256  # paired types are captioned from the night clip

    pair = QAPair.objects.get(qa_type__slug="object_recognition", question="How many bicycles are there?")
    assert pair.answer == "answer to How many bicycles are there?" and pair.unit.group is not None
    assert pair.clip_end_s - pair.clip_start_s == pytest.approx(3.0)  # EgoNight's 3 s window
    assert QAPair.objects.get(qa_type__slug="lighting_change", question="How many bicycles are there?").video == night


@pytest.mark.django_db(transaction=True)
def test_a_run_that_failed_at_a_stage_resumes_there_and_a_rerun_costs_nothing(
    egonight_server, day_night_pair, settings
):
    settings.LLM_WINDOWS = 1
    settings.LLM_MAX_ATTEMPTS = 2
    egonight_server.fail_next("malformed", stage="answer", n=2)  # the first answer call gives up
    code, out, err = run_draft(
        "--project",
        "pipe",
        "--pipeline",
        "egonight",
        "--server",
        "gpt",
        "--qa-type",
        "object_recognition",
        "--param",
        "frames=2",
        "--json",
    )
    report = json.loads(out)
    assert code == 1 and report["status"] == "failed"
    assert report["failures"] == [
        {
            "video": "bikes.mp4",
            "stage": "answer",
            "error": "no usable answer in 2 attempts; last: malformed: not JSON: "
            "Expecting value: line 1 column 13 (char 12)",
        }
    ]
    assert QAPair.objects.count() == 0  # nothing half-written
    run = DraftRun.objects.get()
    before = len(egonight_server.requests)

    code, out, err = run_draft("--project", "pipe", "--resume", str(run.pk), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "done" and report["drafts"] == 2
    new = egonight_server.stages[before:]
    assert new == ["answer"]  # caption and questions came from the cache
    assert report["calls"]["caption"]["cache_hits"] == 1 and report["calls"]["questions"]["cache_hits"] == 1

    before = len(egonight_server.requests)
    code, out, _ = run_draft(
        "--project",
        "pipe",
        "--pipeline",
        "egonight",
        "--server",
        "gpt",
        "--qa-type",
        "object_recognition",
        "--param",
        "frames=2",
        "--json",
    )
    again = json.loads(out)
    assert len(egonight_server.requests) == before  # unchanged inputs: no request at all
    assert again["cost_usd"] == 0 and {s: c["cache_hits"] for s, c in again["calls"].items()} == {
        "answer": 1,
        "caption": 1,
        "questions": 1,
    }
    assert DraftJob.objects.filter(run_id=again["run"], status="done").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_stage_without_a_server_or_an_unknown_server_is_refused_in_plain_words(egonight_server):
    from django.core.management.base import CommandError

    with pytest.raises(
        CommandError, match=r"^stage caption of pipeline egonight needs a model server: pass --server NAME"
    ):
        run_draft("--project", "pipe", "--pipeline", "egonight")
    with pytest.raises(CommandError, match=r"^project pipe has no model server 'gtp' \(known: gpt\)$"):
        run_draft("--project", "pipe", "--pipeline", "egonight", "--server", "gpt", "--stage-server", "answer=gtp")
    with pytest.raises(
        CommandError, match=r"^pipeline egonight has no stage judge; its stages are caption, questions, answer$"
    ):
        run_draft("--project", "pipe", "--pipeline", "egonight", "--server", "gpt", "--stage-server", "judge=gpt")
    with pytest.raises(CommandError, match=r"^frames must be a whole number from 1 to 32$"):
        run_draft("--project", "pipe", "--pipeline", "egonight", "--server", "gpt", "--param", "frames=500")
    assert DraftRun.objects.count() == 0
