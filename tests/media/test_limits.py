"""Limits on what a video may cost, checked before anything is stored or transcoded (issue 19
review finding: a 1.2 MB upload declaring 23.9 hours became 34,405 HLS files): duration times
resolution (MEDIA_MAX_MEGAPIXEL_HOURS) and HLS segments per quality level (MEDIA_HLS_MAX_SEGMENTS).
A video beyond them fails alone, with its reason in plain words, and nothing else is written."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from annotator.core.models import Job
from annotator.media import services
from annotator.media.models import Video
from annotator.projects.services import token_for
from tests.conftest import make_video

pytestmark = pytest.mark.django_db


def _stored() -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.fixture
def declared_day(tmp_path) -> Path:
    """The review's file: 1.2 MB of H.264 at 64x64, one frame a second for 86,040 s (23.9 hours)."""
    path = tmp_path / "day.mp4"
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "color=c=blue:size=64x64:rate=1",
            "-t",
            "86040",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            str(path),
        ],
        check=True,
    )
    assert 1_000_000 < path.stat().st_size < 1_500_000
    return path


def test_an_upload_declaring_23_9_hours_fails_alone_before_transcoding_with_its_reason(
    project, admin_user, declared_day, short_video
):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(admin_user)}")
    before = _stored()
    with declared_day.open("rb") as fh:
        res = client.post(f"/api/projects/{project.slug}/videos/", {"file": fh}, format="multipart")
    assert res.status_code == 201, res.content
    assert (res.json()["status"], res.json()["error"]) == (
        "failed",
        (
            "too long to stream: 23.9 hours would make 17,208 HLS segments of 5 s per quality level; the limit is "
            "8,640 (12.0 hours, MEDIA_HLS_MAX_SEGMENTS)"
        ),
    )
    failed = Video.objects.get(filename="day.mp4")
    assert not failed.original and not failed.rendition and not failed.hls
    assert _stored() == before  # nothing stored: no original, no rendition, no segment
    assert not Job.objects.exists()  # no transcode queued
    # The next upload is not affected.
    with short_video.open("rb") as fh:
        ok = client.post(f"/api/projects/{project.slug}/videos/", {"file": fh}, format="multipart")
    assert (ok.status_code, ok.json()["status"]) == (201, "processing")
    assert list(Job.objects.values_list("task", "args")) == [("media.transcode", [ok.json()["id"]])]


def test_a_video_too_long_for_its_resolution_is_refused_at_ingest(project, tmp_path, settings):
    settings.MEDIA_MAX_MEGAPIXEL_HOURS = 0.0001
    path = make_video(tmp_path / "vga.mp4", seconds=10.0, size="640x480", audio=False)
    result = services.ingest_file(project, path)
    assert (result.outcome, result.reason) == (
        "failed",
        (
            "too long for its size: 10.0 seconds at 640x480 is 0.000853 megapixel-hours; the limit is 0.0001 "
            "(MEDIA_MAX_MEGAPIXEL_HOURS)"
        ),
    )
    assert Video.objects.get().status == "failed" and not Job.objects.exists()


def test_a_video_queued_before_the_limits_were_lowered_fails_at_transcode_without_running_ffmpeg(
    project, tmp_path, settings
):
    path = make_video(tmp_path / "ten.mp4", seconds=10.0, audio=False)
    result = services.ingest_file(project, path)
    assert result.outcome == "queued"
    before = _stored()
    settings.MEDIA_HLS_MIN_DURATION_S = 1.0  # now it would get an HLS rendition: 2 segments of 5 s
    settings.MEDIA_HLS_MAX_SEGMENTS = 1
    video = services.transcode(result.video_id)
    assert (video.status, video.error) == (
        "failed",
        (
            "too long to stream: 10.0 seconds would make 2 HLS segments of 5 s per quality level; the limit is 1 "
            "(5.0 seconds, MEDIA_HLS_MAX_SEGMENTS)"
        ),
    )
    assert _stored() == before and not video.rendition and not video.hls and not video.thumbnails_vtt


def test_within_the_limits_a_long_enough_video_still_gets_its_hls_rendition(project, tmp_path, settings):
    settings.MEDIA_HLS_MIN_DURATION_S = 1.0
    settings.MEDIA_HLS_MAX_SEGMENTS = 2
    result = services.ingest_file(project, make_video(tmp_path / "ten.mp4", seconds=10.0, audio=False))
    video = services.transcode(result.video_id)
    assert (video.status, video.error, video.hls.name.endswith("master.m3u8")) == ("ready", "", True)
