"""End to end on real footage (bikes.mp4 and its synthetic night rendition, a day-night pair): the
``evaluate`` command queues the evaluation, a real Celery worker samples frames with ffmpeg and asks
the loopback model, multiple choice is scored exactly from the letter, open answers go to the judge
(one malformed judge answer is retried), and the results are broken down by illumination, source
and provenance with their intervals. The export loads with pandas; evaluating again costs nothing;
a model server that is down fails every item with its reason and nothing crashes."""

from __future__ import annotations

import json
from io import StringIO

import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from annotator.evaluation import prompts, runs
from annotator.evaluation.models import Evaluation, Prediction
from annotator.evaluation.selectors import EXPORT_COLUMNS
from annotator.inference.models import ModelCall, ModelServer
from annotator.media.models import VideoGroup
from annotator.projects.services import ensure_member, token_for
from annotator.qa.models import WorkUnit
from tests.conftest import wait_for
from tests.evaluation.conftest import add_verified, answer_free_text, fair_judge
from tests.fake_model_server import n_images, user_text

REPLIES = {  # question -> (answer by day, answer by night)
    "Which vehicle do the people ride?": ("(B)", "Answer: D."),
    "What colour is the sky?": ("I cannot tell from these frames.", "I cannot tell from these frames."),
    "What do the people ride?": ("Bicycles.", "Nothing is visible."),
    "Where does this happen?": ("They are on a street in a city.", "On a street."),
}


def _model(text: str, night: bool) -> str:
    question = next(q for q in REPLIES if q in text)
    return REPLIES[question][1 if night else 0]


