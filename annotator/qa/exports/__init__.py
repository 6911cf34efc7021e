"""Exports of a project's verified QA pairs that model-evaluation toolkits load as they are (issue 11).

One row shape for every format (``ROW_SCHEMA``, README "Export schema"): every key in every row,
always of the same type, no nulls (absent values are ``""``, ``-1`` or ``-1.0``, empty lists), and
free-form metadata (a video's manifest keys, a night recipe, a group's params) as ONE JSON string,
so that pyarrow and Hugging Face ``datasets`` infer the same types for every export, whatever QA
types it holds. Rows are read in keyset pages of 5,000 (one indexed query each; outside a
transaction a reader thread fetches the next page meanwhile), so memory holds about a page at any
size, and are serialised by orjson (``bench/export.py`` measures it).

Writers, one per ``--format`` of ``manage.py export_qa``:

- ``jsonl``: one row a line (the default), plus a dataset card beside it (README.md with the
  ``datasets`` YAML header: a config named by the data's content hash, its data_files and the
  dataset_info features, which type every file of the folder alike, empty lists included).
- ``parquet``: the same rows under the explicit ``ROW_SCHEMA`` in ``data/`` (the Hub layout), the card
  in the folder above.
- ``vlmevalkit``: VLMEvalKit's Video-MCQ TSV (index, question, A, B, ..., answer letter, video, ...)
  and the video dataset class that reads it (``export_files/vlmevalkit_dataset.py``).
- ``lmms-eval``: a task folder: ``<task>.yaml`` (paths relative to it), ``<task>.jsonl`` and the
  ``utils.py`` it names (``export_files/lmms_eval_utils.py``); only with media.

Paired items (EgoNight seed 000 Sec. 3.2, Fig. 3: "the same question-answer applies to both day and
night clips") expand into one evaluation item for the day clip and one for the night clip in the two
toolkit formats; the dataset formats keep one row per QA pair with the group's members.

Media (``--with-media DIR``): each (video, clip range) is cut once by ffmpeg into
``DIR/<sha256[:16]>_<start_ms>-<end_ms>.mp4`` (a clip already there is reused) and rows carry its
path relative to the export. A clip that cannot be cut fails alone: its rows get an empty path and
the failure is listed in ``ExportResult.media_failures``. A life-log item's clip is in virtual
seconds over parts with gaps between them (X-LeBench seed 002 Sec. 3), which no one video holds: its
row's ``media_path`` is ``""`` and ``media_segments`` lists, in order, each part the range covers
with its local range and the clip cut from it (every other row has ``[]``).

The package: ``rows`` (the row query and ``iter_rows``), ``media`` (clip cutting), ``card`` (the
dataset card), ``items`` (the toolkit formats' evaluation items), and one module per format
(``jsonl``, ``parquet``, ``vlmevalkit``, ``lmms_eval``), each registering itself in ``base.REGISTRY``
with its label, file suffix and position; every module of the package is imported, so a new format is
one module. ``export`` writes any registered format. Every public name is importable from here.
"""

from __future__ import annotations

import gc
from pathlib import Path

from annotator.core import registry
from annotator.projects.models import Project
from annotator.qa.exports.base import FILES, REGISTRY, ExportResult, Format, register
from annotator.qa.exports.card import CARD_MARK, DATA_PATTERNS, data_fingerprint, dataset_card, write_card
from annotator.qa.exports.items import LETTERS, eval_items
from annotator.qa.exports.jsonl import jsonl_chunks, write_jsonl
from annotator.qa.exports.lmms_eval import NO_MEDIA_LMMS, write_lmms_eval
from annotator.qa.exports.media import ClipMedia, clip_name
from annotator.qa.exports.parquet import parquet_layout, write_parquet
from annotator.qa.exports.rows import CHUNK_ROWS, Filters, Media, count_rows, iter_rows, max_options
from annotator.qa.exports.schema import NO_FLOAT, NO_INT, row_schema
from annotator.qa.exports.vlmevalkit import write_vlmevalkit

__all__ = [
    "CARD_MARK",
    "CHUNK_ROWS",
    "DATA_PATTERNS",
    "FILES",
    "FORMATS",
    "LETTERS",
    "NO_FLOAT",
    "NO_INT",
    "NO_MEDIA_LMMS",
    "REGISTRY",
    "ClipMedia",
    "ExportResult",
    "Filters",
    "Format",
    "Media",
    "clip_name",
    "count_rows",
    "data_fingerprint",
    "dataset_card",
    "eval_items",
    "export",
    "iter_rows",
    "jsonl_chunks",
    "max_options",
    "parquet_layout",
    "register",
    "row_schema",
    "write_card",
    "write_jsonl",
    "write_lmms_eval",
    "write_parquet",
    "write_vlmevalkit",
]

# Every module of the package is imported: each format module registers itself (``base.register``),
# found without a list; the others (rows, media, card, ...) register nothing.
registry.import_modules(__name__, __path__)

FORMATS = tuple(REGISTRY)  # in position order: ("jsonl", "parquet", "vlmevalkit", "lmms-eval")


def export(
    project: Project,
    fmt: str,
    out: Path | None,
    *,
    filters: Filters = Filters(),
    media_dir: Path | None = None,
    stream=None,
    progress=None,
    task: str | None = None,
) -> ExportResult:
    """Write the export of ``project`` in format ``fmt`` (one of ``FORMATS``) to ``out`` (a file;
    for ``lmms-eval`` a folder), or JSONL to the binary ``stream`` when ``out`` is None.

    ``media_dir``: cut the rows' clips there (``ClipMedia``), paths relative to the export's folder
    (for Parquet the dataset folder above ``data/``, ``parquet_layout``).
    ``progress`` wraps the row iterator (a progress bar). Raises ValueError for an unknown format,
    a format that needs a file given none, or lmms-eval without ``media_dir`` (its items are videos),
    before anything is written. Returns an ``ExportResult``; clip failures are in it,
    never raised."""
    spec = REGISTRY.get(fmt)
    if spec is None:
        raise ValueError(f"unknown export format {fmt!r}: choose one of {', '.join(REGISTRY)}")
    if out is None and not spec.streams:
        raise ValueError(f"the {fmt} format is written to a file: give --out PATH, not '-'")
    if spec.needs_media and media_dir is None:
        raise ValueError(spec.needs_media)
    result = ExportResult()
    # The objects alive before the export (Django, the libraries: hundreds of thousands) leave the
    # collector's full passes while it runs; rows die young. A 100k export took 5.4 s with them in, 5.0 s out.
    gc.freeze()
    try:
        _export(project, spec, out, filters, media_dir, stream, progress, task, result)
    finally:
        gc.unfreeze()
    return result


def _export(project, spec: Format, out, filters, media_dir, stream, progress, task, result: ExportResult) -> None:
    root = None
    if out is not None and spec.layout is not None:
        root, out = spec.layout(out)
    elif out is not None:
        root = out if spec.folder else out.parent
    media = ClipMedia(media_dir, root or Path.cwd(), result) if media_dir is not None else None
    rows = iter_rows(project, filters, media=media)
    if progress is not None:
        rows = progress(rows)
    spec.write(rows, out if out is not None else stream, result, project=project, filters=filters, task=task)
    if spec.card and out is not None:
        card = write_card(root, dataset_card(project, spec.name, filters, result.rows, root))
        if card is not None:
            result.files.append(card)
