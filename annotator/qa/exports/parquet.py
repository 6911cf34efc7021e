"""The ``parquet`` format: the rows under the explicit schema, in ``data/`` of the dataset folder."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from annotator.qa.exports.base import ExportResult, Format, _atomic, _counted, register
from annotator.qa.exports.schema import row_schema


def parquet_layout(out: Path) -> tuple[Path, Path]:
    """(dataset folder, file) of a Parquet export asked for at ``out``: the Hub layout, the file under
    ``data/`` of the dataset folder and the card in that folder (a pyarrow dataset over ``data/`` then
    holds only Parquet). The dataset folder is ``out``'s folder, or its parent when that is ``data``."""
    folder = out.parent.parent if out.parent.name == "data" else out.parent
    return folder, folder / "data" / out.name


def write_parquet(rows: Iterable[dict], out: Path, result: ExportResult, *, batch_rows: int = 20000) -> None:
    """Write ``rows`` as Parquet under the explicit ``row_schema()`` (zstd), atomically, in row
    groups of ``batch_rows`` (memory is bounded by one batch)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = row_schema()
    tmp = _atomic(out)
    try:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            batch = []
            for row in _counted(rows, result):
                batch.append(row)
                if len(batch) >= batch_rows:
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                    batch = []
            if batch or result.rows == 0:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    result.files.append(out)


register(
    Format(
        "parquet",
        lambda rows, out, result, **_: write_parquet(rows, out, result),
        label="Parquet",
        suffix="parquet",
        position=20,
        card=True,
        layout=parquet_layout,
    )
)
