"""Media of an export: each (video, clip range) cut once by ffmpeg into the media folder."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.conf import settings

from annotator.qa.exports.base import ExportResult
from annotator.qa.exports.rows import _CACHE_MAX, Media


def clip_name(sha256: str, start_s: float, end_s: float) -> str:
    """A clip's file name: ``<sha256[:16]>_<start_ms>-<end_ms>.mp4`` (content hash, not the
    filename, which is not unique; ms rounded)."""
    return f"{sha256[:16]}_{round(start_s * 1000)}-{round(end_s * 1000)}.mp4"


class ClipMedia(Media):
    """Clips cut by ffmpeg into ``folder`` (from the stored rendition, else the original, through
    ``media.services.local_copy``), each once: a clip already in the folder is reused. Paths in
    rows are relative to ``relative_to`` (the export's folder). Cutting runs one ffmpeg per CPU;
    ``adapters.ffmpeg.clip_args`` re-encodes frame-exact H.264 with +faststart, no audio."""

    def __init__(self, folder: Path, relative_to: Path, result: ExportResult, *, max_height: int | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.prefix = os.path.relpath(self.folder.resolve(), Path(relative_to).resolve())
        self.result = result
        self.max_height = max_height or settings.MEDIA_RENDITION_MAX_HEIGHT
        self.pending: dict[str, tuple[dict, float, float]] = {}
        self.done: dict[str, bool] = {}  # name -> cut (True) or failed (False); bounded like the caches

    enabled = True

    def clip(self, video: dict, start_s: float, end_s: float) -> str:
        name = clip_name(video["sha256"], start_s, end_s)
        if name not in self.done and name not in self.pending:
            self.pending[name] = (video, start_s, end_s)
        return name

    def resolve(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.done.get(name) else ""

    def flush(self) -> None:
        if not self.pending:
            return
        if len(self.done) > _CACHE_MAX:
            self.done = {}
        todo = []
        for name, spec in self.pending.items():
            if (self.folder / name).is_file() and (self.folder / name).stat().st_size > 0:
                self.done[name] = True
                self.result.clips_reused += 1
            else:
                todo.append((name, spec))
        self.pending = {}
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for name, error in pool.map(self._cut, todo):
                self.done[name] = error is None
                if error is None:
                    self.result.clips_cut += 1
                else:
                    self.result.media_failures.append(f"{name}: {error}")

    def _cut(self, item: tuple[str, tuple[dict, float, float]]) -> tuple[str, str | None]:
        from annotator.adapters import ffmpeg
        from annotator.media.services import local_copy

        name, (video, a, b) = item
        what = f"clip {a:.3f}-{b:.3f} s of {video['filename']} (video {video['id']})"
        if not video["source_file"]:
            return name, f"{what}: the video has no stored file"
        tmp = self.folder / f".{name}.part"
        try:
            with local_copy(video["source_file"]) as src:
                ffmpeg.run(
                    ffmpeg.clip_args(src, tmp, start_s=a, end_s=b, max_height=self.max_height),
                    timeout_s=ffmpeg.timeout_for(b - a),
                    what=what,
                )
            if not tmp.is_file() or tmp.stat().st_size == 0:
                return name, f"{what}: ffmpeg wrote nothing"
            os.replace(tmp, self.folder / name)  # a reader never sees a half-written clip
            return name, None
        except (ffmpeg.MediaError, OSError) as exc:
            return name, str(exc)
        finally:
            tmp.unlink(missing_ok=True)