def _evaluate(*args) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("evaluate", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def benchmark(night_pair, project):
    """Verified QA on the pair: a paired MCQ (kept) and a paired open question (added), asked of the
    day and the night clip; an MCQ (modified) and an open question (kept) on the day video alone."""
    day, night = night_pair
    group = VideoGroup.objects.get(members__video=night)
    paired = WorkUnit.objects.create(project=project, video=day, group=group, start_s=0.0, end_s=10.0)
    single = WorkUnit.objects.create(project=project, video=day, start_s=0.0, end_s=10.0)
    return {
        "mcq_paired": add_verified(
            paired,
            "objects",
            "Which vehicle do the people ride?",
            "bicycle",
            "machine_kept",
            options=["car", "bicycle", "bus", "boat"],
            answer_index=1,
            paired=True,
        ),
        "open_paired": add_verified(
            paired, "actions", "What do the people ride?", "bicycles", "human_added", paired=True
        ),
        "mcq_single": add_verified(
            single,
            "attributes",
            "What colour is the sky?",
            "grey",
            "machine_modified",
            options=["grey", "blue", "red"],
            answer_index=0,
        ),
        "open_single": add_verified(single, "actions", "Where does this happen?", "on a street", "machine_kept"),
    }


@pytest.mark.django_db(transaction=True)
def test_a_model_is_evaluated_on_real_footage_with_exact_mcq_scores_and_a_judge(
    benchmark, model_server, add_server, project
):
    add_server("vlm-host", model="served-default", concurrency=3)
    add_server("judge-host", model="gpt-judge", price_prompt_per_mtok=2.0, price_completion_per_mtok=8.0)
    answer_free_text(model_server, _model)
    model_server.responders["judge"] = fair_judge
    model_server.fail_next("malformed", stage="judge")

    code, out, err = _evaluate(
        "--project",
        project.slug,
        "--server",
        "vlm-host",
        "--model",
        "tiny-vlm",
        "--frames",
        "4",
        "--judge-server",
        "judge-host",
        "--json",
    )
    assert code == 0, (out, err)
    report = json.loads(out)
    e = Evaluation.objects.get()
    assert (report["id"], report["status"], report["model"], report["judge_model"], report["frames"]) == (
        e.pk,
        "done",
        "tiny-vlm",
        "gpt-judge",
        4,
    )
    assert report["items"] == {"total": 6, "queued": 0, "running": 0, "done": 6, "failed": 0, "cancelled": 0}

    # The evaluated model: 6 requests with 4 real JPEG frames each, the EgoNight prompt, the options lettered.
    asked = [b for b in model_server.requests if not b.get("response_format")]
    assert len(asked) == 6 and {b["model"] for b in asked} == {"tiny-vlm"} and {n_images(b) for b in asked} == {4}
    mcq_text = next(user_text(b) for b in asked if "Which vehicle" in user_text(b))
    assert mcq_text == (
        "Please carefully read the question, use the visual cues in the 4 video frames given to answer the question: "
        "Which vehicle do the people ride?\nThe original FPS of the video is 25. This image set is obtained by sampling "
        "at 0.4 fps.\nDo not include any other content. You need to answer the question in any case and not demand "
        "additional context information.\nNote: All the actions mentioned refer to the person who recorded the video.\n"
        "Options:\nA. car\nB. bicycle\nC. bus\nD. boat\nAnswer with the option's letter from the given choices directly."
    )
    # The judge: text only, EgoNight's system prompt, the strict schema; the malformed answer was retried.
    judged = model_server.calls_of("judge")
    assert len(judged) == 4 and {n_images(b) for b in judged} == {0} and {b["model"] for b in judged} == {"gpt-judge"}
    assert judged[0]["messages"][0]["content"] == prompts.JUDGE_SYSTEM
    assert judged[0]["response_format"]["json_schema"]["schema"] == prompts.JUDGE_SCHEMA
    bad = ModelCall.objects.get(stage="judge", error__startswith="malformed: not JSON")
    retried = Prediction.objects.get(call_ids__contains=[bad.pk])
    assert retried.status == "done" and retried.judge_pred in ("correct", "incorrect")

    rows = {(p.qa_pair_id, p.role): p for p in Prediction.objects.all()}
    b = benchmark
    day_mcq, night_mcq = rows[(b["mcq_paired"].pk, "day")], rows[(b["mcq_paired"].pk, "night")]
    assert (day_mcq.prediction, day_mcq.choice_letter, day_mcq.choice_index, day_mcq.correct) == ("(B)", "B", 1, True)
    assert (night_mcq.prediction, night_mcq.choice_letter, night_mcq.correct) == ("Answer: D.", "D", False)
    assert (night_mcq.illumination, night_mcq.source, day_mcq.illumination, day_mcq.source) == (
        "night",
        "synthetic",
        "day",
        "real",
    )
    sky = rows[(b["mcq_single"].pk, "single")]
    assert (sky.choice_letter, sky.choice_index, sky.correct) == ("", None, False)  # unparseable: wrong, recorded
    assert day_mcq.frame_times == [1.25, 3.75, 6.25, 8.75]
    ride_day, ride_night = rows[(b["open_paired"].pk, "day")], rows[(b["open_paired"].pk, "night")]
    street = rows[(b["open_single"].pk, "single")]
    assert (ride_day.judge_pred, ride_day.judge_score, ride_day.judge_reason) == ("correct", 5, "it says bicycles")
    assert (ride_night.prediction, ride_night.judge_pred, ride_night.judge_score) == (
        "Nothing is visible.",
        "incorrect",
        0,
    )
    assert (street.judge_pred, street.judge_score) == ("correct", 4)
    assert street.judge_call.output == {"pred": "correct", "score": 4, "reason": "it says on a street"}
    assert street.predict_call.output == {"text": "They are on a street in a city."}
    assert street.cost_usd == pytest.approx(street.judge_call.cost_usd) and street.cost_usd > 0

    # Results with their 95% intervals (Wilson; Student t), overall and broken down.
    s = report["summary"]
    assert s["mcq"] == {"n": 3, "k": 1, "value": 0.333333, "ci": [0.061492, 0.79234]}
    assert s["judge_accuracy"] == {"n": 3, "k": 2, "value": 0.666667, "ci": [0.20766, 0.938508]}
    assert s["judge_score"] == {
        "n": 3,
        "value": 3.0,
        "sd": 2.645751,
        "ci": [0.0, 5.0],
    }  # 3 +- 6.57 (Student t), clipped to 0-5
    by = {dim: {g["value"]: g for g in groups} for dim, groups in report["breakdown"].items()}
    assert set(by["illumination"]) == {"day", "night"} and set(by["source"]) == {"real", "synthetic"}
    assert by["illumination"]["day"]["mcq"] == {"n": 2, "k": 1, "value": 0.5, "ci": [0.094531, 0.905469]}
    assert by["illumination"]["night"]["mcq"] == {"n": 1, "k": 0, "value": 0.0, "ci": [0.0, 0.793451]}
    assert by["illumination"]["day"]["judge_score"] == {"n": 2, "value": 4.5, "sd": 0.707107, "ci": [0.0, 5.0]}
    assert by["illumination"]["night"]["judge_accuracy"] == {"n": 1, "k": 0, "value": 0.0, "ci": [0.0, 0.793451]}
    assert set(by["provenance"]) == {"kept", "modified_or_added"}
    assert by["provenance"]["kept"]["judge_accuracy"] == {"n": 1, "k": 1, "value": 1.0, "ci": [0.206549, 1.0]}
    assert by["provenance"]["modified_or_added"]["judge_accuracy"]["k"] == 1
    assert by["provenance"]["modified_or_added"]["judge_score"]["value"] == 2.5
    assert by["qa_type"]["actions"]["judge_score"]["n"] == 3

    # The raw predictions load with pandas, every column present, ModelCall ids that exist.
    admin = APIClient()
    admin.force_authenticate(ensure_member("boss", role="admin", project=project)[0])
    body = b"".join(admin.get(f"/api/evaluations/{e.pk}/predictions/?format=jsonl").streaming_content)
    frame = pd.read_json(StringIO(body.decode()), lines=True)
    assert list(frame.columns) == EXPORT_COLUMNS and len(frame) == 6
    assert sorted(frame["choice_letter"].dropna().tolist()) == ["", "", "", "", "B", "D"]
    lines = [json.loads(line) for line in body.decode().splitlines()]
    assert {tuple(sorted(line)) for line in lines} == {tuple(sorted(EXPORT_COLUMNS))}
    ids = {i for line in lines for i in line["call_ids"]}
    assert ModelCall.objects.filter(pk__in=ids).count() == len(ids) == ModelCall.objects.count()
    csv_body = b"".join(admin.get(f"/api/evaluations/{e.pk}/predictions/?format=csv").streaming_content).decode()
    table = pd.read_csv(StringIO(csv_body))
    assert list(table.columns) == EXPORT_COLUMNS and len(table) == 6
    assert table.set_index("prediction_id").loc[street.pk, "judge_reason"] == "it says on a street"

    # The pages show it: the leaderboard row and the breakdown tables.
    client = Client()
    client.force_login(ensure_member("boss", role="admin", project=project)[0])
    page = client.get(f"/projects/{project.slug}/evaluation/").content.decode()
    assert "tiny-vlm" in page and "33.3%" in page and "[6.1%, 79.2%]" in page
    page = client.get(f"/projects/{project.slug}/evaluation/{e.pk}/").content.decode()
    assert 'id="by-provenance"' in page and "machine, modified; or human, added" in page and "[9.5%, 90.5%]" in page

    # Evaluating again costs nothing: every answer comes from the cache, no request reaches the server.
    sent = len(model_server.requests)
    code, out, _ = _evaluate(
        "--project",
        project.slug,
        "--server",
        "vlm-host",
        "--model",
        "tiny-vlm",
        "--frames",
        "4",
        "--judge-server",
        "judge-host",
        "--json",
    )
    again = json.loads(out)
    assert code == 0 and len(model_server.requests) == sent
    assert again["cost_usd"] == 0 and again["summary"] == report["summary"]
    assert ModelCall.objects.filter(cached_from__isnull=False).count() == 9  # 6 answers, 3 judgements


@pytest.mark.django_db(transaction=True)
def test_a_model_server_that_is_down_fails_each_item_with_its_reason_and_nothing_crashes(
    worker, short_video, project, settings
):
    settings.LLM_MAX_ATTEMPTS, settings.LLM_BACKOFF_BASE_S = 2, 0.01
    call_command("ingest", str(short_video), "--project", project.slug, "--wait", stdout=StringIO())
    video = project.videos.get(status="ready")
    unit = WorkUnit.objects.create(project=project, video=video, start_s=0.0, end_s=3.0)
    add_verified(unit, "scene", "What is shown?", "a test card", "machine_kept")
    add_verified(unit, "objects", "Which shape?", "circle", "human_added", options=["circle", "square"], answer_index=0)
    ModelServer.objects.create(project=project, name="down", base_url="http://127.0.0.1:9/v1", model="gone")

    code, out, err = _evaluate("--project", project.slug, "--server", "down", "--frames", "2", "--json")
    assert code == 1
    report = json.loads(out)
    assert report["status"] == "failed" and report["items"]["failed"] == 2 and report["items"]["done"] == 0
    assert {f["stage"] for f in report["failures"]} == {"predict"}
    for f in report["failures"]:
        assert f["error"].startswith("no usable answer in 2 attempts; last: connection: APIConnectionError")
    assert "2/2 items done (2 failed)" in err  # progress on stderr, the report alone on stdout
    assert report["summary"]["mcq"] == {"n": 0, "k": 0, "value": None, "ci": None}
    assert ModelCall.objects.filter(error__startswith="connection:").count() == 4

    client = Client()
    client.force_login(ensure_member("boss", role="admin", project=project)[0])
    page = client.get(f"/projects/{project.slug}/evaluation/{report['id']}/")
    assert page.status_code == 200 and "APIConnectionError" in page.content.decode()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(ensure_member('boss', role='admin', project=project)[0])}")
    assert api.get(f"/api/evaluations/{report['id']}/").json()["items"]["failed"] == 2


