"""Life logs (X-LeBench, seed 002 Sec. 3): virtual-time arithmetic, manifest validation with line
numbers, and the lifelog_build command (idempotent re-run)."""

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.media.lifelogs import MAX_SPAN_S, Part, gaps, locate, resume_at, to_virtual
from annotator.media.models import Video, VideoGroup
from tests.conftest import make_video

# Three parts: 08:00-08:10, a 20 min gap, 08:30-08:45, back to back 08:45-09:00.
PARTS = [Part(0, 11, 0.0, 600.0), Part(1, 12, 1800.0, 900.0), Part(2, 13, 2700.0, 900.0)]


def test_locate_maps_virtual_time_to_part_and_local_time():
    assert locate(PARTS, 0.0) == (0, 0.0)
    assert locate(PARTS, 599.5) == (0, 599.5)
    assert locate(PARTS, 600.0) is None  # a part covers [offset, end): 600 is the gap's first second
    assert locate(PARTS, 1000.0) is None  # in the gap
    assert locate(PARTS, 1800.0) == (1, 0.0)
    assert locate(PARTS, 2000.0) == (1, 200.0)
    assert locate(PARTS, 2700.0) == (2, 0.0)  # back to back: the next part starts where one ends
    assert locate(PARTS, 3599.0) == (2, 899.0)
    assert locate(PARTS, 3600.0) is None
    assert locate(PARTS, -1.0) is None


def test_resume_jumps_a_gap_to_the_next_part():
    assert resume_at(PARTS, 1000.0) == (1, 0.0)
    assert resume_at(PARTS, 2000.0) == (1, 200.0)
    assert resume_at(PARTS, 3600.0) is None
    assert to_virtual(PARTS, 1, 200.0) == 2000.0
    assert gaps(PARTS) == [(600.0, 1800.0)]


def _videos(project, *durations):
    out = []
    for i, d in enumerate(durations):
        out.append(
            Video.objects.create(
                project=project,
                sha256=hashlib.sha256(f"ll{i}".encode()).hexdigest(),
                filename=f"part{i}.mp4",
                status=Video.Status.READY,
                duration_s=d,
                fps=25.0,
                width=320,
                height=240,
            )
        )
    return out


