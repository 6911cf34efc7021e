"""Ingest files into a project: each file in its own transaction, so one bad file fails alone with
its reason and the rest of the batch goes on (SPEC part 1); the limits checked before any transcode."""

from __future__ import annotations

import hashlib
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
from annotator.media.models import Video
from annotator.media.workfiles import local_copy, on_local_disk
from annotator.projects.models import Project

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
