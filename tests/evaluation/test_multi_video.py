"""Multi-video items evaluated end to end (EgoExoBench seed 001): a real Celery worker samples frames
with ffmpeg from every video of the item and asks the loopback model once per item, each video's
frames introduced by its label in order (App. B.1, Fig. 18), the evaluation's frames split evenly
across the videos; the option letter is scored exactly (Sec. 4.1); evaluating again is answered
from the cache.

- A QA pair of an ego-exo set (Sec. 3): the ego and two exo views, each over the pair's clip in its
  own time (member time = ego time + offset_s), labelled "ego", "exo 1", "exo 2".
- A QA pair whose options are videos (Fig. 2): its labelled videos over their own ranges, under
  their labels ("Query video", "Video 1", "Video 2"); a labelled video that cannot give frames
  fails the item with a reason naming its label.

The three videos have different frame sizes, so the test knows which video each image came from."""

from __future__ import annotations

import base64
import io
from io import StringIO

import pytest
from django.core.management import call_command
from PIL import Image

from annotator.evaluation import prompts, runs
from annotator.evaluation.models import Evaluation, Prediction
from annotator.media.models import Video
from annotator.media.services import make_ego_exo_set
from annotator.qa.models import QAPair, QAType, WorkUnit
from tests.conftest import make_video, wait_for
from tests.fake_model_server import n_images, user_text

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = {"ego.mp4": "160x120", "left.mp4": "192x144", "right.mp4": "224x128"}


@pytest.fixture
def footage(worker, project, tmp_path):
    """Three 4 s videos of different frame sizes ingested by the worker: {file name: Video}."""
    for name, size in SIZES.items():
        make_video(tmp_path / name, seconds=4.0, size=size, audio=False)
        call_command("ingest", str(tmp_path / name), "--project", project.slug, "--wait", stdout=StringIO())
    videos = {v.filename: v for v in Video.objects.filter(project=project, status="ready")}
    assert set(videos) == set(SIZES)
    return videos


def _parts(body: dict) -> list[str]:
    """The user message's parts in order: text parts as they are, images as "WxH"."""
    out = []
    for part in body["messages"][-1]["content"]:
        if part["type"] == "text":
            out.append(part["text"])
        else:
            jpeg = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            out.append("{}x{}".format(*Image.open(io.BytesIO(jpeg)).size))
    return out


def _pair(unit, qt, question, options, answer_index, **fields) -> QAPair:
    return QAPair.objects.create(
        project=unit.project,
        unit=unit,
        video=unit.video,
        qa_type=qt,
        origin="human",
        question=question,
        answer=options[answer_index],
        options=options,
        answer_index=answer_index,
        clip_start_s=0.5,
        clip_end_s=2.5,
        status="verified",
        provenance="human_added",
        **fields,
    )


def _run(project, add_server, model_server, replies: dict[str, str], n_frames: int) -> Evaluation:
    model_server.responders[""] = lambda body: next(r for q, r in replies.items() if q in user_text(body))
    add_server("fake")
    evaluation = runs.start(project, server="fake", n_frames=n_frames)
    wait_for(
        lambda: Evaluation.objects.get(pk=evaluation.pk).status in ("done", "failed"),
        timeout=120,
        what="the evaluation",
    )
    return evaluation


def _asked(model_server, question: str) -> dict:
    (body,) = [b for b in model_server.requests if question in user_text(b)]
    return body


def test_an_ego_exo_item_is_asked_once_of_every_view_each_introduced_by_its_label(
    footage, project, add_server, model_server
):
    ego, left, right = footage["ego.mp4"], footage["left.mp4"], footage["right.mp4"]
    group = make_ego_exo_set(ego, [(left, 0.5), (right, 1.0)], name="street")
    qt = QAType.objects.create(project=project, slug="view_relation", name="View relation", set_kind="ego_exo")
    unit = WorkUnit.objects.create(project=project, video=ego, group=group, start_s=0.0, end_s=3.0)
    views = ["ego", "exo 1", "exo 2"]
    _pair(unit, qt, "Which view shows the scene from above?", views, 1)
    _pair(unit, qt, "Which view is the camera wearer's?", views, 0)
    # 7 frames over 3 views: 2 per view (7 // 3), the remainder not sent.
    evaluation = _run(project, add_server, model_server, {"from above": "B", "wearer": "Answer: C."}, n_frames=7)

    items = {p.question: p for p in Prediction.objects.filter(evaluation=evaluation)}
    assert len(items) == 2 and {(p.role, p.kind, p.status, p.video_id) for p in items.values()} == {
        ("ego_exo", "mcq", "done", ego.pk)
    }
    above, wearer = items["Which view shows the scene from above?"], items["Which view is the camera wearer's?"]
    assert (above.choice_letter, above.choice_index, above.correct) == ("B", 1, True)
    assert (wearer.choice_letter, wearer.choice_index, wearer.correct) == ("C", 2, False)
    # Each view over ego time 0.5-2.5 s in its own time: ego +0, exo 1 +0.5 s, exo 2 +1.0 s.
    assert above.frame_times == [1.0, 2.0, 1.5, 2.5, 2.0, 3.0]

    body = _asked(model_server, "from above")
    assert n_images(body) == 6
    text, *rest = _parts(body)
    e, a, b = (SIZES[v] for v in ("ego.mp4", "left.mp4", "right.mp4"))
    assert rest == ["ego:", e, e, "exo 1:", a, a, "exo 2:", b, b]
    assert text == prompts.ask_videos(
        "Which view shows the scene from above?", labels=views, per_video=2, options=views, ego_exo=True
    )
    assert text.startswith(
        "You will be provided with 3 videos: ego, exo 1, exo 2. Each video's label is followed by "
        "its frames, 2 frames per video"
    )
    assert "A. ego\nB. exo 1\nC. exo 2\nAnswer with the option's letter" in text
    assert body["messages"][0]["content"] == prompts.PREDICT_VIDEOS.system

    # Evaluated again: every answer comes from the cache (same frames, labels and text), no request.
    asked = len(model_server.requests)
    again = runs.start(project, server="fake", n_frames=7)
    wait_for(lambda: Evaluation.objects.get(pk=again.pk).status == "done", timeout=120, what="the second evaluation")
    assert len(model_server.requests) == asked
    assert sorted(Prediction.objects.filter(evaluation=again).values_list("question", "correct", "cost_usd")) == [
        ("Which view is the camera wearer's?", False, 0.0),
        ("Which view shows the scene from above?", True, 0.0),
    ]


