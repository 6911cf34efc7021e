"""Thin wrapper around ffprobe/ffmpeg (through ffmpeg-python).

Command building is pure (``*_args`` functions return argv lists and touch nothing); ``run``
and ``probe`` are the only places a process is started. Every failure is a ``MediaError`` whose
message is meant for a person: it names what is wrong with the file, not a stack trace.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import ffmpeg

# Containers ffprobe reports for still images; such a file is "not a video" even if it decodes.
_IMAGE_CONTAINERS = frozenset({"image2", "png", "bmp", "tiff", "webp"})


def _is_image_container(container: str) -> bool:
    return container in _IMAGE_CONTAINERS or container.endswith("_pipe")


class MediaError(Exception):
    """A file that cannot be used as a video, or an ffmpeg run that failed; ``str()`` says why."""


@dataclass(frozen=True)
class ProbeResult:
    """What ffprobe says about a file. Durations in seconds, fps in frames per second."""

    container: str
    duration_s: float
    fps: float
    frame_count: int
    width: int
    height: int
    video_codec: str
    audio_codec: str
    rotation: int


def _tail(stderr: bytes | str | None, lines: int = 3) -> str:
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else (stderr or "")
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:]) or "no output"


def _rate(value: str | None) -> float:
    try:
        rate = Fraction(value or "0/1")
    except (ValueError, ZeroDivisionError):
        return 0.0
    return float(rate) if rate > 0 else 0.0


def parse_probe(data: dict) -> ProbeResult:
    """Turn ffprobe's JSON (``-show_format -show_streams``) into a ProbeResult.

    Raises MediaError if the data describe no video stream, a still image, or no duration.
    """
    fmt = data.get("format") or {}
    container = fmt.get("format_name", "")
    streams = data.get("streams") or []
    video = next((s for s in streams if s.get("codec_type") == "video"), None)
    audio = next((s for s in streams if s.get("codec_type") == "audio"), None)
    if video is None:
        raise MediaError(f"not a video: no video stream (container {container or 'unknown'})")
    if _is_image_container(container):
        raise MediaError(f"not a video: looks like a still image ({container}, codec {video.get('codec_name')})")
    try:
        duration = float(fmt.get("duration") or video.get("duration") or 0)
    except ValueError:
        duration = 0.0
    fps = _rate(video.get("avg_frame_rate")) or _rate(video.get("r_frame_rate"))
    if duration <= 0 or fps <= 0:
        raise MediaError(f"not a video: no duration or frame rate (container {container or 'unknown'})")
    try:
        frames = int(video.get("nb_frames") or 0)
    except ValueError:
        frames = 0
    if frames <= 0:
        frames = round(duration * fps)
    if frames <= 1:
        raise MediaError("not a video: a single frame")
    rotation = 0
    for side in video.get("side_data_list") or []:
        if "rotation" in side:
            rotation = int(float(side["rotation"]))
    if not rotation and (video.get("tags") or {}).get("rotate"):
        rotation = int(video["tags"]["rotate"])
    return ProbeResult(
        container=container,
        duration_s=duration,
        fps=fps,
        frame_count=frames,
        width=int(video.get("width") or 0),
        height=int(video.get("height") or 0),
        video_codec=video.get("codec_name", ""),
        audio_codec=(audio or {}).get("codec_name", ""),
        rotation=rotation,
    )


def probe(path: str | Path) -> ProbeResult:
    """Probe ``path`` with ffprobe. Raises MediaError when ffprobe cannot read it or it is no video."""
    try:
        data = ffmpeg.probe(str(path))
    except ffmpeg.Error as exc:
        raise MediaError(f"not a decodable video: {_tail(exc.stderr, 1)}") from None
    return parse_probe(data)


# ``setpriv --pdeathsig KILL`` (util-linux) makes the kernel kill ffmpeg when the thread that started
# it dies, so a worker killed mid-task (OOM, SIGKILL, a hard time limit) leaves no orphan ffmpeg.
_SETPRIV = shutil.which("setpriv")


def _guarded(args: list[str]) -> list[str]:
    return [_SETPRIV, "--pdeathsig", "KILL", "--", *args] if _SETPRIV else list(args)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(args: list[str], *, timeout_s: float, what: str) -> bytes:
    """Run an ffmpeg argv; return stdout. Raises MediaError naming ``what`` on failure or timeout.

    ffmpeg runs in its own process group (its own session), which is killed whole on a timeout or
    when the caller is interrupted (a Celery soft time limit raises inside ``communicate``); and it
    dies with the worker process if that is killed (``--pdeathsig``)."""
    proc = subprocess.Popen(
        _guarded(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise MediaError(f"{what}: ffmpeg took longer than {timeout_s:.0f} s") from None
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    if proc.returncode != 0:
        raise MediaError(f"{what}: {_tail(err)}")
    return out


def timeout_for(duration_s: float | None, *, factor: float | None = None) -> float:
    """Seconds an ffmpeg run over a video of ``duration_s`` seconds may take: ``factor`` (default
    ``FFMPEG_TIMEOUT_FACTOR``) times the duration, at least 60 s, at most ``FFMPEG_TIMEOUT_MAX_S``."""
    from django.conf import settings

    factor = settings.FFMPEG_TIMEOUT_FACTOR if factor is None else factor
    return float(min(settings.FFMPEG_TIMEOUT_MAX_S, max(60.0, (duration_s or 0) * factor)))


def check_decodable(src: str | Path, duration_s: float, *, timeout_s: float = 60.0) -> None:
    """Decode one frame at the start and one near the end; raise MediaError if either yields none.

    Truncated files often probe fine (the header is intact) but cannot decode their last part,
    so both ends are tried. Full decoding would be exact but costs minutes on hour-long videos.
    """
    for at in (0.0, max(duration_s - 1.0, 0.0)):
        try:
            data = run(still_args(src, at, max_side=64), timeout_s=timeout_s, what=f"decode at {at:.1f} s")
        except MediaError as exc:
            raise MediaError(f"truncated or corrupt: {exc}") from None
        if not data:
            raise MediaError(f"truncated or corrupt: no frame decodes at {at:.1f} s")


def _keyframes(keyframe_every_s: int | None) -> dict:
    # A key frame at every multiple of the interval (and x264's own ones between), so the file can be
    # cut into HLS segments of exactly that length with -c copy.
    return {"force_key_frames": f"expr:gte(t,n_forced*{keyframe_every_s})"} if keyframe_every_s else {}


def rendition_args(
    src: str | Path, dst: str | Path, *, max_height: int, keyframe_every_s: int | None = None
) -> list[str]:
    """argv for the browser rendition: H.264 + AAC in MP4 with ``+faststart``, height <= max_height.

    Width keeps the aspect ratio and is rounded to an even number (``-2``), as H.264 requires.
    Rotation metadata is applied by ffmpeg's autorotate, so the output is upright. With
    ``keyframe_every_s`` (seconds), a key frame is forced at every multiple of it (for HLS segments).
    """
    stream = ffmpeg.input(str(src))
    video = stream.video.filter("scale", -2, f"min({max_height},trunc(ih/2)*2)")
    return (
        ffmpeg.output(
            video,
            stream.audio,
            str(dst),
            vcodec="libx264",
            preset="veryfast",
            crf=23,
            pix_fmt="yuv420p",
            acodec="aac",
            audio_bitrate="128k",
            movflags="+faststart",
            format="mp4",
            **_keyframes(keyframe_every_s),
        )
        .global_args("-v", "error", "-nostdin", "-y")
        .compile()
    )


def rendition_args_silent(
    src: str | Path, dst: str | Path, *, max_height: int, keyframe_every_s: int | None = None
) -> list[str]:
    """As ``rendition_args`` for a source with no audio stream."""
    stream = ffmpeg.input(str(src))
    video = stream.video.filter("scale", -2, f"min({max_height},trunc(ih/2)*2)")
    return (
        ffmpeg.output(
            video,
            str(dst),
            vcodec="libx264",
            preset="veryfast",
            crf=23,
            pix_fmt="yuv420p",
            movflags="+faststart",
            format="mp4",
            **_keyframes(keyframe_every_s),
        )
        .global_args("-v", "error", "-nostdin", "-y")
        .compile()
    )


# Night renditions of a day clip at EgoNight's three difficulty levels (seed 000 App. A.1, Table 6,
# and Sec. 5: easy = moderately dark; medium = very dark with camera noise; hard = as dark as medium,
# with motion blur). Darkening is a gamma and brightness cut with desaturation (eyes and sensors lose
# colour first in low light); noise is temporal and uniform per frame; motion blur averages 5
# consecutive frames (ffmpeg tmix), like a long shutter. Blur comes before noise: the sensor adds
# noise to the blurred exposure.
NIGHT_LEVELS = {
    "easy": [("eq", {"gamma": 0.55, "brightness": -0.12, "saturation": 0.6})],
    "medium": [("eq", {"gamma": 0.3, "brightness": -0.2, "saturation": 0.4}), ("noise", {"alls": 18, "allf": "t+u"})],
    "hard": [
        ("eq", {"gamma": 0.3, "brightness": -0.2, "saturation": 0.4}),
        ("tmix", {"frames": 5}),
        ("noise", {"alls": 18, "allf": "t+u"}),
    ],
}


def night_args(src: str | Path, dst: str | Path, *, level: str, max_height: int) -> list[str]:
    """argv for a synthetic night version of a day video at ``level`` (easy, medium, hard): same
    frames, timing and length as the source (so it pairs with offset 0), H.264 MP4, no audio,
    height <= max_height. Raises KeyError for an unknown level."""
    video = ffmpeg.input(str(src)).video.filter("scale", -2, f"min({max_height},trunc(ih/2)*2)")
    for name, kwargs in NIGHT_LEVELS[level]:
        video = video.filter(name, **kwargs)
    return (
        ffmpeg.output(
            video,
            str(dst),
            vcodec="libx264",
            preset="veryfast",
            crf=23,
            pix_fmt="yuv420p",
            movflags="+faststart",
            format="mp4",
        )
        .global_args("-v", "error", "-nostdin", "-y")
        .compile()
    )


def still_args(src: str | Path, at_s: float, *, max_side: int, dst: str = "pipe:") -> list[str]:
    """argv that writes one JPEG frame at ``at_s`` seconds, longest side <= ``max_side`` px."""
    scale = f"if(gt(iw,ih),min({max_side},iw),-2)", f"if(gt(iw,ih),-2,min({max_side},ih))"
    return (
        ffmpeg.input(str(src), ss=max(at_s, 0.0))
        .filter("scale", *scale)
        .output(dst, vframes=1, format="image2", vcodec="mjpeg", **{"q:v": 3})
        .global_args("-v", "error", "-nostdin", "-y")
        .compile()
    )


def square_frame_args(src: str | Path, at_s: float, *, size: int, dst: str = "pipe:") -> list[str]:
    """argv that writes one JPEG frame at exactly ``at_s`` seconds, resized to ``size`` x ``size``
    px (EGO-FLIGHT downsamples frames to 224 x 224, seed 003 Sec. 3.4)."""
    return (
        ffmpeg.input(str(src), ss=max(at_s, 0.0))
        .filter("scale", size, size)
        .output(dst, vframes=1, format="image2", vcodec="mjpeg", **{"q:v": 3})
        .global_args("-v", "error", "-nostdin", "-y")
        .compile()
    )


def clip_args(src: str | Path, dst: str | Path, *, start_s: float, end_s: float, max_height: int) -> list[str]:
    """argv for a study clip: [start_s, end_s) seconds of ``src`` re-encoded (frame-exact cuts) as
    H.264 MP4 with ``+faststart``, height <= max_height, no audio (a model gets frames only, and a
    person the same input: EgoExoBench App. A.5), and no metadata (no creation time or file name)."""
    stream = ffmpeg.input(str(src), ss=max(start_s, 0.0), t=max(end_s - start_s, 0.04))
    video = stream.video.filter("scale", -2, f"min({max_height},trunc(ih/2)*2)")
    return (
        ffmpeg.output(
            video,
            str(dst),
            vcodec="libx264",
            preset="veryfast",
            crf=23,
            pix_fmt="yuv420p",
            movflags="+faststart",
            format="mp4",
            an=None,
            map_metadata=-1,
            map_chapters=-1,
        )
        .global_args("-v", "error", "-nostdin", "-y")
        .compile()
    )


def hls_level_args(src: str | Path, dst: str | Path, *, height: int, keyframe_every_s: int, audio: bool) -> list[str]:
    """argv for a lower HLS quality level made from the (already scaled) rendition ``src``: H.264 MP4
    of ``height`` px (width keeps the aspect ratio, even), key frames forced every ``keyframe_every_s``
    seconds as in the rendition, the audio copied (not encoded again) when ``audio``."""
    stream = ffmpeg.input(str(src))
    video = stream.video.filter("scale", -2, height)
    streams = [video, stream.audio] if audio else [video]
    extra = {"acodec": "copy"} if audio else {"an": None}
    return (
        ffmpeg.output(
            *streams,
            str(dst),
            vcodec="libx264",
            preset="veryfast",
            crf=26,
            pix_fmt="yuv420p",
            format="mp4",
            **_keyframes(keyframe_every_s),
            **extra,
        )
        .global_args("-v", "error", "-nostdin", "-y")
        .compile()
    )


def hls_package_args(src: str | Path, out_dir: str | Path, *, name: str, segment_s: int) -> list[str]:
    """argv that cuts the MP4 ``src`` (key frames every ``segment_s`` seconds) into a VOD HLS media
    playlist ``out_dir/NAME.m3u8`` of fMP4 segments ``NAME-00000.m4s``... (init segment
    ``NAME-init.mp4``) of ``segment_s`` seconds each (the last may be shorter), without re-encoding."""
    out_dir = Path(out_dir)
    return (
        ffmpeg.input(str(src))
        .output(
            str(out_dir / f"{name}.m3u8"),
            c="copy",
            format="hls",
            hls_time=segment_s,
            hls_playlist_type="vod",
            hls_segment_type="fmp4",
            hls_fmp4_init_filename=f"{name}-init.mp4",
            hls_segment_filename=str(out_dir / f"{name}-%05d.m4s"),
            hls_flags="independent_segments",
            map=0,
        )
        .global_args("-v", "error", "-nostdin", "-y")
        .compile()
    )


def sprite_args(
    src: str | Path,
    out_pattern: str | Path,
    *,
    every_s: float,
    width: int,
    columns: int,
    rows: int,
    keyframes_only: bool = False,
) -> list[str]:
    """argv for timeline thumbnail sprite sheets: one frame every ``every_s`` seconds, ``width`` px
    wide (height keeps the aspect ratio, even), laid out ``columns`` x ``rows`` per JPEG sheet, written
    to ``out_pattern`` (e.g. ``dir/sprite-%d.jpg``, numbered from 0; the last sheet is padded).
    ``keyframes_only`` decodes key frames only (much faster on long videos; exact when ``every_s``
    is a multiple of the source's key frame interval)."""
    before = {"skip_frame": "nokey"} if keyframes_only else {}
    return (
        ffmpeg.input(str(src), **before)
        .video.filter("fps", fps=f"1/{every_s}")
        .filter("scale", width, -2)
        .filter("tile", f"{columns}x{rows}")
        .output(str(out_pattern), vcodec="mjpeg", start_number=0, fps_mode="vfr", **{"q:v": 5})
        .global_args("-v", "error", "-nostdin", "-y")
        .compile()
    )


def sample_times(start_s: float, end_s: float, n: int) -> list[float]:
    """``n`` timestamps spread evenly over [start_s, end_s): the centres of n equal segments.

    Centres rather than edges, so no sample falls on the last instant, where decoding may
    return nothing. Raises ValueError if n < 1 or the range is empty.
    """
    if n < 1 or end_s <= start_s:
        raise ValueError(f"need n >= 1 and start < end, got n={n}, [{start_s}, {end_s})")
    step = (end_s - start_s) / n
    return [round(start_s + step * (i + 0.5), 3) for i in range(n)]


def sample_frames(src: str | Path, times_s: list[float], *, max_side: int, timeout_s: float = 60.0) -> list[bytes]:
    """JPEG bytes of the frames at ``times_s`` (seconds). Raises MediaError if any is empty."""
    frames = []
    for at in times_s:
        data = run(still_args(src, at, max_side=max_side), timeout_s=timeout_s, what=f"frame at {at:.2f} s")
        if not data:
            raise MediaError(f"frame at {at:.2f} s: ffmpeg returned no image")
        frames.append(data)
    return frames


def test_pattern_args(dst: str | Path, *, seconds: float, size: str = "320x180", fps: int = 25) -> list[str]:
    """argv for a synthetic clip (ffmpeg's counting test pattern, no audio) of ``seconds`` at
    ``size`` and ``fps``, H.264 in MP4 with ``+faststart``, as the studies' clips are encoded: the
    screening page plays it to check that the browser can play the study's videos. It shows no
    footage, so it gives no item away."""
    return [
        "ffmpeg",
        "-v",
        "error",
        "-nostdin",
        "-y",
        "-f",
        "lavfi",
        "-i",
        f"testsrc=size={size}:rate={fps}:duration={seconds}",
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-pix_fmt",
        "yuv420p",
        "-movflags",
        "+faststart",
        "-an",
        "-map_metadata",
        "-1",
        "-f",
        "mp4",
        str(dst),
    ]
