"""One stimulus, two subjects (issue 18): a study item's participant and a model evaluated on the
study (``evaluate --study``) get the same videos, under the same labels, over the same ranges, in
the same order, for every set kind: one video, an ego-exo set (every view with its sync offset), a
QA pair whose options are videos (each under its label), a day-night pair of a paired QA type (both
videos) and a life log (its segments in virtual time). The model's answers become a model
participant's trials, scored by the study's own scoring beside the people.

Real footage ingested by a real worker, real clips cut by ffmpeg, the loopback model server."""

from __future__ import annotations

import json
import subprocess
from io import StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command

from annotator.evaluation.models import Evaluation, Prediction
from annotator.media.models import Video
from annotator.media.services import make_day_night_group, make_ego_exo_set
from annotator.qa import stimulus
from annotator.qa.models import QAPair, QAType, WorkUnit
from annotator.studies import selectors, services
from annotator.studies.kinds import mcq
from annotator.studies.models import Item, Participant, Trial
from tests.conftest import make_video, wait_for
from tests.fake_model_server import user_text

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = {"ego.mp4": "160x120", "left.mp4": "192x144", "right.mp4": "224x128"}
LETTERS = "ABCDEFGH"


@pytest.fixture
def footage(worker, project, tmp_path):
    """Three 4 s videos of different frame sizes and a life log of two 3 s parts (08:00:00 and
    08:01:00), all ingested by the worker: {file name: Video}, and the log."""
    from annotator.media.lifelogs import build_life_log, read_rows

    for name, size in SIZES.items():
        make_video(tmp_path / name, seconds=4.0, size=size, audio=False)
        call_command("ingest", str(tmp_path / name), "--project", project.slug, "--wait", stdout=StringIO())
    rows = []
    for i, start in enumerate(["08:00:00", "08:01:00"]):
        make_video(tmp_path / f"p{i}.mp4", seconds=3.0, size=("176x144", "208x160")[i], audio=False)
        rows.append((f"rows[{i}]", {"path": f"p{i}.mp4", "start": f"2024-05-01T{start}"}))
    log = build_life_log(project, "day", read_rows(rows), base_dir=tmp_path).group
    wait_for(lambda: Video.objects.filter(project=project, status="ready").count() == 5, what="5 videos transcoded")
    return {v.filename: v for v in Video.objects.filter(project=project)}, log


def _pair(unit, qt, question, options, answer_index, *, start=0.5, end=2.5, **fields) -> QAPair:
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
        clip_start_s=start,
        clip_end_s=end,
        status="verified",
        provenance="human_added",
        **fields,
    )


def _duration(name: str) -> float:
    with default_storage.open(name, "rb") as f:
        data = f.read()
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json", "-i", "pipe:0"],
        input=data,
        capture_output=True,
        check=True,
    )
    return float(json.loads(out.stdout)["format"]["duration"])


