"""``export_qa --with-media`` for a life-log item (X-LeBench seed 002 Sec. 3) on a real life log built
by ``lifelog_build`` from footage ingested by the real worker: the item's virtual range, which spans
gaps between parts, is cut as one clip per part it covers from that part's local range; each clip is
playable (ffprobe), as long as its local range, and starts on the source frame at that local time.
The row lists them in ``media_segments`` (stable types: other rows have ``[]``)."""

import io
import json
import subprocess

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotator.media.models import Video, VideoGroup
from annotator.media.services import local_copy
from annotator.qa.exports import row_schema
from annotator.qa.models import QAPair, QAType, Revision, WorkUnit
from tests.conftest import make_video, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

# Parts of 4 s at virtual 0, 10 and 20 s (gaps 4-10 and 14-20): span 24 s.
STARTS = ["2024-05-01T08:00:00", "2024-05-01T08:00:10", "2024-05-01T08:00:20"]
SIZES = ["160x120", "176x144", "192x144"]  # distinct content, so distinct sha256


@pytest.fixture
def life_log(worker, project, tmp_path):
    rows = []
    for i, start in enumerate(STARTS):
        make_video(tmp_path / f"p{i}.mp4", seconds=4.0, size=SIZES[i], audio=False)
        rows.append({"path": f"p{i}.mp4", "start": start})
    manifest = tmp_path / "day.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows))
    call_command(
        "lifelog_build", "--project", project.slug, "--name", "day", "--manifest", str(manifest), stdout=io.StringIO()
    )
    wait_for(lambda: Video.objects.filter(project=project, status="ready").count() == 3, what="3 parts transcoded")
    return VideoGroup.objects.get(name="day")


def _verified(project, annotator, unit, qa_type, question, start, end, **fields):
    pair = QAPair.objects.create(
        project=project,
        unit=unit,
        video=unit.video,
        qa_type=qa_type,
        origin="human",
        question=question,
        answer="x",
        clip_start_s=start,
        clip_end_s=end,
        status="verified",
        provenance="human_added",
        verified_at=timezone.now(),
        **fields,
    )
    Revision.objects.create(qa_pair=pair, actor_user=annotator, action="add", after=pair.snapshot())
    return pair


def _probe(path) -> dict:
    done = subprocess.run(
        [
            "ffprobe",
            "-v",
            "error",
            "-show_entries",
            "format=duration:stream=codec_type,width,height",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def _frame(path, at_s: float) -> bytes:
    """The frame at ``at_s`` seconds as 32x24 grey bytes."""
    done = subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-ss",
            f"{at_s:.3f}",
            "-i",
            str(path),
            "-frames:v",
            "1",
            "-vf",
            "scale=32:24",
            "-pix_fmt",
            "gray",
            "-f",
            "rawvideo",
            "-",
        ],
        capture_output=True,
        check=True,
    )
    return done.stdout


def _distance(a: bytes, b: bytes) -> float:
    return sum(abs(x - y) for x, y in zip(a, b, strict=True)) / len(a)


def test_a_life_log_item_gets_one_playable_clip_per_part_it_covers(life_log, project, annotator, tmp_path):
    parts = [m.video for m in life_log.members.order_by("position").select_related("video")]
    assert [round(p.duration_s, 1) for p in parts] == [4.0, 4.0, 4.0]
    moment = QAType.objects.create(
        project=project, slug="moment", name="Moment", set_kind="life_log", answer_kind="interval"
    )
    scene = QAType.objects.create(project=project, slug="scene", name="Scene")
    log_unit = WorkUnit.objects.create(project=project, video=parts[0], group=life_log, start_s=0.0, end_s=24.0)
    item = _verified(
        project,
        annotator,
        log_unit,
        moment,
        "When is the second part?",
        2.5,
        21.5,
        answer_start_s=10.0,
        answer_end_s=14.0,
    )
    plain = _verified(
        project,
        annotator,
        WorkUnit.objects.create(project=project, video=parts[1], start_s=0.0, end_s=4.0),
        scene,
        "What is shown?",
        1.0,
        2.0,
    )
    out = tmp_path / "export" / "qa.jsonl"

    call_command(
        "export_qa",
        "--project",
        project.slug,
        "--out",
        str(out),
        "--with-media",
        str(tmp_path / "export" / "clips"),
        stderr=io.StringIO(),
    )

    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert all(list(r) == row_schema().names for r in rows.values())
    row = rows[item.pk]
    assert row["media_path"] == ""  # no one video holds virtual time
    segments = row["media_segments"]
    assert [
        (s["position"], s["video_id"], s["start_s"], s["end_s"], s["virtual_start_s"], s["virtual_end_s"])
        for s in segments
    ] == [
        (0, parts[0].pk, 2.5, parts[0].duration_s, 2.5, parts[0].duration_s),
        (1, parts[1].pk, 0.0, parts[1].duration_s, 10.0, 10.0 + parts[1].duration_s),
        (2, parts[2].pk, 0.0, 1.5, 20.0, 21.5),
    ]
    assert [s["media_path"] for s in segments] == [
        f"clips/{p.sha256[:16]}_{round(s['start_s'] * 1000)}-{round(s['end_s'] * 1000)}.mp4"
        for p, s in zip(parts, segments, strict=True)
    ]
    assert rows[plain.pk]["media_segments"] == [] and rows[plain.pk]["media_path"].startswith("clips/")

    for part, segment in zip(parts, segments, strict=True):
        clip = out.parent / segment["media_path"]
        probed = _probe(clip)
        assert float(probed["format"]["duration"]) == pytest.approx(segment["end_s"] - segment["start_s"], abs=0.1)
        assert f"{probed['streams'][0]['width']}x{probed['streams'][0]['height']}" == SIZES[segment["position"]]
        with local_copy(part.rendition.name or part.original.name) as source:
            first = _frame(clip, 0.0)
            same = _distance(first, _frame(source, segment["start_s"]))
            other = _distance(first, _frame(source, (segment["start_s"] + 1.5) % 3.5))
        assert same < 3 and other > 2 * same + 3, (segment, same, other)  # the clip starts at its local start

    items = out.parent / "task"
    call_command(
        "export_qa",
        "--project",
        project.slug,
        "--out",
        str(items),
        "--format",
        "lmms-eval",
        "--with-media",
        str(tmp_path / "export" / "clips"),
        stderr=io.StringIO(),
    )
    docs = {d["qa_id"]: d for d in map(json.loads, (items / f"{project.slug}_qa.jsonl").read_text().splitlines())}
    assert [(items / p).resolve() for p in docs[item.pk]["media"]] == [
        (out.parent / s["media_path"]).resolve() for s in segments
    ]