@pytest.mark.django_db(transaction=True)
def test_the_vudg_rubric_scores_accuracy_and_relevance(worker, short_video, model_server, add_server, project):
    call_command("ingest", str(short_video), "--project", project.slug, "--wait", stdout=StringIO())
    unit = WorkUnit.objects.create(project=project, video=project.videos.get(), start_s=0.0, end_s=3.0)
    add_verified(unit, "action", "What does the person do?", "cuts mushrooms", "machine_kept")
    add_verified(unit, "temporal_order", "In what order do things happen?", "a then b", "machine_modified")
    add_server("vlm")
    answer_free_text(model_server, lambda text, night: "Someone cuts mushrooms." if "person do" in text else "b then a")
    scores = {"Someone cuts mushrooms.": (4, 5), "b then a": (1, 4)}

    def vudg(body):
        assert body["response_format"]["json_schema"]["schema"] == prompts.JUDGE_VUDG_SCHEMA
        answer = user_text(body).rsplit("Respondent's Answer: ", 1)[1]
        acc, rel = scores[answer]
        return {"accuracy_score": acc, "relevance_score": rel, "reason": "as the rubric says"}

    model_server.responders["judge"] = vudg
    evaluation = runs.start(project, server="vlm", n_frames=1, rubric="vudg")
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).status == "done", timeout=60, what="the evaluation")
    got = {
        p.qa_type: (p.judge_accuracy, p.judge_relevance, p.judge_score, p.judge_pred) for p in Prediction.objects.all()
    }
    assert got == {"action": (4, 5, 9, "correct"), "temporal_order": (1, 4, 5, "incorrect")}
    systems = sorted(b["messages"][0]["content"] for b in model_server.calls_of("judge"))
    assert systems == sorted([prompts.JUDGE_VUDG_SYSTEM, prompts.JUDGE_VUDG_TEMPORAL_SYSTEM])


