"""HLS renditions of long videos and timeline thumbnails (sprite sheets + WebVTT) of every video.

Both are made by ffmpeg from the browser rendition (already scaled to <= MEDIA_RENDITION_MAX_HEIGHT),
never from the original, so a 4K source is decoded once. Layout in storage (relative URLs inside the
playlists and the VTT resolve within these folders, and ``media.views.serve_media`` checks access by
the ``<video pk>`` of the prefix, so a segment needs no row of its own):

- ``hls/<media_key>/<sha16>/master.m3u8``: the master playlist, one ``#EXT-X-STREAM-INF`` per quality level
  with BANDWIDTH (peak segment bit rate, bit/s), AVERAGE-BANDWIDTH and RESOLUTION; ``v0.m3u8`` the
  top level (the MP4 rendition cut with ``-c copy``: no second encode at full size), ``v1.m3u8`` the
  lower one (MEDIA_HLS_LOW_HEIGHT, or half the rendition's height if that is smaller); VOD media
  playlists of fMP4 segments ``vN-00000.m4s``... of MEDIA_HLS_SEGMENT_S seconds (4-6; the last may be
  shorter) after an init segment ``vN-init.mp4``. The rendition's key frames are forced at every
  segment boundary so the cut is exact.
- ``thumbs/<media_key>/<sha16>/thumbnails.vtt``: WebVTT whose cues (``HH:MM:SS.mmm --> ...``) cover the
  video from 0 to its duration, each pointing at one tile, ``sprite-K.jpg#xywh=x,y,w,h`` (pixels,
  the W3C Media Fragments spatial dimension); sprite sheets ``sprite-K.jpg`` are grids of
  ``THUMB_COLUMNS`` x ``THUMB_ROWS`` tiles MEDIA_THUMB_WIDTH px wide, one tile every
  ``thumbnail_interval_s`` seconds (at most MEDIA_THUMB_MAX_TILES per video).

Every file is written to a work folder first and saved to storage only when all of it is made; a
failed save deletes what was saved. Any ffmpeg failure raises ``ffmpeg.MediaError``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import m3u8
from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from PIL import Image

from annotator.adapters import ffmpeg

THUMB_COLUMNS = 10
THUMB_ROWS = 10
MASTER = "master.m3u8"
VTT = "thumbnails.vtt"


def needs_hls(duration_s: float | None) -> bool:
    """Whether a video of ``duration_s`` seconds gets an HLS rendition (longer than MEDIA_HLS_MIN_DURATION_S)."""
    return (duration_s or 0) > settings.MEDIA_HLS_MIN_DURATION_S


def hls_segments(duration_s: float | None) -> int:
    """Segments of one HLS quality level of a video of ``duration_s`` seconds:
    ``ceil(duration / MEDIA_HLS_SEGMENT_S)``, 0 when it gets no HLS rendition (``needs_hls``)."""
    if not needs_hls(duration_s):
        return 0
    return math.ceil(duration_s / settings.MEDIA_HLS_SEGMENT_S)


def duration_words(seconds: float) -> str:
    """A duration in plain words: "23.9 hours", "12.5 minutes", "10.0 seconds"."""
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} hours"
    if seconds >= 60:
        return f"{seconds / 60:.1f} minutes"
    return f"{seconds:.1f} seconds"


def too_many_segments(duration_s: float | None) -> str:
    """Why a video of ``duration_s`` seconds cannot have an HLS rendition, in plain words: more
    segments per quality level than MEDIA_HLS_MAX_SEGMENTS; "" when it can."""
    segments, most = hls_segments(duration_s), settings.MEDIA_HLS_MAX_SEGMENTS
    if segments <= most:
        return ""
    return (
        f"too long to stream: {duration_words(duration_s)} would make {segments:,} HLS segments of "
        f"{settings.MEDIA_HLS_SEGMENT_S} s per quality level; the limit is {most:,} "
        f"({duration_words(most * settings.MEDIA_HLS_SEGMENT_S)}, MEDIA_HLS_MAX_SEGMENTS)"
    )


def media_key(video) -> str:
    """The folder name of ``video``'s files: its stored ``media_key`` (13 random letters), so a media
    URL says nothing of the video's id or age (an annotator must not tell a gold copy's old footage by
    its URL, issue 20), and no key's rotation renames it. Files stored in other folders (by row id,
    before handles) are moved by ``services.relocate``."""
    return video.media_key


def hls_prefix(video) -> str:
    """Storage folder of ``video``'s HLS files: ``hls/<media_key>/<first 16 hex of sha256>``."""
    return f"hls/{media_key(video)}/{video.sha256[:16]}"


