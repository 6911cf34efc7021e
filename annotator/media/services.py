"""Writes for media: ingest files into a project, transcode them into browser renditions.

Each file is ingested in its own transaction, so one bad file fails alone with its reason and
the rest of the batch goes on (SPEC part 1). Transcoding runs in Celery, queued on commit.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction

from annotator import jobs
from annotator.adapters import ffmpeg
from annotator.errors import Invalid
from annotator.media.manifest import ManifestEntry
from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.media.workfiles import local_copy, on_local_disk, work_dir
from annotator.projects.models import Project

log = logging.getLogger(__name__)

VIDEO_SUFFIXES = {".mp4", ".mov", ".avi", ".mkv", ".webm", ".mpg", ".mpeg", ".m4v", ".ts", ".wmv", ".flv", ".3gp"}


@dataclass(frozen=True)
class IngestResult:
    """Outcome for one file: ``outcome`` is queued, duplicate or failed; ``reason`` says why."""

    path: str
    outcome: str
    video_id: int | None = None
    reason: str = ""


def expand_paths(paths: list[str | Path]) -> list[Path]:
    """Files to ingest: files as given, folders walked recursively for video suffixes, sorted.

    A path that does not exist is kept, so ingest reports it as failed rather than dropping it.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES))
        else:
            found.append(path)
    return found


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's content, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _apply_manifest(video: Video, entry: ManifestEntry | None) -> None:
    if entry is None:
        return
    for key, value in entry.fields.items():
        setattr(video, key, value)
    video.annotations = entry.annotations
    video.extra = entry.extra


def limit_refusal(duration_s: float | None, width: int | None, height: int | None) -> str:
    """Why a video of ``duration_s`` seconds and ``width`` x ``height`` px is refused before any
    transcode, in plain words, or "" when it is within the limits: its megapixel-hours (duration in
    hours x width x height / 10^6) above MEDIA_MAX_MEGAPIXEL_HOURS, or more HLS segments per
    quality level than MEDIA_HLS_MAX_SEGMENTS (``streaming.too_many_segments``)."""
    from annotator.media import streaming

    hours = (duration_s or 0.0) / 3600
    megapixel_hours = hours * (width or 0) * (height or 0) / 1e6
    problems = []
    if megapixel_hours > settings.MEDIA_MAX_MEGAPIXEL_HOURS:
        problems.append(
            f"too long for its size: {streaming.duration_words(duration_s)} at {width}x{height} is "
            f"{megapixel_hours:.3g} megapixel-hours; the limit is {settings.MEDIA_MAX_MEGAPIXEL_HOURS:g} "
            "(MEDIA_MAX_MEGAPIXEL_HOURS)"
        )
    if segments := streaming.too_many_segments(duration_s):
        problems.append(segments)
    return "; ".join(problems)