def _write(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _build(*args):
    out = StringIO()
    call_command("lifelog_build", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_build_places_parts_and_rerun_changes_nothing(project, tmp_path):
    _videos(project, 600.0, 900.0, 900.0)
    manifest = _write(
        tmp_path,
        "day.jsonl",
        [
            {"file": "part0.mp4", "start": "2024-05-01T08:00:00", "summary": "C cooks breakfast."},
            {"file": "part1.mp4", "start": "2024-05-01T08:30:00", "summary": "C rides a bike."},
            {"file": "part2.mp4", "offset_s": "0:45:00"},
        ],
    )
    out = _build("--project", project.slug, "--name", "day 1", "--manifest", str(manifest))
    assert "created: 3 parts" in out and "1 gaps" in out
    log = VideoGroup.objects.get(name="day 1")
    assert log.kind == "life_log" and log.params["start"] == "2024-05-01T08:00:00"
    assert log.params["summaries"] == ["C cooks breakfast.", "C rides a bike.", ""]
    assert list(log.members.order_by("position").values_list("video__filename", "role", "position", "offset_s")) == [
        ("part0.mp4", "part", 0, 0.0),
        ("part1.mp4", "part", 1, 1800.0),
        ("part2.mp4", "part", 2, 2700.0),
    ]
    out = _build("--project", project.slug, "--name", "day 1", "--manifest", str(manifest))
    assert "unchanged" in out
    assert VideoGroup.objects.count() == 1 and log.members.count() == 3


@pytest.mark.django_db
def test_bad_manifest_names_every_line_and_writes_nothing(project, tmp_path):
    _videos(project, 600.0, 900.0, 900.0)
    rows = [
        {"file": "part0.mp4", "start": "2024-05-01T08:00:00"},
        {"file": "part1.mp4", "start": "2024-05-01T08:05:00"},  # line 2: starts before part0 ends (overlap)
        {"file": "nope.mp4", "start": "2024-05-01T09:00:00"},  # line 3: unknown video
        {"file": "part2.mp4", "start": "2024-05-01T07:00:00"},  # line 4: before the start and out of order
        {"file": "part2.mp4", "start": "2024-05-09T09:00:00"},  # line 5: repeated, and past 7 days
        {"start": "2024-05-01T10:00:00"},  # line 6: no video named
        {"file": "part1.mp4", "start": "tomorrow"},  # line 7: not a datetime
    ]
    manifest = _write(tmp_path, "bad.jsonl", rows)
    with pytest.raises(CommandError) as err:
        _build("--project", project.slug, "--name", "bad", "--manifest", str(manifest))
    text = str(err.value)
    assert "bad.jsonl line 6: name the video by exactly one of file, sha256 or path" in text
    assert "bad.jsonl line 7: start 'tomorrow' is not an ISO 8601 datetime" in text
    assert not VideoGroup.objects.exists()

    # Rows that read well, but do not fit in time.
    manifest = _write(tmp_path, "bad.jsonl", rows[:5])
    with pytest.raises(CommandError) as err:
        _build("--project", project.slug, "--name", "bad", "--manifest", str(manifest))
    text = str(err.value)
    assert (
        "bad.jsonl line 2: starts at 08:05:00, 300.000 s before the part of bad.jsonl line 1 ends (08:10:00); parts may not overlap"
        in text
    )
    assert "bad.jsonl line 3: no video named 'nope.mp4' in project proj" in text
    assert "bad.jsonl line 4: starts 3600 s before the log's start" in text
    assert "bad.jsonl line 5: video part2.mp4 is already a part (bad.jsonl line 4)" in text
    assert "bad.jsonl line 5: ends 193.2 h after the log's start; a life log spans at most 7 days" in text
    assert not VideoGroup.objects.exists()
    assert MAX_SPAN_S == 7 * 86400


@pytest.mark.django_db
def test_rows_out_of_time_order_are_refused(project, tmp_path):
    _videos(project, 60.0, 60.0)
    path = tmp_path / "order.csv"
    path.write_text("file,offset_s\npart0.mp4,600\npart1.mp4,120\n")
    with pytest.raises(CommandError) as err:
        _build("--project", project.slug, "--name", "o", "--manifest", str(path), "--start", "2024-05-01T08:00:00")
    assert "order.csv line 3: starts at 08:02:00, not after the row before it (order.csv line 2, 08:10:00)" in str(
        err.value
    )


@pytest.mark.django_db
def test_paths_are_ingested_and_a_changed_manifest_rebuilds(project, tmp_path):
    make_video(tmp_path / "a.mp4", seconds=1.0, size="64x48", audio=False)
    make_video(tmp_path / "b.mp4", seconds=2.0, size="64x48", audio=False)
    manifest = tmp_path / "log.csv"
    manifest.write_text("path,start\na.mp4,2024-05-01T23:59:00+02:00\nb.mp4,2024-05-02T00:30:00+02:00\n")
    out = _build("--project", project.slug, "--name", "night", "--manifest", str(manifest))
    assert "ingest: queued a.mp4" in out and "created: 2 parts" in out
    log = VideoGroup.objects.get(name="night")
    assert list(log.members.order_by("position").values_list("offset_s", flat=True)) == [0.0, 1860.0]
    manifest.write_text("path,start\na.mp4,2024-05-01T23:59:00+02:00\nb.mp4,2024-05-02T00:40:00+02:00\n")
    out = _build("--project", project.slug, "--name", "night", "--manifest", str(manifest))
    assert "ingest: duplicate a.mp4" in out and "rebuilt" in out
    assert list(log.members.order_by("position").values_list("offset_s", flat=True)) == [0.0, 2460.0]