def thumbs_prefix(video) -> str:
    """Storage folder of ``video``'s sprite sheets and VTT: ``thumbs/<media_key>/<first 16 hex of sha256>``."""
    return f"thumbs/{media_key(video)}/{video.sha256[:16]}"


def thumbnail_interval_s(duration_s: float, *, keyframe_every_s: int | None = None) -> int:
    """Seconds between two timeline thumbnails: ``ceil(duration / MEDIA_THUMB_MAX_TILES)``, at least
    MEDIA_THUMB_MIN_INTERVAL_S, rounded up to a multiple of ``keyframe_every_s`` when given (then
    only key frames need decoding and each tile is exactly at its time)."""
    every = max(settings.MEDIA_THUMB_MIN_INTERVAL_S, math.ceil(max(duration_s, 0.0) / settings.MEDIA_THUMB_MAX_TILES))
    if keyframe_every_s:
        every = math.ceil(every / keyframe_every_s) * keyframe_every_s
    return every


def _timestamp(seconds: float) -> str:
    millis = round(seconds * 1000)
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    secs, millis = divmod(millis, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}.{millis:03d}"


def thumbnails_vtt(duration_s: float, every_s: float, *, tile_w: int, tile_h: int, sheets: int) -> str:
    """The WebVTT text for sprite sheets ``sprite-0.jpg``.. ``sprite-{sheets-1}.jpg``: cue i covers
    [i * every_s, (i + 1) * every_s) seconds (the last one ends at ``duration_s``) and points at tile i
    (row-major, ``THUMB_COLUMNS`` x ``THUMB_ROWS`` per sheet, ``tile_w`` x ``tile_h`` px). Cues beyond
    the tiles made are dropped and the last kept cue stretched to the end, so the cues always cover
    the whole video."""
    per_sheet = THUMB_COLUMNS * THUMB_ROWS
    count = max(1, min(math.ceil(duration_s / every_s), sheets * per_sheet))
    lines = ["WEBVTT", ""]
    for i in range(count):
        start = i * every_s
        end = duration_s if i == count - 1 else min((i + 1) * every_s, duration_s)
        sheet, cell = divmod(i, per_sheet)
        row, col = divmod(cell, THUMB_COLUMNS)
        lines += [
            f"{_timestamp(start)} --> {_timestamp(end)}",
            f"sprite-{sheet}.jpg#xywh={col * tile_w},{row * tile_h},{tile_w},{tile_h}",
            "",
        ]
    return "\n".join(lines)