def ingest_file(
    project: Project,
    path: Path,
    entry: ManifestEntry | None = None,
    *,
    filename: str | None = None,
    stored_name: str | None = None,
) -> IngestResult:
    """Ingest one file into ``project``.

    Steps: check it exists, is non-empty and not above ``MEDIA_MAX_UPLOAD_BYTES``; hash it; if the
    project already has this content, report a duplicate (refreshing manifest metadata); else
    probe with ffprobe; refuse a video beyond the limits (``limit_refusal``: duration times
    resolution, HLS segments); decode both ends; store the original untouched; create the Video as
    ``processing`` and queue its transcode on commit. A file that fails any check is recorded as a
    ``failed`` Video with the reason (when it could be hashed) and never raises.

    ``filename`` is the name to record and report when ``path`` is a temporary copy (an upload, an
    object copied from the bucket; default ``path.name``); ``stored_name`` is the storage name of
    an original already in storage (``register_stored``), recorded as it is instead of storing
    ``path`` again.
    """
    name = filename or path.name
    shown = filename or str(path)
    if not path.is_file():
        return IngestResult(shown, "failed", reason="no such file")
    size = path.stat().st_size
    if size == 0:
        return _record_failure(
            project, name, shown, size, hashlib.sha256(b"").hexdigest(), "empty file (0 bytes)", entry
        )
    if size > settings.MEDIA_MAX_UPLOAD_BYTES:
        reason = f"too large: {size} bytes, limit is {settings.MEDIA_MAX_UPLOAD_BYTES}"
        return IngestResult(shown, "failed", reason=reason)
    digest = sha256_of(path)
    existing = Video.objects.filter(project=project, sha256=digest).first()
    if existing is not None:
        if entry is not None:
            _apply_manifest(existing, entry)
            existing.save()
        if existing.status == Video.Status.FAILED:
            return IngestResult(shown, "failed", existing.pk, f"already ingested and failed: {existing.error}")
        return IngestResult(
            shown, "duplicate", existing.pk, f"same content as video {existing.pk} ({existing.filename})"
        )
    try:
        probed = ffmpeg.probe(path)
        if refusal := limit_refusal(probed.duration_s, probed.width, probed.height):
            raise ffmpeg.MediaError(refusal)
        ffmpeg.check_decodable(path, probed.duration_s, timeout_s=settings.MEDIA_PROBE_TIMEOUT_S)
    except ffmpeg.MediaError as exc:
        return _record_failure(project, name, shown, size, digest, str(exc).replace(str(path), name), entry)

    with transaction.atomic():
        video = Video(
            project=project,
            sha256=digest,
            filename=name,
            size_bytes=size,
            status=Video.Status.PROCESSING,
            container=probed.container,
            duration_s=probed.duration_s,
            fps=probed.fps,
            frame_count=probed.frame_count,
            width=probed.width,
            height=probed.height,
            video_codec=probed.video_codec,
            audio_codec=probed.audio_codec,
            rotation=probed.rotation,
        )
        _apply_manifest(video, entry)
        if stored_name:
            video.original.name = stored_name
        else:
            with path.open("rb") as fh:
                video.original.save(f"originals/{digest[:2]}/{digest}{Path(name).suffix.lower()}", File(fh), save=False)
        video.save()
        jobs.enqueue("media.transcode", video.pk)  # the row now, the message on commit
    return IngestResult(shown, "queued", video.pk)


def _record_failure(project, name: str, shown: str, size: int, digest: str, reason: str, entry) -> IngestResult:
    video, created = Video.objects.get_or_create(
        project=project,
        sha256=digest,
        defaults={"filename": name, "size_bytes": size, "status": Video.Status.FAILED, "error": reason},
    )
    if created:
        _apply_manifest(video, entry)
        video.save()
    return IngestResult(shown, "failed", video.pk, reason if created else f"already ingested and failed: {video.error}")


# Storage prefixes the platform writes itself. An object under them belongs to some project's video
# (the bucket is shared by every project), so it cannot be registered into another.
MANAGED_PREFIXES = (
    "originals/",
    "renditions/",
    "hls/",
    "thumbs/",
    "frames/",
    "studyclips/",
    "drafts/",
    "exports/",
    "imports/",
)
KEY_MAX = 1024  # S3's own limit on a key's length, in UTF-8 bytes


def check_storage_key(key: str) -> str:
    """``key`` if it may be registered: 1 to 1024 UTF-8 bytes, no leading ``/``, no ``..`` or ``.``
    path segment, no empty segment, no control character, not under a ``MANAGED_PREFIXES`` folder.
    Raises Invalid naming the key and the rule."""
    shown = key if len(key) <= 200 else key[:200] + "..."
    problem = ""
    if not key or len(key.encode("utf-8", "surrogatepass")) > KEY_MAX:
        problem = f"a key is 1 to {KEY_MAX} bytes"
    elif any(ord(c) < 32 or ord(c) == 127 for c in key):
        problem = "a key has no control characters"
    elif key.startswith("/") or any(part in ("", ".", "..") for part in key.split("/")):
        problem = "a key is a relative path without '.', '..' or empty parts"
    elif key.startswith(MANAGED_PREFIXES):
        problem = "the platform's own files cannot be registered"
    if problem:
        raise Invalid(f"cannot register {shown!r}: {problem}", errors={"key": problem})
    return key


