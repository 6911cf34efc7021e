"""Fixtures of the evaluation tests: real footage as a day-night pair, verified QA pairs on it, a
loopback model that answers by question and by what its frames show, a judge that compares the
answer with the truth, and an evaluation built row by row for tests that need no model."""

from __future__ import annotations

import base64
import io
import re
import threading
from io import StringIO

import pytest
from django.core.management import call_command
from PIL import Image, ImageStat

from annotator.evaluation.models import Evaluation, Prediction
from annotator.inference.models import ModelServer
from annotator.media.models import Video
from annotator.qa.models import QAPair, WorkUnit
from annotator.qa.services import ensure_qa_type
from tests.conftest import wait_for
from tests.fake_model_server import user_text

DARK = 60  # mean luminance (0-255) under which the loopback model "sees" night


def first_frame_luminance(body: dict) -> float | None:
    """Mean luminance of the first image of a request, or None when it has none."""
    for part in body["messages"][-1]["content"]:
        if isinstance(part, dict) and part.get("type") == "image_url":
            jpeg = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            return ImageStat.Stat(Image.open(io.BytesIO(jpeg)).convert("L")).mean[0]
    return None


def answer_free_text(server, answer) -> None:
    """Answer the loopback server's requests without a schema (the evaluated model's) with
    ``answer(question_text, is_night) -> str``; requests with a schema (the judge's) go on as before.
    Failures ordered with ``fail_next`` still apply. Free-text requests are answered one at a time."""
    original, lock = server._answer, threading.Lock()

    def _answer(handler, body):
        if body.get("response_format"):
            return original(handler, body)
        luminance = first_frame_luminance(body)
        reply = answer(user_text(body), luminance is not None and luminance < DARK)
        with lock:
            server.replies = [reply]
            return original(handler, body)

    server._answer = _answer


_TRUTH = re.compile(r"Ground truth correct Answer: (.*)\nPredicted Answer: (.*)\nProvide", re.DOTALL)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", text.lower()).strip()


def fair_judge(body: dict) -> dict:
    """EgoNight's judge on loopback: correct when the prediction contains the truth (score 5 when it
    is the truth, else 4), else incorrect with score 0."""
    truth, predicted = (_norm(x) for x in _TRUTH.search(user_text(body)).groups())
    if truth and truth in predicted:
        return {"pred": "correct", "score": 5 if truth == predicted else 4, "reason": f"it says {truth}"}
    return {"pred": "incorrect", "score": 0, "reason": f"it does not say {truth}"}


@pytest.fixture
def night_pair(worker, real_video, project, tmp_path):
    """bikes.mp4 (real, day) ingested into ``project`` and its synthetic night rendition at
    EgoNight's hard level (``derive_night``), paired with offset 0. Returns (day, night)."""
    call_command("ingest", str(real_video), "--project", project.slug, "--wait", stdout=StringIO())
    day = Video.objects.get(project=project, filename="bikes.mp4", status="ready")
    Video.objects.filter(pk=day.pk).update(illumination="day")
    call_command("derive_night", "--project", project.slug, "--levels", "hard", stdout=StringIO())
    night = wait_for(
        lambda: Video.objects.filter(derived_from=day, status="ready").first(), timeout=120, what="the night rendition"
    )
    day.refresh_from_db()
    return day, night


def add_verified(
    unit: WorkUnit,
    qa_type: str,
    question: str,
    answer: str,
    provenance: str,
    *,
    options: list[str] | None = None,
    answer_index: int | None = None,
    start_s: float = 0.0,
    end_s: float | None = None,
    paired: bool = False,
) -> QAPair:
    """A verified QA pair of ``unit`` with ``provenance`` (no revisions: enough for evaluation)."""
    qt = ensure_qa_type(unit.project, qa_type, paired=paired)
    return QAPair.objects.create(
        project=unit.project,
        unit=unit,
        video=unit.video,
        qa_type=qt,
        origin="human" if provenance == "human_added" else "machine",
        question=question,
        answer=answer,
        options=options,
        answer_index=answer_index,
        clip_start_s=start_s,
        clip_end_s=unit.end_s if end_s is None else end_s,
        status="verified",
        provenance=provenance,
    )


@pytest.fixture
def judged_evaluation(project, add_server):
    """Factory: a done evaluation (no model called) with one judged open answer per label given
    (``labels``: "correct"/"incorrect"), scores 4 and 1, on one video-less QA type."""

    def make(labels: list[str], *, rubric: str = "egonight") -> Evaluation:
        server = ModelServer.objects.filter(project=project, name="judge-host").first() or add_server("judge-host")
        e = Evaluation.objects.create(
            project=project,
            server=server,
            judge_server=server,
            model="vlm",
            judge_model="judge-llm",
            endpoint=server.snapshot(),
            judge_endpoint=server.snapshot(),
            rubric=rubric,
            prompt_version="test",
            status="done",
        )
        Prediction.objects.bulk_create(
            [
                Prediction(
                    evaluation=e,
                    kind="open",
                    qa_type="scene",
                    illumination="night",
                    source="real",
                    provenance="machine_kept",
                    question=f"Question {i}?",
                    truth=f"truth {i}",
                    prediction=f"answer {i}",
                    clip_start_s=0,
                    clip_end_s=3,
                    status="done",
                    judge_pred=label,
                    judge_score=4 if label == "correct" else 1,
                    judge_reason=f"reason {i}",
                )
                for i, label in enumerate(labels)
            ]
        )
        return e

    return make