@pytest.fixture
def no_queue(monkeypatch):
    """Jobs are not sent (the test runs ``execute`` itself; a worker left running must not race it)."""
    monkeypatch.setattr("annotator.jobs.enqueue", lambda *args, **kw: None)


@pytest.mark.django_db(transaction=True)
def test_cancelling_stops_the_items_not_started(make_unit, project, add_server, no_queue):
    unit = make_unit(n_open=3)
    unit.qa_pairs.update(status="verified", provenance="machine_kept")
    add_server("vlm")
    evaluation = runs.start(project, server="vlm")
    runs.cancel(evaluation)
    assert runs.execute(evaluation.pk) == "gone"
    assert set(Prediction.objects.values_list("status", flat=True)) == {"cancelled"}
    with pytest.raises(Exception, match="only a queued or running one can be cancelled"):
        runs.cancel(evaluation)
    code, out, _ = _evaluate("--project", project.slug, "--status", str(evaluation.pk), "--json")
    assert code == 0 and json.loads(out)["items"]["cancelled"] == 4
    code, out, _ = _evaluate("--project", project.slug, "--status", str(evaluation.pk))
    assert out.startswith(f"evaluation {evaluation.pk} cancelled: {evaluation.model} judged by")
    with pytest.raises(CommandError, match="has no evaluation 999999"):
        call_command("evaluate", "--project", project.slug, "--cancel", "999999")
    with pytest.raises(CommandError, match="frames must be a whole number from 1 to 64"):
        call_command("evaluate", "--project", project.slug, "--server", "vlm", "--frames", "0")