def register_stored(project: Project, key: str, entry: ManifestEntry | None = None) -> IngestResult:
    """Ingest an object already in the storage bucket under ``key`` (``STORAGE_BACKEND=s3``),
    leaving it where it is: the video's original is the object itself, never copied in the bucket.

    Steps: check the key (``check_storage_key``); refuse when storage is a local folder, when the
    object is missing, or when it is above ``MEDIA_MAX_UPLOAD_BYTES`` (its size from one HEAD, before
    any download); stream it to a temporary file under ``MEDIA_WORK_DIR`` (``local_copy``), then
    ``ingest_file`` it (hash, dedup by SHA-256 within the project, probe and decode both ends, queue
    the transcode). An object that is already the original of another project's video is refused (the
    bucket is shared by every project; it is theirs). The hash needs every byte anyway, so one download serves hash and probe; the
    temporary file is removed on return. Raises Invalid in plain words for the refusals; a file that
    is not a readable video is a ``failed`` result, as for ``ingest_file``."""
    check_storage_key(key)
    if Video.objects.filter(original=key).exclude(project=project).exists():
        raise Invalid(
            f"cannot register {key!r}: it is the original of a video of another project",
            errors={"key": "another project's video"},
        )
    if on_local_disk():
        raise Invalid(
            "registering by key needs S3 storage (STORAGE_BACKEND=s3); upload the file instead",
            errors={"key": "storage is a local folder"},
        )
    if not default_storage.exists(key):
        raise Invalid(f"no object {key!r} in the bucket", errors={"key": "no such object"})
    size = default_storage.size(key)
    if size > settings.MEDIA_MAX_UPLOAD_BYTES:
        raise Invalid(
            f"{key!r} is too large: {size} bytes, limit is {settings.MEDIA_MAX_UPLOAD_BYTES}",
            errors={"key": "too large"},
        )
    with local_copy(key) as path:
        return ingest_file(project, path, entry, filename=Path(key).name, stored_name=key)