def test_participants_and_models_get_the_same_media_for_every_set_kind(
    footage, project, annotator, add_server, model_server
):
    videos, log = footage
    ego, left, right = videos["ego.mp4"], videos["left.mp4"], videos["right.mp4"]
    types = {
        slug: QAType.objects.create(project=project, slug=slug, name=slug, **extra)
        for slug, extra in (
            ("single", {}),
            ("views", {"set_kind": "ego_exo"}),
            ("candidates", {}),
            ("night", {"paired": True}),
            ("log", {}),
            ("other", {}),
        )
    }
    plain = WorkUnit.objects.create(project=project, video=ego, start_s=0.0, end_s=4.0)
    _pair(plain, types["single"], "What is in the middle?", ["a cup", "a shoe", "a hat"], 0)
    _pair(plain, types["other"], "Left out by the QA-type filter?", ["yes", "no"], 0)
    ego_exo = make_ego_exo_set(ego, [(left, 0.5), (right, 1.0)], name="street")
    views = WorkUnit.objects.create(project=project, video=ego, group=ego_exo, start_s=0.0, end_s=3.0)
    _pair(views, types["views"], "Which view is from above?", ["ego", "exo 1", "exo 2"], 1)
    _pair(
        plain,
        types["candidates"],
        "Which candidate matches the query?",
        ["Video 1", "Video 2"],
        1,
        videos=[
            {"label": "Query video", "video_id": ego.pk, "role": "query", "start_s": 0.0, "end_s": 4.0},
            {"label": "Video 1", "video_id": left.pk, "role": "candidate", "start_s": 1.0, "end_s": 3.0},
            {"label": "Video 2", "video_id": right.pk, "role": "candidate", "start_s": 2.0, "end_s": 4.0},
        ],
    )
    pair = make_day_night_group(ego, right, offset_s=0.5, name="route")
    night = WorkUnit.objects.create(project=project, video=ego, group=pair, start_s=0.0, end_s=3.0)
    _pair(night, types["night"], "Is the door open at night?", ["yes", "no"], 0)
    first_part = log.members.get(position=0).video
    log_unit = WorkUnit.objects.create(project=project, video=first_part, group=log, start_s=0.0, end_s=63.0)
    # Virtual 1.0-61.5 s: the first part from 1 s to its end, the 57 s gap, the second part's first 1.5 s.
    _pair(log_unit, types["log"], "What does C do before the break?", ["cook", "read"], 0, start=1.0, end=61.5)

    study, report = services.create_study(
        project,
        "same-stimulus",
        "mcq",
        seed=3,
        options={"qa_types": ["single", "views", "candidates", "night", "log"], "time_limits": [60, 180]},
    )
    assert report.items == {1: 5, 2: 5} and not report.skipped
    items = {
        i.qa_pair.qa_type.slug: i
        for i in Item.objects.filter(condition__study=study, condition__number=1).select_related("qa_pair__qa_type")
    }
    assert set(items) == {"single", "views", "candidates", "night", "log"}
    layouts = {slug: stimulus.from_json(i.payload).layout for slug, i in items.items()}
    assert layouts == {
        "single": "single",
        "views": "sync",
        "candidates": "labelled",
        "night": "sync",
        "log": "life_log",
    }

    # The person: their page's videos, in order, under the stimulus's labels; clips as long as the ranges.
    participant = services.enroll(study, annotator)
    shown = {}
    for trial in Trial.objects.filter(participant=participant).select_related("item__qa_pair__qa_type"):
        page = mcq.payload(trial)
        shown[trial.item.qa_pair.qa_type.slug] = page
        assert page["video_layout"] == stimulus.from_json(trial.item.payload).layout
        blob = json.dumps(page)
        assert not any(v.filename in blob for v in videos.values()) and "video_id" not in blob and "start_s" not in blob
    expected_labels = {
        "single": ["Video 1"],
        "views": ["ego", "exo 1", "exo 2"],
        "candidates": ["Query video", "Video 1", "Video 2"],
        "night": ["day", "night"],
        "log": ["Life log"],
    }
    assert {slug: [v["label"] for v in page["videos"]] for slug, page in shown.items()} == {
        slug: expected_labels[slug] for slug in shown
    }

    # The model, on the same study: every answer right but the ego-exo one.
    def reply(body):
        text = user_text(body)
        for slug, item in items.items():
            if item.payload["question"] in text:
                right_letter = LETTERS[item.truth]
                return "A" if slug == "views" and right_letter != "A" else "B" if slug == "views" else right_letter
        raise AssertionError(text)

    model_server.responders[""] = reply
    add_server("fake")
    out = StringIO()
    call_command(
        "evaluate", "--study", "same-stimulus", "--server", "fake", "--frames", "1=6,2=3", stdout=out, stderr=StringIO()
    )
    assert "answers stored as model participant 'fake-vlm' of study same-stimulus" in out.getvalue()
    evaluation = Evaluation.objects.get(study=study)
    assert (evaluation.status, evaluation.frames_by_condition, evaluation.participant.model) == (
        "done",
        {"1": 6, "2": 3},
        "fake-vlm",
    )
    predictions = {
        (p.study_item.condition.number, p.qa_type): p
        for p in Prediction.objects.filter(evaluation=evaluation).select_related("study_item__condition")
    }
    assert len(predictions) == 10 and {p.status for p in predictions.values()} == {"done"}

    for slug, item in items.items():
        stim = stimulus.from_json(item.payload)
        p = predictions[(1, slug)]
        call = p.predict_call
        sent = call.request
        if stim.layout == "life_log":
            (medium,) = stim.media
            # Frames over the recorded time of the range only (none from the gap), in virtual seconds.
            assert len(p.frame_times) == 6
            recorded = [(s.virtual_start_s, s.virtual_start_s + s.end_s - s.start_s) for s in medium.segments]
            assert recorded == [(1.0, 3.0), (60.0, 61.5)]
            assert all(any(a <= t <= b for a, b in recorded) for t in p.frame_times)
            # Each frame with its wall-clock time in X-LeBench's context (08:00:00 + virtual seconds).
            assert "08:00:01" in sent["text"] and "08:01:00" in sent["text"] and "08:00:30" not in sent["text"]
            # The person's virtual player: two parts, placed after the range's start, as long as the segments.
            page_log = shown["log"]["videos"][0]
            assert page_log["clock_start"] == "08:00:01" and page_log["duration_s"] == 60.5
            assert [(x["offset_s"], x["duration_s"]) for x in page_log["parts"]] == [(0.0, 2.0), (59.0, 1.5)]
            names = [s["name"] for s in item.payload["media"][0]["segments"]]
            assert [round(_duration(n), 1) for n in names] == [2.0, 1.5]
            continue
        if stim.layout == "single":
            (medium,) = stim.media
            assert sent["video"] == medium.video_id and len(sent["frame_times_s"]) == 6
            assert all(medium.start_s <= t <= medium.end_s for t in sent["frame_times_s"])
        else:
            # Labels, videos and ranges in the person's order; frames split evenly (6 // n per video).
            assert [(v["label"], v["video"]) for v in sent["videos"]] == [(m.label, m.video_id) for m in stim.media]
            per = 6 // len(stim.media)
            for v, m in zip(sent["videos"], stim.media):
                assert len(v["frame_times_s"]) == per and all(m.start_s <= t <= m.end_s for t in v["frame_times_s"])
        for m, entry in zip(stim.media, item.payload["media"]):
            assert abs(_duration(entry["name"]) - (m.end_s - m.start_s)) < 0.15

    # What each ego-exo view is over: ego time 0.5-2.5 s, each member shifted by its sync offset.
    assert [(m.label, m.start_s, m.end_s, m.offset_s) for m in stimulus.from_json(items["views"].payload).media] == [
        ("ego", 0.5, 2.5, 0.0),
        ("exo 1", 1.0, 3.0, 0.5),
        ("exo 2", 1.5, 3.5, 1.0),
    ]
    # The day-night pair: day over the clip, night shifted by the pair's offset.
    assert [(m.label, m.video_id, m.start_s, m.end_s) for m in stimulus.from_json(items["night"].payload).media] == [
        ("day", ego.pk, 0.5, 2.5),
        ("night", right.pk, 1.0, 3.0),
    ]
    # The time-limited condition got its own frames: 3 in all.
    assert len(predictions[(2, "single")].frame_times) == 3
    assert [len(v["frame_times_s"]) for v in predictions[(2, "views")].predict_call.request["videos"]] == [1, 1, 1]
    # The options the model read are the shuffled options the person saw, in the same order.
    for (number, slug), p in predictions.items():
        assert p.options == items[slug].payload["options"]

    # The model is a participant of the study: its answers are trials, scored by the study's scoring.
    model = Participant.objects.get(study=study, kind="model")
    assert (model.model, model.user_id) == ("fake-vlm", None)
    assert Trial.objects.filter(participant=model).count() == 10
    services.score_pending(study.pk)
    table = selectors.score_table(study, per_subtask=False)
    got = {(r["condition"]["number"], r["respondent"]): r["metrics"]["accuracy"]["mean"] for r in table}
    assert got == {(1, "fake-vlm"): 0.8, (2, "fake-vlm"): 0.8}
    # The person's place is not taken by the model: the item counts for raters see people only.
    assert not Participant.objects.filter(study=study, kind="person").exclude(user=annotator).exists()
