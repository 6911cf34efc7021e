"""The 2-hour video of the long-video tests (HLS, timeline thumbnails, seeking in Chromium) and
bench/seek.py: the real demo footage (bikes.mp4) scaled down and looped with ``-c copy``, made once
and cached under .local/footage-cache/, ingested and transcoded once per test session."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from django.core.files import File

from annotator.adapters import ffmpeg
from annotator.media import services
from annotator.media.models import Video
from annotator.projects.services import ensure_project

REPO = Path(__file__).resolve().parent.parent
TWO_HOURS_S = 7200.0
CACHE = REPO / ".local" / "footage-cache"


def make_two_hour_video(footage: Path, *, width: int = 160, fps: int = 10) -> Path:
    """bikes.mp4 (10 s of real footage, 640x272) scaled to ``width`` px wide at ``fps`` frames/s, looped
    720 times without re-encoding: 7200 s (about 45 MB at the default 160 px, 10 fps). Cached under
    .local/footage-cache/: built only when missing. Raises FileNotFoundError without the footage."""
    return make_looped_video(footage, width=width, fps=fps, loops=720)


def make_looped_video(footage: Path, *, width: int = 160, fps: int = 10, loops: int = 720) -> Path:
    """``make_two_hour_video`` with ``loops`` copies of the 10 s footage (1 to 720): ``loops`` x 10 s."""
    if not 1 <= loops <= 720:
        raise ValueError(f"loops must be 1 to 720, not {loops}")
    out = CACHE / (f"bikes-2h-{width}w-{fps}fps.mp4" if loops == 720 else f"bikes-{loops}x-{width}w-{fps}fps.mp4")
    if out.is_file():
        return out
    source = footage / "bikes.mp4"
    if not source.is_file():
        raise FileNotFoundError(f"{source} is missing: run scripts/fetch_footage.sh (make test does)")
    CACHE.mkdir(parents=True, exist_ok=True)
    # Names of this process only until the rename: two test runs (or xdist workers) may build it at once.
    small = CACHE / f"bikes-{width}w-{fps}fps.{os.getpid()}.mp4"
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-i",
            str(source),
            "-vf",
            f"scale={width}:-2,fps={fps}",
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-pix_fmt",
            "yuv420p",
            str(small),
        ],
        check=True,
    )
    partial = out.with_suffix(f".{os.getpid()}.part.mp4")
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-stream_loop", str(loops - 1), "-i", str(small), "-c", "copy", str(partial)],
        check=True,
    )
    small.unlink()
    partial.rename(out)
    return out


def ingest_now(project, path: Path) -> Video:
    """What ``services.ingest_file`` does up to the queue (probe, store the original, a processing
    row), without sending a transcode job: the test transcodes it synchronously itself."""
    probed = ffmpeg.probe(path)
    digest = services.sha256_of(path)
    video = Video(
        project=project,
        sha256=digest,
        filename=path.name,
        size_bytes=path.stat().st_size,
        status=Video.Status.PROCESSING,
        container=probed.container,
        duration_s=probed.duration_s,
        fps=probed.fps,
        frame_count=probed.frame_count,
        width=probed.width,
        height=probed.height,
        video_codec=probed.video_codec,
        audio_codec=probed.audio_codec,
    )
    with path.open("rb") as fh:
        video.original.save(f"originals/{digest[:2]}/{digest}.mp4", File(fh), save=False)
    video.save()
    return video


@pytest.fixture(scope="session")
def two_hour_video() -> Path:
    from tests.conftest import FOOTAGE

    try:
        # 5 frames/s, not the bench's 10: the session's transcode of it (rendition, two HLS levels,
        # thumbnails) is the suite's longest fixture, and every test of it is about length, not motion.
        return make_two_hour_video(FOOTAGE, fps=5)
    except FileNotFoundError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def long_transcoded(two_hour_video, django_db_setup, django_db_blocker) -> dict:
    """The 2-hour video ingested and transcoded once per session; its row's fields. The row (in a
    project of its own) is deleted again, the stored files stay: ``long_video`` puts the row back."""
    with django_db_blocker.unblock():
        project = ensure_project("hls-long", "Long videos")
        video = ingest_now(project, two_hour_video)
        services.transcode(video.pk)
        fields = Video.objects.filter(pk=video.pk).values().get()
        project.delete()
    return fields


@pytest.fixture
def long_video(long_transcoded, project) -> Video:
    """The transcoded 2-hour video's row again (same pk, so its hls/ and thumbs/ prefixes map to it), in ``project``."""
    return Video.objects.create(**{**long_transcoded, "project_id": project.pk})