def transcode(video_id: int) -> Video | None:
    """Write the browser rendition (H.264/AAC MP4, ``+faststart``, height <= MEDIA_RENDITION_MAX_HEIGHT),
    a poster JPEG and timeline thumbnails (sprite sheets + WebVTT, ``media.streaming``) for a
    ``processing`` video and, when it is longer than MEDIA_HLS_MIN_DURATION_S, an HLS rendition (two
    levels; the rendition's key frames are then forced every MEDIA_HLS_SEGMENT_S seconds so its
    segments are cut from it without a second encode); then mark it ``ready``.

    Idempotent: returns at once if the video is gone or not processing. Outputs are written to
    temporary files and saved to storage only when all are complete. A file ffmpeg cannot transcode,
    or whose thumbnails or HLS rendition ffmpeg cannot make, marks the video ``failed`` with ffmpeg's
    reason (retrying would not help; nothing is saved), and so does a video beyond the limits
    (``limit_refusal``), before ffmpeg runs. Storage errors (OSError) propagate so the
    Celery task retries them.
    """
    from annotator.media import streaming

    video = Video.objects.filter(pk=video_id).first()
    if video is None or video.status != Video.Status.PROCESSING:
        return video
    # Ingest checked the limits; a video queued before they were lowered is refused here, unread.
    if refusal := limit_refusal(video.duration_s, video.width, video.height):
        Video.objects.filter(pk=video.pk, status=Video.Status.PROCESSING).update(
            status=Video.Status.FAILED, error=refusal
        )
        return Video.objects.filter(pk=video.pk).first()
    max_height = settings.MEDIA_RENDITION_MAX_HEIGHT
    long = streaming.needs_hls(video.duration_s)
    keyframes = settings.MEDIA_HLS_SEGMENT_S if long else None
    with local_copy(video.original.name) as src, work_dir(f"transcode-{video.pk}-") as work:
        out = work / "rendition.mp4"
        poster = work / "poster.jpg"
        thumbs, hls = work / "thumbs", work / "hls"
        thumbs.mkdir()
        hls.mkdir()
        build = ffmpeg.rendition_args if video.audio_codec else ffmpeg.rendition_args_silent
        timeout = ffmpeg.timeout_for(video.duration_s)
        try:
            ffmpeg.run(
                build(src, out, max_height=max_height, keyframe_every_s=keyframes), timeout_s=timeout, what="transcode"
            )
            at = min(1.0, (video.duration_s or 0) / 2)
            ffmpeg.run(
                ffmpeg.still_args(src, at, max_side=max_height * 16 // 9, dst=str(poster)), timeout_s=120, what="poster"
            )
            streaming.make_thumbnails(out, thumbs, duration_s=video.duration_s or 0, keyframe_every_s=keyframes)
            if long:
                streaming.make_hls(out, hls, work, duration_s=video.duration_s or 0, audio=bool(video.audio_codec))
        except ffmpeg.MediaError as exc:
            Video.objects.filter(pk=video.pk, status=Video.Status.PROCESSING).update(
                status=Video.Status.FAILED, error=str(exc).replace(str(src), video.filename)
            )
            return Video.objects.filter(pk=video.pk).first()
        base = f"renditions/{streaming.media_key(video)}/{video.sha256[:16]}"
        saved: list[str] = []
        try:
            with out.open("rb") as fh:
                rendition_name = default_storage.save(f"{base}.mp4", File(fh))
            saved.append(rendition_name)
            with poster.open("rb") as fh:
                poster_name = default_storage.save(f"{base}-poster.jpg", File(fh))
            saved.append(poster_name)
            saved += streaming.save_folder(thumbs, streaming.thumbs_prefix(video))
            vtt_name = f"{streaming.thumbs_prefix(video)}/{streaming.VTT}"
            hls_name = ""
            if long:
                saved += streaming.save_folder(hls, streaming.hls_prefix(video))
                hls_name = f"{streaming.hls_prefix(video)}/{streaming.MASTER}"
        except BaseException:
            for name in saved:
                default_storage.delete(name)
            raise
    updated = Video.objects.filter(pk=video.pk, status=Video.Status.PROCESSING).update(
        status=Video.Status.READY,
        rendition=rendition_name,
        poster=poster_name,
        thumbnails_vtt=vtt_name,
        hls=hls_name,
        error="",
    )
    if not updated:  # someone else finished first (a redelivered message), or the video was deleted
        # (the thumbnails and HLS files have fixed names, the same the winner's row points at: kept)
        for name in (rendition_name, poster_name):
            default_storage.delete(name)
    video = Video.objects.filter(pk=video.pk).first()
    log.info("video %s %s", video_id, video.status if video else "deleted")
    return video


def mark_transcode_failed(video_id: int, reason: str) -> None:
    """Record a transcode that gave up (out of deliveries or retries; ``reason`` in plain words)."""
    Video.objects.filter(pk=video_id, status=Video.Status.PROCESSING).update(status=Video.Status.FAILED, error=reason)


# ------------------------------------------------------------------------- media-key folders

# A video's files and the folder each must lie in (``streaming.media_key``): ``(field, top folder)``.
_PLACED = (("rendition", "renditions"), ("poster", "renditions"), ("hls", "hls"), ("thumbnails_vtt", "thumbs"))


def misplaced(video: Video) -> list[str]:
    """The fields of ``video`` (rendition, poster, hls, thumbnails_vtt) whose files lie outside its
    media-key folders: files stored before handles, in folders named by the video's row id. Those
    are not served (``media.views``) until ``relocate`` moves them. No query."""
    return [
        field
        for field, top in _PLACED
        if getattr(video, field).name and not getattr(video, field).name.startswith(f"{top}/{video.media_key}/")
    ]


def _copy(src: str, dst: str) -> str:
    """Copy one stored file to ``dst`` (replacing what is there). Returns ``dst``. Raises OSError."""
    if default_storage.exists(dst):
        default_storage.delete(dst)
    with default_storage.open(src, "rb") as fh:
        saved = default_storage.save(dst, File(fh))
    if saved != dst:
        raise OSError(f"storage saved {dst} as {saved}")
    return saved


def relocate(video: Video) -> int:
    """Move ``video``'s misplaced files (``misplaced``) into its media-key folders, keeping their
    names: the rendition and poster to ``renditions/<key>/``, the HLS and thumbnails folders (every
    file in them: playlists and VTT name their segments and sprites relatively) to
    ``hls/<key>/<sha16>/`` and ``thumbs/<key>/<sha16>/``. The row points at the new files once they
    are all copied; only then are the old ones deleted, so a failure (OSError, raised) loses nothing
    and a rerun starts again. Returns how many files were copied (0 when nothing was misplaced)."""
    from annotator.media import streaming

    fields = misplaced(video)
    if not fields:
        return 0
    key = streaming.media_key(video)
    updates: dict[str, str] = {}
    old_files: list[str] = []
    old_folders: list[str] = []
    copied: list[str] = []
    try:
        for field in fields:
            name = getattr(video, field).name
            folder, file = name.rsplit("/", 1)
            top = dict(_PLACED)[field]
            if top == "renditions":
                updates[field] = _copy(name, f"renditions/{key}/{file}")
                copied.append(updates[field])
                old_files.append(name)
                continue
            target = f"{top}/{key}/{folder.rsplit('/', 1)[1]}"
            streaming.clear_prefix(target)
            for other in sorted(default_storage.listdir(folder)[1]):
                copied.append(_copy(f"{folder}/{other}", f"{target}/{other}"))
            updates[field] = f"{target}/{file}"
            old_folders.append(folder)
    except BaseException:
        for name in copied:
            default_storage.delete(name)
        raise
    Video.objects.filter(pk=video.pk).update(**updates)
    for name in old_files:
        default_storage.delete(name)
    for folder in old_folders:
        streaming.clear_prefix(folder)
    return len(copied)


# A group member must keep at least this much time after its offset (seconds), and an ego-exo set has
# at most this many exo views (EgoExoBench's synchronised sets have a handful of exo cameras, seed 001 Sec. 3.2).
GROUP_MIN_OVERLAP_S = 1.0
EGO_EXO_MAX_EXOS = 8
GROUP_OFFSET_MAX_S = 24 * 3600.0


def _check_members(kind: str, videos: list[Video], name: str) -> None:
    """Shared rules of every group: ``videos`` (at least one) all of one project, none twice, each
    probed and not failed, and ``name`` (when given) not taken in the project. Raises Invalid in
    plain words."""
    if len({v.project_id for v in videos}) != 1:
        raise Invalid(f"a {kind} group needs videos of one project", errors={"members": "videos of another project"})
    if len({v.pk for v in videos}) != len(videos):
        raise Invalid(
            f"a {kind} group needs different videos: a video is named twice", errors={"members": "a video twice"}
        )
    for v in videos:
        if v.status == Video.Status.FAILED or not v.duration_s:
            raise Invalid(
                f"video {v.filename} ({v.pk}) "
                + ("failed to ingest" if v.status == Video.Status.FAILED else "has not been probed yet"),
                errors={"members": "not usable"},
            )
    if name and VideoGroup.objects.filter(project_id=videos[0].project_id, name=name).exists():
        raise Invalid(f"this project already has a group named {name!r}", errors={"name": "taken"})


def make_day_night_group(
    day: Video, night: Video, *, offset_s: float = 0.0, name: str = "", params: dict | None = None
) -> VideoGroup:
    """Group two videos of a project as a day-night pair (EgoNight seed 000 Sec. 3.1): the same
    route lit and dark, the night one ``offset_s`` seconds later (night time = day time + offset).
    Returns the existing group if these two are already paired. Raises Invalid for videos of
    different projects, the same video twice, a video not probed or failed, a name taken, or a
    night video that is not at least 1 s long after the offset."""
    if day.project_id != night.project_id or day.pk == night.pk:
        raise Invalid(
            "a day-night pair needs two different videos of the same project", errors={"members": "two videos"}
        )
    if not 0 <= offset_s <= GROUP_OFFSET_MAX_S or (night.duration_s or 0) - offset_s < GROUP_MIN_OVERLAP_S:
        raise Invalid(
            f"offset {offset_s} s leaves less than 1 s of the night video", errors={"offset_s": "out of range"}
        )
    existing = (
        VideoGroup.objects.filter(kind=VideoGroup.Kind.DAY_NIGHT, members__video=day, members__role="day")
        .filter(members__video=night)
        .first()
    )
    if existing is not None:
        return existing
    name = name or f"{day.filename} / {night.filename}"
    _check_members("day-night", [day, night], name)
    with transaction.atomic():
        group = VideoGroup.objects.create(
            project_id=day.project_id, kind=VideoGroup.Kind.DAY_NIGHT, name=name, params=params or {}
        )
        VideoGroupMember.objects.bulk_create(
            [
                VideoGroupMember(group=group, video=day, role=VideoGroupMember.Role.DAY, offset_s=0.0),
                VideoGroupMember(group=group, video=night, role=VideoGroupMember.Role.NIGHT, offset_s=offset_s),
            ]
        )
    return group


def ego_exo_window(ego_duration_s: float, exos: list[tuple[float, float]]) -> tuple[float, float]:
    """The stretch of ego time (seconds) during which every view has footage: ``exos`` is
    [(exo duration_s, offset_s)], exo time = ego time + offset_s (seed 001 Sec. 3.2: synchronised
    multi-view recordings). Returns (start_s, end_s) in ego time; end <= start means no overlap."""
    start = max([0.0, *(-offset for _, offset in exos)])
    end = min([ego_duration_s, *(duration - offset for duration, offset in exos)])
    return start, end


def make_ego_exo_set(
    ego: Video, exos: list[tuple[Video, float]], *, name: str = "", params: dict | None = None
) -> VideoGroup:
    """Group an egocentric video and 1..``EGO_EXO_MAX_EXOS`` exocentric views of the same activity as
    an EgoExoBench multi-view set (seed 001 Sec. 3.2, "synchronized multi-view videos").

    ``exos`` is [(video, offset_s)] in display order: the exo at position k (1-based) shows
    ``ego time + offset_s`` (seconds; negative when that camera started later than the ego one).
    The ego member has position 0 and offset 0. Returns the existing set when one with this ego
    and these exos, in this order and with these offsets, exists (so a re-run is harmless).
    Raises Invalid (in plain words, nothing written) for: no exo or more than the maximum, videos
    of different projects, a video twice, a video not probed or failed, an offset beyond a day, a
    view that keeps less than ``GROUP_MIN_OVERLAP_S`` of common time with the ego video (naming
    it), or a name already taken in the project."""
    if not 1 <= len(exos) <= EGO_EXO_MAX_EXOS:
        raise Invalid(
            f"an ego-exo set needs 1 to {EGO_EXO_MAX_EXOS} exo videos (got {len(exos)})",
            errors={"members": f"1 to {EGO_EXO_MAX_EXOS} exo videos"},
        )
    _check_members("ego-exo", [ego, *(v for v, _ in exos)], "")
    for k, (video, offset) in enumerate(exos, start=1):
        if not -GROUP_OFFSET_MAX_S <= offset <= GROUP_OFFSET_MAX_S:
            raise Invalid(
                f"exo {k} ({video.filename}): offset {offset} s is more than a day",
                errors={f"exos[{k}].offset_s": "at most a day either way"},
            )
        start, end = ego_exo_window(ego.duration_s, [(video.duration_s, offset)])
        if end - start < GROUP_MIN_OVERLAP_S:
            raise Invalid(
                f"exo {k} ({video.filename}, {video.duration_s:g} s) at offset {offset:g} s keeps "
                f"{max(end - start, 0):g} s in common with the ego video ({ego.duration_s:g} s): at least "
                f"{GROUP_MIN_OVERLAP_S:g} s is needed",
                errors={f"exos[{k}].offset_s": "too little overlap"},
            )
    start, end = ego_exo_window(ego.duration_s, [(v.duration_s, o) for v, o in exos])
    if end - start < GROUP_MIN_OVERLAP_S:
        raise Invalid(
            f"the views keep {max(end - start, 0):g} s in common (ego time {start:g}-{end:g} s): at least "
            f"{GROUP_MIN_OVERLAP_S:g} s is needed",
            errors={"members": "too little common time"},
        )
    wanted = [(ego.pk, VideoGroupMember.Role.EGO, 0, 0.0)] + [
        (v.pk, VideoGroupMember.Role.EXO, k, float(o)) for k, (v, o) in enumerate(exos, start=1)
    ]
    for group in VideoGroup.objects.filter(
        kind=VideoGroup.Kind.EGO_EXO, members__video=ego, members__role=VideoGroupMember.Role.EGO
    ).prefetch_related("members"):
        if sorted((m.video_id, m.role, m.position, m.offset_s) for m in group.members.all()) == sorted(wanted):
            return group
    name = name or " + ".join([ego.filename, *(v.filename for v, _ in exos)])[:255]
    _check_members("ego-exo", [ego], name)
    with transaction.atomic():
        group = VideoGroup.objects.create(
            project_id=ego.project_id, kind=VideoGroup.Kind.EGO_EXO, name=name, params=params or {}
        )
        VideoGroupMember.objects.bulk_create(
            [
                VideoGroupMember(group=group, video_id=video_id, role=role, position=position, offset_s=offset)
                for video_id, role, position, offset in wanted
            ]
        )
    return group


def _day_night_from_members(project: Project, members: list[dict], name: str) -> VideoGroup:
    day = [m for m in members if m["role"] == VideoGroupMember.Role.DAY]
    night = [m for m in members if m["role"] == VideoGroupMember.Role.NIGHT]
    if len(day) != 1 or len(night) != 1 or len(members) != 2:
        raise Invalid("a day-night pair needs one day and one night member", errors={"members": "one day, one night"})
    if day[0].get("offset_s", 0.0):
        raise Invalid("the day member's offset is 0: give the night member's offset", errors={"members": "day offset"})
    return make_day_night_group(day[0]["video"], night[0]["video"], offset_s=night[0].get("offset_s", 0.0), name=name)


def _ego_exo_from_members(project: Project, members: list[dict], name: str) -> VideoGroup:
    ego = [m for m in members if m["role"] == VideoGroupMember.Role.EGO]
    exos = [m for m in members if m["role"] == VideoGroupMember.Role.EXO]
    if len(ego) != 1 or len(ego) + len(exos) != len(members):
        raise Invalid(
            "an ego-exo set needs one ego member and exo members only", errors={"members": "one ego, then exo"}
        )
    if ego[0].get("offset_s", 0.0):
        raise Invalid(
            "the ego member's offset is 0: the exo offsets are relative to it", errors={"members": "ego offset"}
        )
    return make_ego_exo_set(ego[0]["video"], [(m["video"], m.get("offset_s", 0.0)) for m in exos], name=name)


# How each kind of group is made from a list of members (``make_group``); a new kind adds its maker here.
GROUP_MAKERS = {VideoGroup.Kind.DAY_NIGHT: _day_night_from_members, VideoGroup.Kind.EGO_EXO: _ego_exo_from_members}


def make_group(project: Project, kind: str, members: list[dict], *, name: str = "") -> VideoGroup:
    """Make a group of ``kind`` in ``project`` from ``members`` [{video: id, role, offset_s}] (the
    groups API's input; exo members in display order), by the kind's maker in ``GROUP_MAKERS``.
    Raises Invalid in plain words: an unknown kind, a video id not of this project (naming the
    member), roles that do not fit the kind, or any rule of the kind's maker."""
    maker = GROUP_MAKERS.get(kind)
    if maker is None:
        raise Invalid(
            f"groups of kind {kind!r} cannot be made here; kinds: {', '.join(GROUP_MAKERS)}", errors={"kind": "unknown"}
        )
    videos = Video.objects.in_bulk([m["video"] for m in members])
    resolved = []
    for i, m in enumerate(members):
        video = videos.get(m["video"])
        if video is None or video.project_id != project.pk:
            raise Invalid(
                f"members[{i}]: no video {m['video']} in project {project.slug}",
                errors={f"members[{i}].video": "not a video of this project"},
            )
        resolved.append({**m, "video": video})
    return maker(project, resolved, name)


def night_candidates(project: Project) -> list[Video]:
    """Real, ready videos that are not night videos: the day clips to derive night versions of."""
    return list(
        Video.objects.filter(project=project, source=Video.Source.REAL, status=Video.Status.READY)
        .exclude(illumination=Video.Illumination.NIGHT)
        .order_by("id")
    )


def derive_night(day_id: int, level: str) -> Video | None:
    """Make the synthetic night version of a day video at ``level`` (easy, medium, hard; recipe in
    ``adapters.ffmpeg.NIGHT_LEVELS``, EgoNight App. A.1) and pair it with the day video.

    Steps: return the existing derivative if there is one (idempotent); render it with ffmpeg into
    a temporary file; ingest that file as a new video (``source=synthetic``, ``illumination=night``,
    ``difficulty=level``, ``derived_from`` the day video, the recipe in ``extra``), which queues its
    transcode; group the two as a day-night pair with offset 0. A render failure raises MediaError.
    """
    day = Video.objects.select_related("project").filter(pk=day_id).first()
    if day is None:
        return None
    existing = Video.objects.filter(derived_from=day, difficulty=level, source=Video.Source.SYNTHETIC).first()
    if existing is None:
        recipe = [[name, kwargs] for name, kwargs in ffmpeg.NIGHT_LEVELS[level]]
        with local_copy(day.original.name) as src, work_dir(f"night-{day.pk}-{level}-") as work:
            out = work / f"{Path(day.filename).stem}-night-{level}.mp4"
            ffmpeg.run(
                ffmpeg.night_args(src, out, level=level, max_height=settings.MEDIA_RENDITION_MAX_HEIGHT),
                timeout_s=ffmpeg.timeout_for(day.duration_s),
                what="night rendition",
            )
            entry = ManifestEntry(
                file=out.name,
                fields={
                    "source": Video.Source.SYNTHETIC,
                    "illumination": Video.Illumination.NIGHT,
                    "difficulty": level,
                    "domain": day.domain,
                    "scenario": day.scenario,
                    "view": day.view,
                },
                extra={"derived_from": day.filename, "night_recipe": recipe},
            )
            result = ingest_file(day.project, out, entry)
        if result.outcome == "failed" or result.video_id is None:
            raise ffmpeg.MediaError(f"night rendition of {day.filename} could not be ingested: {result.reason}")
        Video.objects.filter(pk=result.video_id).update(derived_from=day)
        existing = Video.objects.get(pk=result.video_id)
    make_day_night_group(
        day,
        existing,
        offset_s=0.0,
        name=f"{day.filename} / night {level}",
        params={"synthetic": True, "difficulty": level},
    )
    return existing


__all__ = [
    "IngestResult",
    "expand_paths",
    "ingest_file",
    "limit_refusal",
    "register_stored",
    "check_storage_key",
    "local_copy",
    "on_local_disk",
    "transcode",
    "mark_transcode_failed",
    "sha256_of",
    "make_day_night_group",
    "make_ego_exo_set",
    "ego_exo_window",
    "make_group",
    "GROUP_MAKERS",
    "night_candidates",
    "derive_night",
]
