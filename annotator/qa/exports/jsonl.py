"""The ``jsonl`` format: one row a line, to a file (with the dataset card beside it) or a stream."""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from annotator.qa.exports.base import ExportResult, Format, _atomic, _counted, register


def jsonl_chunks(rows: Iterable[dict]) -> Iterator[bytes]:
    """JSONL bytes of ``rows``, about 1 MB at a time (for files and streamed responses)."""
    buf, size = [], 0
    for row in rows:
        line = orjson.dumps(row) + b"\n"
        buf.append(line)
        size += len(line)
        if size >= 1 << 20:
            yield b"".join(buf)
            buf, size = [], 0
    if buf:
        yield b"".join(buf)


def write_jsonl(rows: Iterable[dict], out: Path | io.BufferedIOBase, result: ExportResult) -> None:
    """Write ``rows`` as JSONL to the file ``out`` (atomically) or to a binary stream."""
    if not isinstance(out, Path):
        for chunk in jsonl_chunks(_counted(rows, result)):
            out.write(chunk)
        return
    tmp = _atomic(out)
    try:
        with open(tmp, "wb") as f:
            for chunk in jsonl_chunks(_counted(rows, result)):
                f.write(chunk)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    result.files.append(out)


register(
    Format(
        "jsonl",
        lambda rows, out, result, **_: write_jsonl(rows, out, result),
        label="JSONL",
        suffix="jsonl",
        position=10,
        card=True,
        streams=True,
    )
)
