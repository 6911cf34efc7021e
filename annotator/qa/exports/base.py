"""What every export format shares: ``ExportResult``, atomic files, the format registry (each format
module registers itself with ``register``) and where the shipped files are."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from annotator.core import registry


@dataclass
class ExportResult:
    """What an export wrote: ``rows`` (QA pairs), ``items`` (rows of the written file, after
    expansion), ``files`` (paths), ``clips_cut`` / ``clips_reused``, and ``media_failures``
    (``"<clip>: <reason>"``), ``skipped`` (QA pairs a format cannot hold, with the reason)."""

    rows: int = 0
    items: int = 0
    files: list[Path] = field(default_factory=list)
    clips_cut: int = 0
    clips_reused: int = 0
    media_failures: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


def _dumps(row: dict) -> bytes:
    return orjson.dumps(row) + b"\n"


def _atomic(path: Path):
    """A temporary file beside ``path``; rename it over ``path`` once complete (see ``_commit``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.part")


def _counted(rows: Iterable[dict], result: ExportResult) -> Iterator[dict]:
    for row in rows:
        result.rows += 1
        result.items += 1
        yield row


FILES = (
    Path(__file__).resolve().parent.parent / "export_files"
)  # the files exports ship beside their data (package data)


@dataclass(frozen=True)
class Format:
    """An export format: ``name`` (``--format``), ``write(rows, out, result, *, project, filters,
    task)`` where ``out`` is a Path or, when ``streams``, a binary stream; ``folder``: ``--out`` is a
    folder; ``card``: a dataset card goes in the export's folder; ``needs_media``: the sentence that
    refuses an export without ``--with-media``; ``layout(out) -> (export folder, file)`` where the file
    does not go where ``--out`` says (Parquet's ``data/``); ``label``: its name on the export page;
    ``suffix``: the file name's suffix of a one-file export made from the page (none for a folder);
    ``position``: its place in ``FORMATS`` (the first is the default)."""

    name: str
    write: Callable
    label: str = ""
    suffix: str = ""
    position: int = 100
    folder: bool = False
    card: bool = False
    streams: bool = False
    needs_media: str | None = None
    layout: Callable[[Path], tuple[Path, Path]] | None = None


REGISTRY: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Add ``fmt`` to the formats, kept in ``position`` order, then by name. Raises ValueError for a
    one-file format without a ``suffix``."""
    if not fmt.folder and not fmt.suffix:
        raise ValueError(f"the {fmt.name} format writes one file: give it a suffix")
    registry.add(REGISTRY, fmt.name, fmt)
    return fmt
