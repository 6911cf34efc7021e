"""Synthetic night versions of day clips (EgoNight App. A.1), grouped as day-night pairs; paired QA
types then ask one question of both videos."""

import json
import subprocess
from io import StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from PIL import Image, ImageStat

from annotator.adapters import ffmpeg
from annotator.errors import Invalid
from annotator.media.models import Video, VideoGroup
from annotator.media.services import make_day_night_group
from annotator.qa.exports import iter_rows
from annotator.qa.models import QAPair, WorkUnit
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, set_queue_policy, submit_unit


def _luma(path, at_s=1.5):
    png = subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-ss",
            str(at_s),
            "-i",
            str(path),
            "-frames:v",
            "1",
            "-f",
            "image2pipe",
            "-vcodec",
            "png",
            "pipe:",
        ],
        capture_output=True,
        check=True,
    ).stdout
    from io import BytesIO

    return ImageStat.Stat(Image.open(BytesIO(png)).convert("L")).mean[0]


@pytest.mark.django_db(transaction=True)
def test_night_versions_are_darker_paired_and_keep_the_timing(worker, short_video, tmp_path):
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        json.dumps(
            {
                "file": "short.mp4",
                "illumination": "day",
                "domain": "lab",
                "annotations": {"objects": ["bars"], "description": "Colour bars."},
            }
        )
        + "\n"
    )
    call_command("ingest", str(short_video), "--project", "n", "--manifest", str(manifest), "--wait", stdout=StringIO())
    out = StringIO()
    call_command("derive_night", "--project", "n", "--levels", "easy,hard", stdout=out, stderr=StringIO())
    assert "1 day videos, 2 night renditions to make (0 already there)" in out.getvalue()
    assert "2 night renditions ready and paired" in out.getvalue()

    day = Video.objects.get(filename="short.mp4")
    easy = Video.objects.get(filename="short-night-easy.mp4")
    hard = Video.objects.get(filename="short-night-hard.mp4")
    for night, level in ((easy, "easy"), (hard, "hard")):
        assert (night.status, night.source, night.illumination, night.difficulty, night.derived_from) == (
            "ready",
            "synthetic",
            "night",
            level,
            day,
        )
        assert night.duration_s == pytest.approx(day.duration_s, abs=0.05) and night.fps == day.fps
        assert night.annotations == {} and night.extra["night_recipe"][0][0] == "eq"
    day_luma = _luma(default_storage.path(day.original.name))
    easy_luma = _luma(default_storage.path(easy.original.name))
    hard_luma = _luma(default_storage.path(hard.original.name))
    assert hard_luma < easy_luma < day_luma * 0.8
    groups = VideoGroup.objects.order_by("name")  # the two derive tasks may finish in either order
    assert [(g.kind, g.name) for g in groups] == [
        ("day_night", "short.mp4 / night easy"),
        ("day_night", "short.mp4 / night hard"),
    ]
    assert [sorted(m.role for m in g.members.all()) for g in groups] == [["day", "night"], ["day", "night"]]

    again = StringIO()
    call_command("derive_night", "--project", "n", "--levels", "easy,hard", stdout=again)
    assert "0 night renditions to make (2 already there)" in again.getvalue()
    assert Video.objects.count() == 3 and VideoGroup.objects.count() == 2


def test_night_commands_are_pure_and_name_the_paper_levels():
    hard = " ".join(ffmpeg.night_args("in.mp4", "out.mp4", level="hard", max_height=720))
    assert "tmix=frames=5" in hard and "noise=" in hard and "eq=" in hard
    easy = " ".join(ffmpeg.night_args("in.mp4", "out.mp4", level="easy", max_height=720))
    assert "noise" not in easy and "tmix" not in easy
    with pytest.raises(KeyError):
        ffmpeg.night_args("in.mp4", "out.mp4", level="pitch-black", max_height=720)


def test_paired_drafts_make_one_unit_per_pair_and_export_both_videos(project, annotator, tmp_path):
    from annotator.drafts.models import DraftJob, DraftRun
    from annotator.drafts.services import save_drafts
    from annotator.drafts.templates import DraftSpec
    from annotator.qa.services import apply_preset

    apply_preset(project, "egonight")
    day = Video.objects.create(
        project=project, sha256="d" * 64, filename="day.mp4", status="ready", duration_s=10.0, fps=25
    )
    nights = [
        Video.objects.create(
            project=project,
            sha256=c * 64,
            filename=f"night-{c}.mp4",
            status="ready",
            duration_s=12.0,
            fps=25,
            illumination="night",
        )
        for c in "ef"
    ]
    make_day_night_group(day, nights[0], offset_s=0.0)
    make_day_night_group(day, nights[1], offset_s=3.0)
    with pytest.raises(Invalid, match="less than 1 s"):
        make_day_night_group(day, nights[1], offset_s=11.5)
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="t"), video=day
    )
    save_drafts(
        job,
        [
            DraftSpec("object_recognition", "What is on the table?", "a cup", 0.0, 3.0, source_key="o"),  # paired type
            DraftSpec("counting_dynamics", "How many people walked by?", "2", 0.0, 10.0, source_key="c"),  # unpaired
        ],
        actor="t",
    )
    units = list(WorkUnit.objects.order_by("id"))
    assert [(u.group is not None, list(u.qa_pairs.values_list("qa_type__slug", flat=True))) for u in units] == [
        (False, ["counting_dynamics"]),
        (True, ["object_recognition"]),
        (True, ["object_recognition"]),
    ]
    assert [u.end_s for u in units] == [10.0, 10.0, 9.0]  # the 3 s offset leaves 9 s of the night video

    set_queue_policy(project, double_check_share=0)
    for _ in units:
        item = claim_next(project, annotator)
        submit_unit(
            item.unit_id,
            annotator,
            idempotency_key=f"k{item.pk}",
            additions=[],
            time_spent_ms=None,
            decisions=[Decision(p.pk, "keep") for p in item.unit.qa_pairs.all()],
        )
    rows = list(iter_rows(project))
    assert [(r["qa_type"], r["paired"]) for r in rows] == [
        ("counting_dynamics", False),
        ("object_recognition", True),
        ("object_recognition", True),
    ]
    assert rows[0]["group"]["members"] == []
    assert [[(m["role"], m["filename"], m["offset_s"]) for m in r["group"]["members"]] for r in rows[1:]] == [
        [("day", "day.mp4", 0.0), ("night", "night-e.mp4", 0.0)],
        [("day", "day.mp4", 0.0), ("night", "night-f.mp4", 3.0)],
    ]
    assert QAPair.objects.filter(status="verified").count() == 3
