"""The import pipeline with interval answers (temporal localisation, X-LeBench seed 002 App. C.1):
a verified life-log item exported by ``export_qa`` is read back onto the log's unit with its clip
and interval in virtual seconds, a one-video interval row creates an interval QA type, and
intervals that are not numbers, end before they start, lie outside the log or the video, are given
to a text QA type or are missing from an interval one are refused by line number with nothing
written. The import jobs run on the real worker."""

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from annotator.drafts.models import Draft, DraftRun
from annotator.media.lifelogs import build_life_log, read_rows
from annotator.media.models import Video
from annotator.projects.services import ensure_member, ensure_project
from annotator.qa.models import QAPair, QAType, Revision, WorkUnit
from tests.drafts.conftest import run_draft


def _video(project, name, seconds):
    return Video.objects.create(
        project=project,
        sha256=hashlib.sha256(f"{project.slug}/{name}".encode()).hexdigest(),
        filename=name,
        status="ready",
        duration_s=seconds,
        fps=25.0,
        width=320,
        height=240,
    )


@pytest.fixture
def life_log():
    """Project ``imp`` with a life log of three parts (08:00 600 s, 08:30 900 s, 09:00 300 s: span
    3900 virtual s), a life-log interval QA type, a text QA type and a 20 s video of its own."""
    project = ensure_project("imp", "Import")
    rows = []
    for i, (start, seconds) in enumerate([("08:00:00", 600.0), ("08:30:00", 900.0), ("09:00:00", 300.0)]):
        _video(project, f"part{i}.mp4", seconds)
        rows.append((f"rows[{i}]", {"file": f"part{i}.mp4", "start": f"2024-05-01T{start}"}))
    log = build_life_log(project, "day", read_rows(rows)).group
    QAType.objects.create(
        project=project, slug="moment_query", name="Moment query", set_kind="life_log", answer_kind="interval"
    )
    QAType.objects.create(project=project, slug="scene", name="Scene")
    kitchen = _video(project, "kitchen.mp4", 20.0)
    return project, log, kitchen


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _import(path) -> dict:
    code, out, err = run_draft("--project", "imp", "--pipeline", "import", "--file", str(path), "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.django_db(transaction=True)
def test_an_exported_life_log_interval_item_is_read_back_onto_the_logs_unit_with_its_interval(
    worker, life_log, tmp_path
):
    project, log, _ = life_log
    first = log.members.get(position=0).video
    annotator, _ = ensure_member("ann", role="annotator", project=project)
    unit = WorkUnit.objects.create(project=project, video=first, group=log, start_s=0.0, end_s=3900.0)
    verified = QAPair.objects.create(
        project=project,
        unit=unit,
        video=first,
        qa_type=QAType.objects.get(slug="moment_query"),
        origin="human",
        question="When does C ride a bike?",
        answer="08:31:00-08:33:00",
        clip_start_s=1500.0,
        clip_end_s=3900.0,
        answer_start_s=1860.0,
        answer_end_s=1980.0,
        status="verified",
        provenance="human_added",
        verified_at=timezone.now(),
    )
    Revision.objects.create(qa_pair=verified, actor_user=annotator, action="add", after=verified.snapshot())
    exported = tmp_path / "qa.jsonl"
    call_command("export_qa", "--project", "imp", "--out", str(exported), stderr=StringIO())
    row = json.loads(exported.read_text())
    assert (row["video"]["filename"], row["clip_start_s"], row["answer_start_s"]) == ("part0.mp4", 1500.0, 1860.0)

    report = _import(exported)

    assert report["status"] == "done" and report["summary"]["imported"] == 1
    pair = QAPair.objects.exclude(pk=verified.pk).select_related("unit", "draft").get()
    assert (pair.unit.group_id, pair.unit.video_id, pair.unit.start_s, pair.unit.end_s) == (
        log.pk,
        first.pk,
        0.0,
        3900.0,
    )
    assert (pair.clip_start_s, pair.clip_end_s, pair.answer_start_s, pair.answer_end_s) == (
        1500.0,
        3900.0,
        1860.0,
        1980.0,
    )
    assert (pair.status, pair.answer, pair.qa_type.slug) == ("draft", "08:31:00-08:33:00", "moment_query")
    assert (pair.draft.params["answer_start_s"], pair.draft.params["answer_end_s"]) == (1860.0, 1980.0)
    assert pair.revisions.get().after["answer_start_s"] == 1860.0


@pytest.mark.django_db(transaction=True)
def test_a_one_video_interval_row_creates_an_interval_qa_type_and_carries_its_interval(worker, life_log, tmp_path):
    project, _, kitchen = life_log
    path = _write(
        tmp_path / "moments.jsonl",
        [
            {
                "video": "kitchen.mp4",
                "qa_type": "action_moment",
                "answer_kind": "interval",
                "question": "When is the kettle switched on?",
                "answer_start_s": 4.5,
                "answer_end_s": 9,
            },
            {
                "video": "kitchen.mp4",
                "qa_type": "action_moment",
                "question": "When is the tap opened?",
                "prediction": "",
                "answer_start_s": 12.0,
                "answer_end_s": 13.5,
                "model": "m1",
            },
        ],
    )

    report = _import(path)

    assert report["summary"] == {"imported": 2, "predictions": 1, "already_imported": 0}
    qa_type = QAType.objects.get(project=project, slug="action_moment")
    assert (qa_type.set_kind, qa_type.answer_kind) == ("", "interval")
    kettle, tap = QAPair.objects.order_by("id")
    assert (kettle.unit.video_id, kettle.unit.group_id, kettle.clip_start_s, kettle.clip_end_s) == (
        kitchen.pk,
        None,
        0.0,
        20.0,
    )
    assert (kettle.answer_start_s, kettle.answer_end_s, kettle.answer) == (4.5, 9.0, "4.50-9.00 s")
    assert (tap.answer_start_s, tap.answer_end_s, tap.draft.params["kind"]) == (12.0, 13.5, "prediction")


@pytest.mark.django_db(transaction=True)
def test_bad_interval_rows_are_refused_by_line_number_and_nothing_is_written(life_log, tmp_path):
    moment = {
        "video": "part0.mp4",
        "qa_type": "moment_query",
        "question": "When does C eat?",
        "answer_start_s": 100.0,
        "answer_end_s": 200.0,
    }
    path = _write(
        tmp_path / "bad.jsonl",
        [
            moment,
            {
                "video": "kitchen.mp4",
                "qa_type": "scene",
                "question": "Where is C?",
                "answer": "a kitchen",
                "answer_start_s": 1.0,
                "answer_end_s": 2.0,
            },
            {**moment, "answer_start_s": 300.0, "answer_end_s": 250.0},
            {**moment, "answer_start_s": "08:31", "answer_end_s": 250.0},
            {**moment, "answer_start_s": 3800.0, "answer_end_s": 3950.0},
            {**moment, "answer_start_s": None, "answer_end_s": None, "answer": "at lunch"},
            {**moment, "video": "part1.mp4"},
            {**moment, "answer_end_s": None},
            {
                "video": "kitchen.mp4",
                "qa_type": "fresh_moment",
                "answer_kind": "interval",
                "question": "When?",
                "answer_start_s": 15.0,
                "answer_end_s": 21.0,
            },
            {**moment, "answer_kind": "text"},
        ],
    )
    counts = (DraftRun.objects.count(), Draft.objects.count(), QAPair.objects.count(), QAType.objects.count())

    with pytest.raises(CommandError) as refused:
        run_draft("--project", "imp", "--pipeline", "import", "--file", path)

    assert str(refused.value) == (
        "bad.jsonl: 9 malformed lines; nothing was imported: "
        "line 2: qa_type scene has text answers, not a time interval: drop answer_start_s and answer_end_s, "
        "or import it into an interval QA type; "
        "line 3: the answer interval must end after it starts (answer_end_s > answer_start_s); "
        "line 4: answer_start_s must be a number of seconds from 0; "
        "line 5: the answer interval 3800-3950 s is not within life log day (3900 virtual s); "
        "line 6: qa_type moment_query answers with a time interval: give answer_start_s and answer_end_s; "
        "line 7: part1.mp4 is not the first part of a life log, and rows of the life-log QA type moment_query "
        "name the log's first part (times are virtual seconds); "
        "line 8: an interval answer needs both answer_start_s and answer_end_s; "
        "line 9: the answer interval 15-21 s is not within kitchen.mp4 (20 s); "
        "line 10: qa_type moment_query has interval answers in this project, not text answers"
    )
    assert (DraftRun.objects.count(), Draft.objects.count(), QAPair.objects.count(), QAType.objects.count()) == counts
    assert not QAType.objects.filter(slug="fresh_moment").exists()
