"""Interval items of a life log end to end (X-LeBench seed 002 App. C.1): a real Celery worker samples
frames over the log's recorded time (none from its gaps), asks the loopback model with the
time-stamped context, reads the answer's intervals, scores them by tIoU, and the report and the
evaluation page give recall@1 and recall@5 at tIoU 0.3; an answer naming no interval is wrong with
its reason."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from annotator.evaluation import runs
from annotator.evaluation.models import Evaluation, Prediction
from annotator.evaluation.selectors import report
from annotator.media.models import Video, VideoGroup
from annotator.qa.models import QAPair, QAType, WorkUnit
from tests.conftest import make_video, wait_for
from tests.fake_model_server import n_images, user_text

# question -> (true interval in virtual seconds, the loopback model's answer)
ITEMS = {
    "When does C ride?": ((60.0, 63.0), "08:01:00 - 08:01:02"),  # tIoU 2/3 at rank 1
    "When does C cook?": ((600.0, 603.0), "08:00:00 - 08:00:03\n08:10:01 - 08:10:03"),  # rank 1: 0, rank 2: 2/3
    "When does C read?": ((0.0, 3.0), "I did not see C read."),  # unparseable
    "When does C sleep?": ((1.0, 2.0), '{"intervals": [[0, 3]]}'),  # tIoU 1/3 at rank 1
}


@pytest.fixture
def life_log(worker, project, tmp_path):
    """Three 3 s parts at 08:00:00, 08:01:00 and 08:10:00 (gaps of 57 s and 537 s), transcoded."""
    from annotator.media.lifelogs import build_life_log, read_rows

    rows = []
    for i, start in enumerate(["08:00:00", "08:01:00", "08:10:00"]):
        make_video(tmp_path / f"p{i}.mp4", seconds=3.0, size=("160x120", "176x144", "192x144")[i], audio=False)
        rows.append((f"rows[{i}]", {"path": f"p{i}.mp4", "start": f"2024-05-01T{start}"}))
    log = build_life_log(project, "day", read_rows(rows), base_dir=tmp_path).group
    wait_for(lambda: Video.objects.filter(status="ready").count() == 3, what="3 parts transcoded")
    return log


def test_interval_items_are_scored_by_tiou_and_recall(worker, project, admin_user, life_log, model_server, add_server):
    qt = QAType.objects.create(
        project=project, slug="moment_query", name="Moment query", set_kind="life_log", answer_kind="interval"
    )
    first = life_log.members.get(position=0).video
    unit = WorkUnit.objects.create(project=project, video=first, group=life_log, start_s=0.0, end_s=603.0)
    for question, ((a, b), _) in ITEMS.items():
        QAPair.objects.create(
            project=project,
            unit=unit,
            video=first,
            qa_type=qt,
            origin="human",
            question=question,
            answer=f"{a:g}-{b:g}",
            clip_start_s=0.0,
            clip_end_s=603.0,
            answer_start_s=a,
            answer_end_s=b,
            status="verified",
            provenance="human_added",
        )

    def answer(body):
        text = user_text(body)
        return next(reply for q, (_, reply) in ITEMS.items() if q in text)

    model_server.responders[""] = answer
    add_server("fake")
    evaluation = runs.start(project, server="fake", n_frames=6)
    wait_for(lambda: Evaluation.objects.get(pk=evaluation.pk).status == "done", timeout=120, what="the evaluation")

    items = {p.question: p for p in Prediction.objects.filter(evaluation=evaluation)}
    assert {p.kind for p in items.values()} == {"interval"} and {p.role for p in items.values()} == {"life_log"}
    ride = items["When does C ride?"]
    assert ride.intervals == [[60.0, 62.0]] and ride.tious == [pytest.approx(2 / 3, abs=1e-6)] and ride.correct
    cook = items["When does C cook?"]
    assert cook.intervals == [[0.0, 3.0], [601.0, 603.0]] and cook.tious == [0.0, pytest.approx(2 / 3, abs=1e-6)]
    assert cook.correct  # found within 5 (the paper's recall@5), not at rank 1
    read = items["When does C read?"]
    assert read.status == "done" and read.correct is False and read.intervals == []
    assert read.judge_reason.startswith("unparseable answer: no interval found")
    assert items["When does C sleep?"].tious == [pytest.approx(1 / 3, abs=1e-6)]

    # Frames come from recorded time only (each part's 3 s), in time order, 6 per item.
    times = ride.frame_times
    assert len(times) == 6 and times == sorted(times)
    assert all(any(o <= t < o + 3.0 for o in (0.0, 60.0, 600.0)) for t in times), times
    asked = next(b for b in model_server.requests if "When does C ride?" in user_text(b))
    assert n_images(asked) == 6
    text = user_text(asked)
    assert "The following frames are recorded during time of [08:01:00 - 08:01:03]." in text
    assert "frame 1 at 08:00:00" in text and "HH:MM:SS - HH:MM:SS" in text

    summary = report(evaluation)["summary"]
    assert summary["interval_r1"]["value"] == pytest.approx(2 / 4)
    assert summary["interval_r5"]["value"] == pytest.approx(3 / 4)
    assert summary["interval_tiou"]["value"] == pytest.approx((2 / 3 + 0 + 0 + 1 / 3) / 4, abs=1e-4)
    by_type = {row["value"]: row for row in report(evaluation)["breakdown"]["qa_type"]}
    assert by_type["moment_query"]["interval_r5"]["k"] == 3

    client = Client()
    client.force_login(admin_user)
    page = client.get(f"/projects/{project.slug}/evaluation/{evaluation.pk}/").content.decode()
    assert "recall@5 at tIoU 0.3" in page and "75.0%" in page and "50.0%" in page
    api = client.get(f"/api/evaluations/{evaluation.pk}/").json()
    assert api["summary"]["interval_r5"]["k"] == 3
    rows = [
        json.loads(line)
        for line in client.get(f"/api/evaluations/{evaluation.pk}/predictions/?format=jsonl")
        .getvalue()
        .decode()
        .splitlines()
    ]
    assert {r["question"]: r["truth_start_s"] for r in rows}["When does C cook?"] == 600.0
    assert VideoGroup.objects.get(pk=life_log.pk).kind == "life_log"