def make_thumbnails(src: Path, out: Path, *, duration_s: float, keyframe_every_s: int | None = None) -> Path:
    """Write sprite sheets and ``thumbnails.vtt`` of the video file ``src`` (``duration_s`` seconds)
    into the empty folder ``out``; return the VTT's path. ``keyframe_every_s``: ``src`` has a key frame
    at every multiple of it (then only key frames are decoded). Raises MediaError if ffmpeg fails or
    makes no sheet."""
    every = thumbnail_interval_s(duration_s, keyframe_every_s=keyframe_every_s)
    args = ffmpeg.sprite_args(
        src,
        out / "sprite-%d.jpg",
        every_s=every,
        width=settings.MEDIA_THUMB_WIDTH,
        columns=THUMB_COLUMNS,
        rows=THUMB_ROWS,
        keyframes_only=bool(keyframe_every_s),
    )
    ffmpeg.run(args, timeout_s=ffmpeg.timeout_for(duration_s, factor=2.0), what="timeline thumbnails")
    sheets = sum(1 for _ in out.glob("sprite-*.jpg"))
    if not sheets or not (out / "sprite-0.jpg").is_file():
        raise ffmpeg.MediaError("timeline thumbnails: ffmpeg made no sprite sheet")
    with Image.open(out / "sprite-0.jpg") as sheet:
        width, height = sheet.size
    vtt = out / VTT
    vtt.write_text(
        thumbnails_vtt(duration_s, every, tile_w=width // THUMB_COLUMNS, tile_h=height // THUMB_ROWS, sheets=sheets),
        encoding="utf-8",
    )
    return vtt


@dataclass(frozen=True)
class Level:
    """One HLS quality level: its media playlist's name, size in px, peak and average bit rate (bit/s)."""

    playlist: str
    width: int
    height: int
    bandwidth: int
    average_bandwidth: int


def _measure(playlist: Path, width: int, height: int) -> Level:
    parsed = m3u8.load(str(playlist))
    rates, total_bits, total_s = [], 0, 0.0
    for segment in parsed.segments:
        bits = (playlist.parent / segment.uri).stat().st_size * 8
        total_bits += bits
        total_s += segment.duration
        if segment.duration > 0:
            rates.append(bits / segment.duration)
    if not rates:
        raise ffmpeg.MediaError(f"HLS rendition: {playlist.name} has no segments")
    return Level(playlist.name, width, height, math.ceil(max(rates)), math.ceil(total_bits / total_s))


def master_playlist(levels: list[Level]) -> str:
    """The text of an HLS master playlist (RFC 8216 Sec. 4.3.4.2) listing ``levels``, lowest first."""
    lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
    for level in sorted(levels, key=lambda lv: lv.bandwidth):
        lines += [
            (
                f"#EXT-X-STREAM-INF:BANDWIDTH={level.bandwidth},AVERAGE-BANDWIDTH={level.average_bandwidth},"
                f"RESOLUTION={level.width}x{level.height}"
            ),
            level.playlist,
        ]
    return "\n".join(lines) + "\n"


def low_level_height(top_height: int) -> int:
    """Height in px of the lower HLS level: MEDIA_HLS_LOW_HEIGHT, or half the top level's if that is
    smaller; even (H.264 4:2:0) and at least 2 px."""
    return max(2, min(settings.MEDIA_HLS_LOW_HEIGHT, top_height // 2) // 2 * 2)


def make_hls(top: Path, out: Path, work: Path, *, duration_s: float, audio: bool) -> Path:
    """Write the HLS rendition of ``top`` (an H.264 MP4 with key frames every MEDIA_HLS_SEGMENT_S
    seconds: the top level as it is) into the empty folder ``out``: a lower level encoded from it,
    both cut into fMP4 segments, and ``master.m3u8``; return the master's path. ``work`` holds the
    lower level's MP4 meanwhile. Raises MediaError if ffmpeg fails."""
    segment_s = settings.MEDIA_HLS_SEGMENT_S
    timeout = ffmpeg.timeout_for(duration_s)
    top_probe = ffmpeg.probe(top)
    # The limit was checked on the original's declared duration; the rendition's own is what is cut.
    if refusal := too_many_segments(top_probe.duration_s):
        raise ffmpeg.MediaError(refusal)
    low = work / "hls-low.mp4"
    low_height = low_level_height(top_probe.height)
    ffmpeg.run(
        ffmpeg.hls_level_args(top, low, height=low_height, keyframe_every_s=segment_s, audio=audio),
        timeout_s=timeout,
        what="HLS rendition (lower level)",
    )
    low_probe = ffmpeg.probe(low)
    levels = []
    for name, path, probed in (("v0", top, top_probe), ("v1", low, low_probe)):
        ffmpeg.run(
            ffmpeg.hls_package_args(path, out, name=name, segment_s=segment_s),
            timeout_s=timeout,
            what="HLS rendition (segments)",
        )
        levels.append(_measure(out / f"{name}.m3u8", probed.width, probed.height))
    low.unlink()
    master = out / MASTER
    master.write_text(master_playlist(levels), encoding="utf-8")
    return master


def clear_prefix(prefix: str) -> None:
    """Delete every stored file under ``prefix`` (a folder name, no trailing slash), recursively."""
    try:
        folders, files = default_storage.listdir(prefix)
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in files:
        default_storage.delete(f"{prefix}/{name}")
    for folder in folders:
        clear_prefix(f"{prefix}/{folder}")


def save_folder(local: Path, prefix: str) -> list[str]:
    """Save every file of the local folder ``local`` under ``prefix/`` in storage, keeping its name
    (the playlists' and VTT's relative URLs depend on it): whatever was stored there before is
    deleted first. Returns the stored names. Raises OSError if storage cannot keep a name; then
    nothing is left saved."""
    clear_prefix(prefix)
    saved: list[str] = []
    try:
        for path in sorted(local.iterdir()):
            wanted = f"{prefix}/{path.name}"
            with path.open("rb") as fh:
                name = default_storage.save(wanted, File(fh))
            saved.append(name)
            if name != wanted:
                raise OSError(f"storage saved {wanted} as {name}")
    except BaseException:
        for name in saved:
            default_storage.delete(name)
        raise
    return saved


def missing(video) -> list[str]:
    """What a ready ``video`` lacks of what a transcode makes today: ``"thumbnails"`` and/or ``"HLS"``."""
    lacks = []
    if not video.thumbnails_vtt.name:
        lacks.append("thumbnails")
    if needs_hls(video.duration_s) and not video.hls.name:
        lacks.append("HLS")
    return lacks


def backfill(video) -> list[str]:
    """Make what a ready ``video`` (transcoded before thumbnails or HLS existed, or before
    MEDIA_HLS_MIN_DURATION_S was lowered) lacks (``missing``), save it and set its fields; return
    what was made (empty if nothing was missing). Idempotent.

    The HLS top level is encoded again from the original (its existing rendition has no key frames
    on the segment grid), then made as in a transcode; the MP4 rendition is left as it is.
    Thumbnails come from that top level when there is one, else from the rendition. Raises
    MediaError if ffmpeg fails (the video stays ready, with what it had), OSError on storage errors.
    """
    from annotator.media.models import Video
    from annotator.media.workfiles import local_copy, work_dir

    lacks = missing(video)
    if not lacks or video.status != Video.Status.READY or not video.rendition.name:
        return []
    duration = video.duration_s or 0.0
    segment_s = settings.MEDIA_HLS_SEGMENT_S
    updates: dict[str, str] = {}
    source = video.original.name or video.rendition.name
    with (
        local_copy(video.rendition.name) as rendition,
        local_copy(source) as src,
        work_dir(f"backfill-{video.pk}-") as work,
    ):
        thumbs, hls = work / "thumbs", work / "hls"
        thumbs.mkdir()
        hls.mkdir()
        keyframes = None
        thumbs_from = rendition
        if "HLS" in lacks:
            top = work / "top.mp4"
            build = ffmpeg.rendition_args if video.audio_codec else ffmpeg.rendition_args_silent
            ffmpeg.run(
                build(src, top, max_height=settings.MEDIA_RENDITION_MAX_HEIGHT, keyframe_every_s=segment_s),
                timeout_s=ffmpeg.timeout_for(duration),
                what="HLS rendition (top level)",
            )
            make_hls(top, hls, work, duration_s=duration, audio=bool(video.audio_codec))
            keyframes, thumbs_from = segment_s, top
        if "thumbnails" in lacks:
            make_thumbnails(thumbs_from, thumbs, duration_s=duration, keyframe_every_s=keyframes)
        saved: list[str] = []
        try:
            if "thumbnails" in lacks:
                saved += save_folder(thumbs, thumbs_prefix(video))
                updates["thumbnails_vtt"] = f"{thumbs_prefix(video)}/{VTT}"
            if "HLS" in lacks:
                saved += save_folder(hls, hls_prefix(video))
                updates["hls"] = f"{hls_prefix(video)}/{MASTER}"
        except BaseException:
            for name in saved:
                default_storage.delete(name)
            raise
    Video.objects.filter(pk=video.pk, status=Video.Status.READY).update(**updates)
    return lacks


__all__ = [
    "Level",
    "backfill",
    "clear_prefix",
    "hls_prefix",
    "low_level_height",
    "media_key",
    "make_hls",
    "make_thumbnails",
    "master_playlist",
    "missing",
    "needs_hls",
    "save_folder",
    "thumbnail_interval_s",
    "thumbnails_vtt",
    "thumbs_prefix",
]
