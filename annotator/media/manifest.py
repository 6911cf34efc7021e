"""Manifests: per-video metadata given as JSONL (one object a line) or CSV (one row a video).

Each entry names its file by basename in ``file``; the other known keys set the video's metadata
(source, illumination, difficulty, domain, scenario, view), ``annotations`` carries structured
annotations (description, objects, actions, counts) and any other key is kept in ``extra``.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from annotator.media.models import Video

CHOICE_FIELDS = {
    "source": Video.Source.values,
    "illumination": Video.Illumination.values,
    "difficulty": Video.Difficulty.values,
    "view": Video.View.values,
}
FREE_FIELDS = ("domain", "scenario")


class ManifestError(ValueError):
    """A manifest that cannot be read; the message names the line (1-based) and the problem."""


@dataclass
class ManifestEntry:
    """Metadata for one file, validated."""

    file: str
    fields: dict[str, str] = field(default_factory=dict)
    annotations: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)


def _entry(raw: dict, where: str) -> ManifestEntry:
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: expected an object, got {type(raw).__name__}")
    name = raw.get("file")
    if not isinstance(name, str) or not name.strip():
        raise ManifestError(f"{where}: 'file' is missing or empty")
    fields: dict[str, str] = {}
    for key, allowed in CHOICE_FIELDS.items():
        value = raw.get(key)
        if value in (None, ""):
            continue
        if value not in allowed:
            raise ManifestError(f"{where}: {key} must be one of {', '.join(allowed)}, got {value!r}")
        fields[key] = value
    for key in FREE_FIELDS:
        if raw.get(key) not in (None, ""):
            fields[key] = str(raw[key])
    annotations = raw.get("annotations") or {}
    if isinstance(annotations, str):
        try:
            annotations = json.loads(annotations)
        except json.JSONDecodeError as exc:
            raise ManifestError(f"{where}: annotations is not JSON ({exc.msg})") from None
    if not isinstance(annotations, dict):
        raise ManifestError(f"{where}: annotations must be an object")
    known = set(CHOICE_FIELDS) | set(FREE_FIELDS) | {"file", "annotations"}
    extra = {k: v for k, v in raw.items() if k not in known and v not in (None, "")}
    return ManifestEntry(file=Path(name).name, fields=fields, annotations=annotations, extra=extra)


def load_manifest(path: str | Path) -> dict[str, ManifestEntry]:
    """Read a ``.jsonl`` or ``.csv`` manifest; return entries keyed by file basename.

    Raises ManifestError (with the line number) on malformed lines, unknown choice values or a
    file named twice; nothing is ingested from a manifest that fails.
    """
    path = Path(path)
    entries: dict[str, ManifestEntry] = {}
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as fh:
            rows = [(i + 2, row) for i, row in enumerate(csv.DictReader(fh))]
    else:
        rows = []
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rows.append((lineno, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise ManifestError(f"{path.name} line {lineno}: not JSON ({exc.msg})") from None
    for lineno, raw in rows:
        entry = _entry(raw, f"{path.name} line {lineno}")
        if entry.file in entries:
            raise ManifestError(f"{path.name} line {lineno}: {entry.file} is listed twice")
        entries[entry.file] = entry
    return entries