@pytest.mark.django_db(transaction=True)
def test_an_item_whose_video_has_no_file_fails_with_that_reason(make_unit, project, add_server, model_server, no_queue):
    unit = make_unit(n_open=1)
    unit.qa_pairs.update(status="verified", provenance="machine_kept")
    add_server("vlm")
    evaluation = runs.start(project, server="vlm")
    assert runs.execute(evaluation.pk) == "failed"
    errors = set(Prediction.objects.values_list("status", "error"))
    assert errors == {("failed", "video clip1.mp4 has no stored file; frames cannot be sampled")}
    assert model_server.requests == []


@pytest.mark.django_db(transaction=True)
def test_two_items_asking_the_same_thing_at_once_each_keep_only_their_own_calls(
    worker, short_video, model_server, add_server, project
):
    call_command("ingest", str(short_video), "--project", project.slug, "--wait", stdout=StringIO())
    unit = WorkUnit.objects.create(project=project, video=project.videos.get(), start_s=0.0, end_s=3.0)
    twins = [add_verified(unit, "scene", "What is shown?", "a test card", "machine_kept") for _ in range(2)]
    add_server("vlm", price_prompt_per_mtok=1.0, price_completion_per_mtok=1.0)
    model_server.delay_s = 0.3  # both items are in flight together: neither finds the other's answer in the cache
    answer_free_text(model_server, lambda text, night: "A test card.")
    model_server.responders["judge"] = fair_judge
    evaluation = runs.start(project, server="vlm", n_frames=1)
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).status == "done", timeout=60, what="the evaluation")
    a, b = (Prediction.objects.get(qa_pair=t) for t in twins)
    # Each item's predict and judge calls are its own rows: requests, or, when the machine is slow
    # enough that one item's answer is cached before the other asks, a cache-hit row of its own.
    hits = ModelCall.objects.filter(cached_from__isnull=False).count()
    assert ModelCall.objects.count() == 4 and len(model_server.requests) + hits == 4
    assert len(a.call_ids) == len(b.call_ids) == 2 and not set(a.call_ids) & set(b.call_ids)
    assert set(a.call_ids) | set(b.call_ids) == set(ModelCall.objects.values_list("id", flat=True))
    assert a.cost_usd + b.cost_usd == pytest.approx(sum(ModelCall.objects.values_list("cost_usd", flat=True)))
    assert (a.predict_call.request["prediction"], b.judge_call.request["prediction"]) == (a.pk, b.pk)
