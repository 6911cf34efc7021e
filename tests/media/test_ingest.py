import json
import subprocess

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command

from annotator.adapters import ffmpeg
from annotator.media.models import Video
from tests.conftest import wait_for


def _ingest(*args):
    """Run the ingest command; return (exit code, stdout)."""
    from io import StringIO

    out = StringIO()
    try:
        call_command("ingest", *args, stdout=out, stderr=StringIO())
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_bad_files_fail_alone_and_the_good_one_is_transcoded(worker, short_video, corrupt_video, not_a_video, tmp_path):
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")

    code, out = _ingest(str(short_video), str(corrupt_video), str(not_a_video), str(empty), "--project", "p1")

    assert code == 1
    lines = out.splitlines()
    assert lines[-1] == "4 files: 1 queued, 0 duplicate, 3 failed"
    by_name = {v.filename: v for v in Video.objects.all()}
    assert set(by_name) == {"short.mp4", "truncated.mp4", "picture.png", "empty.mp4"}
    assert by_name["truncated.mp4"].status == "failed"
    assert by_name["truncated.mp4"].error.startswith("truncated or corrupt")
    assert by_name["picture.png"].error.startswith("not a video")
    assert by_name["empty.mp4"].error == "empty file (0 bytes)"
    assert not by_name["picture.png"].original  # failed files are not stored

    good = wait_for(lambda: Video.objects.filter(filename="short.mp4", status="ready").first())
    assert (good.duration_s, good.fps, good.width, good.height) == (3.0, 25.0, 320, 240)
    with default_storage.open(good.original.name, "rb") as fh:
        assert fh.read() == short_video.read_bytes()  # the original is kept untouched
    rendition = default_storage.path(good.rendition.name)
    probed = ffmpeg.probe(rendition)
    assert (probed.video_codec, probed.audio_codec, probed.height) == ("h264", "aac", 240)
    head = open(rendition, "rb").read()
    assert head.index(b"moov") < head.index(b"mdat")  # +faststart: the index comes first
    assert default_storage.size(good.poster.name) > 0


@pytest.mark.django_db(transaction=True)
def test_real_footage_is_probed_and_height_is_capped(worker, real_video, settings):
    settings.MEDIA_RENDITION_MAX_HEIGHT = 144
    code, _ = _ingest(str(real_video), "--project", "p2")
    assert code == 0
    video = wait_for(lambda: Video.objects.filter(filename="bikes.mp4", status="ready").first())
    assert (video.width, video.height, video.fps) == (640, 272, 25.0)
    assert video.duration_s == pytest.approx(10.0, abs=0.05)
    probed = ffmpeg.probe(default_storage.path(video.rendition.name))
    assert probed.height == 144 and probed.width % 2 == 0


@pytest.mark.django_db(transaction=True)
def test_same_content_is_ingested_once_and_manifest_metadata_applies(
    short_video, tmp_path, django_capture_on_commit_callbacks
):
    copy = tmp_path / "copy-of-short.mp4"
    copy.write_bytes(short_video.read_bytes())
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        json.dumps(
            {
                "file": "short.mp4",
                "illumination": "night",
                "difficulty": "hard",
                "domain": "lab",
                "annotations": {"description": "bars"},
                "camera": "x1",
            }
        )
        + "\n"
    )
    with django_capture_on_commit_callbacks(execute=False):
        code, out = _ingest(str(short_video), str(copy), "--project", "p3", "--manifest", str(manifest))
    assert code == 0
    assert "1 queued, 1 duplicate, 0 failed" in out
    video = Video.objects.get()
    assert (video.illumination, video.difficulty, video.domain) == ("night", "hard", "lab")
    assert video.annotations == {"description": "bars"}
    assert video.metadata() == {"camera": "x1", "difficulty": "hard", "domain": "lab", "scenario": None, "view": None}


@pytest.mark.django_db
def test_a_bad_manifest_stops_before_anything_is_ingested(short_video, tmp_path):
    from django.core.management.base import CommandError

    manifest = tmp_path / "m.jsonl"
    manifest.write_text('{"file": "short.mp4", "illumination": "dusk"}\n')
    with pytest.raises(CommandError, match="line 1: illumination must be one of day, night, other"):
        call_command("ingest", str(short_video), "--project", "p4", "--manifest", str(manifest))
    assert Video.objects.count() == 0


def test_ffprobe_of_an_image_is_not_a_video(not_a_video):
    with pytest.raises(ffmpeg.MediaError, match="still image"):
        ffmpeg.probe(not_a_video)


def test_sample_times_are_segment_centres():
    assert ffmpeg.sample_times(0.0, 8.0, 4) == [1.0, 3.0, 5.0, 7.0]
    with pytest.raises(ValueError):
        ffmpeg.sample_times(2.0, 2.0, 3)


def test_parse_probe_reads_rotation_and_counts_frames_when_missing():
    data = {
        "format": {"format_name": "mov,mp4,m4a,3gp,3g2,mj2", "duration": "2.0"},
        "streams": [
            {
                "codec_type": "video",
                "codec_name": "h264",
                "width": 1920,
                "height": 1080,
                "avg_frame_rate": "30000/1001",
                "side_data_list": [{"rotation": -90}],
            }
        ],
    }
    probed = ffmpeg.parse_probe(data)
    assert probed.rotation == -90
    assert probed.frame_count == 60
    assert probed.fps == pytest.approx(29.97, abs=0.01)
    assert probed.audio_codec == ""


def test_rendition_command_caps_height_and_moves_the_index_to_the_front():
    args = ffmpeg.rendition_args("in.mov", "out.mp4", max_height=720)
    assert args[args.index("-movflags") + 1] == "+faststart"
    assert "scale=-2:min(720\\,trunc(ih/2)*2)" in args[args.index("-filter_complex") + 1]
    assert args[args.index("-vcodec") + 1] == "libx264"
    assert subprocess.run(["ffmpeg", "-version"], capture_output=True).returncode == 0
