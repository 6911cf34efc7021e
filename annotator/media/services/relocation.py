"""Media-key folders: a video's files moved to the folders its media key names."""

from __future__ import annotations

from django.core.files import File
from django.core.files.storage import default_storage

from annotator.media.models import Video

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