def test_an_item_whose_options_are_videos_shows_each_labelled_video_under_its_label(
    footage, project, add_server, model_server
):
    ego, left, right = footage["ego.mp4"], footage["left.mp4"], footage["right.mp4"]
    broken = Video.objects.create(
        project=project, sha256="f" * 64, filename="broken.mp4", status="failed", duration_s=4.0
    )
    qt = QAType.objects.create(project=project, slug="task_relation", name="Task relation")
    unit = WorkUnit.objects.create(project=project, video=ego, start_s=0.0, end_s=4.0)

    def labelled(second):
        return [
            {"label": "Query video", "video_id": ego.pk, "role": "query", "start_s": 0.0, "end_s": 4.0},
            {"label": "Video 1", "video_id": left.pk, "role": "candidate", "start_s": 1.0, "end_s": 3.0},
            {"label": "Video 2", "video_id": second.pk, "role": "candidate", "start_s": 2.0, "end_s": 4.0},
        ]

    question = "Which candidate video matches the activities in the query video?"
    _pair(unit, qt, question, ["Video 1", "Video 2"], 1, videos=labelled(right))
    _pair(unit, qt, "Which candidate is the same task?", ["Video 1", "Video 2"], 0, videos=labelled(broken))
    # 8 frames over 3 videos: 2 each.
    evaluation = _run(
        project, add_server, model_server, {"matches the activities": "(B)", "same task": "A"}, n_frames=8
    )

    items = {p.question: p for p in Prediction.objects.filter(evaluation=evaluation)}
    assert len(items) == 2 and {p.role for p in items.values()} == {"videos"}
    match = items[question]
    assert (match.status, match.choice_letter, match.choice_index, match.correct) == ("done", "B", 1, True)
    assert match.frame_times == [1.0, 3.0, 1.5, 2.5, 2.5, 3.5]  # each in its own video's range
    body = _asked(model_server, "matches the activities")
    text, *rest = _parts(body)
    e, a, b = (SIZES[v] for v in ("ego.mp4", "left.mp4", "right.mp4"))
    assert rest == ["Query video:", e, e, "Video 1:", a, a, "Video 2:", b, b]
    assert text.startswith("You will be provided with 3 videos: Query video, Video 1, Video 2.")
    assert "synchronised" not in text and "A. Video 1\nB. Video 2\nAnswer with the option's letter" in text

    failed = items["Which candidate is the same task?"]
    assert (failed.status, failed.correct) == ("failed", None)
    assert failed.error == "Video 2: video broken.mp4 is not ready (failed); frames cannot be sampled"
    assert not [b for b in model_server.requests if "same task" in user_text(b)]
    assert Evaluation.objects.get(pk=evaluation.pk).status == "failed"


def test_captions_are_in_the_cache_key_only_when_there_are_some():
    import hashlib
    import json

    from annotator.inference import engine

    endpoint = engine.Endpoint(server="s", base_url="http://127.0.0.1:9/v1", model="m")
    stage = prompts.PREDICT_VIDEOS
    plain = engine.StageInput(text="Which?", image_key="k")
    before = [endpoint.model, stage.name, stage.prompt_version, stage.system, stage.schema, "Which?", "k"]
    # Inputs without captions keep the key they had before captions existed (cached answers stay found).
    assert (
        engine.cache_key(stage, endpoint, plain)
        == hashlib.sha256(json.dumps(before, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    )
    ego_first = engine.StageInput(text="Which?", image_key="k", captions={0: "ego:", 2: "exo 1:"})
    exo_first = engine.StageInput(text="Which?", image_key="k", captions={0: "exo 1:", 2: "ego:"})
    keys = {engine.cache_key(stage, endpoint, x) for x in (plain, ego_first, exo_first)}
    assert len(keys) == 3
