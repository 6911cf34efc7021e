"""Ablations as conditions (issue 18 part 6): ``evaluate --ablation`` is recorded on the evaluation and
changes only the model's input: ``text_only`` sends no image (EgoExoBench's text-only check, seed 001
Sec. 3.2), ``one_frame`` one frame per video and ``shuffled_frames`` each video's frames in a seeded
order (VUDG's static-bias checks, seed 004); each is its own column in the benchmark report."""

from __future__ import annotations

import base64
from io import StringIO

import pytest
from django.core.management import call_command

from annotator.evaluation.models import Evaluation, Prediction
from annotator.media.models import Video
from annotator.qa.models import QAPair, QAType, WorkUnit
from tests.conftest import make_video
from tests.fake_model_server import user_text

pytestmark = pytest.mark.django_db(transaction=True)


def _images(body: dict) -> list[bytes]:
    return [
        base64.b64decode(p["image_url"]["url"].split(",", 1)[1])
        for p in body["messages"][-1]["content"]
        if p["type"] == "image_url"
    ]


def _run(project, ablation: str) -> tuple[Evaluation, dict]:
    args = ["evaluate", "--project", project.slug, "--server", "fake", "--frames", "4"]
    call_command(*args, *(["--ablation", ablation] if ablation else []), stdout=StringIO(), stderr=StringIO())
    evaluation = Evaluation.objects.get(ablation=ablation)
    return evaluation, Prediction.objects.select_related("predict_call").get(evaluation=evaluation)


def test_each_ablation_changes_only_what_the_model_sees_and_is_recorded(
    worker, project, add_server, model_server, tmp_path
):
    make_video(tmp_path / "v.mp4", seconds=4.0, size="160x120", audio=False)
    call_command("ingest", str(tmp_path / "v.mp4"), "--project", project.slug, "--wait", stdout=StringIO())
    video = Video.objects.get(project=project, status="ready")
    qt = QAType.objects.create(project=project, slug="objects", name="Objects")
    unit = WorkUnit.objects.create(project=project, video=video, start_s=0.0, end_s=4.0)
    QAPair.objects.create(
        project=project,
        unit=unit,
        video=video,
        qa_type=qt,
        origin="human",
        question="What is shown?",
        answer="a pattern",
        options=["a pattern", "a cat"],
        answer_index=0,
        clip_start_s=0.0,
        clip_end_s=4.0,
        status="verified",
        provenance="human_added",
    )
    model_server.responders[""] = lambda body: "A"
    add_server("fake")

    bodies = {}
    for ablation in ("", "text_only", "one_frame", "shuffled_frames"):
        before = len(model_server.requests)
        evaluation, p = _run(project, ablation)
        (body,) = model_server.requests[before:]
        bodies[ablation] = body
        assert (evaluation.status, evaluation.ablation, p.correct) == ("done", ablation, True)
        assert user_text(body).startswith("Please carefully read the question")

    plain = _images(bodies[""])
    assert len(plain) == 4 and len(set(plain)) == 4
    assert _images(bodies["text_only"]) == []
    assert len(_images(bodies["one_frame"])) == 1
    shuffled = _images(bodies["shuffled_frames"])
    assert sorted(shuffled) == sorted(plain) and shuffled != plain
    # The question text is the one the plain run sent (the text-only check asks the same question).
    assert user_text(bodies["text_only"]) == user_text(bodies[""])
    shuffled_call = Prediction.objects.get(evaluation__ablation="shuffled_frames").predict_call
    assert shuffled_call.request["ablation"] == "shuffled_frames" and shuffled_call.request["shuffle_seed"]

    # Each is its own column of the benchmark report, beside the plain model.
    from annotator.reports import selectors as reports

    report = reports.build(
        project, evaluations=list(Evaluation.objects.order_by("id").values_list("pk", flat=True)), by=["qa_type"]
    )
    assert set(report["columns"]) == {
        "fake-vlm",
        "fake-vlm (text only (no frames))",
        "fake-vlm (one frame per video)",
        "fake-vlm (frames in a shuffled order)",
    }


def test_a_shuffled_order_is_never_the_frames_own_order():
    """``shuffled_frames`` must move the frames: with ``rng.shuffle`` alone, 2 frames stayed in their
    order for half the seeds and 4 frames for 1 in 24 (a CI run drew such a seed). Over 300 seeds per
    length, every order is a permutation and never the identity, every other permutation of 2 to 4
    frames is drawn, and the same seed draws the same order."""
    import itertools
    import random

    from annotator.evaluation.runs import shuffled_order

    assert shuffled_order(0, random.Random(1)) == [] and shuffled_order(1, random.Random(1)) == [0]
    for n in (2, 3, 4, 8):
        orders = [shuffled_order(n, random.Random(f"7:{i}")) for i in range(300)]
        assert all(sorted(o) == list(range(n)) and o != list(range(n)) for o in orders)
        if n <= 4:
            others = set(itertools.permutations(range(n))) - {tuple(range(n))}
            assert {tuple(o) for o in orders} == others
        assert orders == [shuffled_order(n, random.Random(f"7:{i}")) for i in range(300)]
