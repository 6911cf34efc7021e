"""The export row's explicit pyarrow schema (``row_schema``) and what "absent" is in a row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# What "absent" is in a row: no value is ever null (see the module docstring).
NO_INT = -1


NO_FLOAT = -1.0


def _schema():
    """The pyarrow schema of an export row (``ROW_SCHEMA``); built lazily so that importing this
    module does not import pyarrow."""
    import pyarrow as pa

    video_fields = [
        ("id", pa.int64()),
        ("sha256", pa.string()),
        ("filename", pa.string()),
        ("duration_s", pa.float64()),
        ("fps", pa.float64()),
        ("width", pa.int64()),
        ("height", pa.int64()),
        ("illumination", pa.string()),
        ("source", pa.string()),
        ("storage_path", pa.string()),
        ("metadata", pa.string()),
    ]
    member = pa.struct(
        [
            ("role", pa.string()),
            ("position", pa.int64()),
            ("offset_s", pa.float64()),
            *video_fields[:10],
            ("media_path", pa.string()),
        ]
    )
    segment = pa.struct(
        [
            ("position", pa.int64()),
            ("video_id", pa.int64()),
            ("sha256", pa.string()),
            ("filename", pa.string()),
            ("start_s", pa.float64()),
            ("end_s", pa.float64()),
            ("virtual_start_s", pa.float64()),
            ("virtual_end_s", pa.float64()),
            ("media_path", pa.string()),
        ]
    )
    labelled = pa.struct(
        [
            ("label", pa.string()),
            ("video_id", pa.int64()),
            ("role", pa.string()),
            ("start_s", pa.float64()),
            ("end_s", pa.float64()),
            ("sha256", pa.string()),
            ("filename", pa.string()),
            ("media_path", pa.string()),
        ]
    )
    return pa.schema(
        [
            ("id", pa.int64()),
            ("project", pa.string()),
            ("qa_type", pa.string()),
            ("set_kind", pa.string()),
            ("answer_kind", pa.string()),
            ("paired", pa.bool_()),
            ("question", pa.string()),
            ("answer", pa.string()),
            ("options", pa.list_(pa.string())),
            ("answer_index", pa.int64()),
            ("answer_start_s", pa.float64()),
            ("answer_end_s", pa.float64()),
            ("clip_start_s", pa.float64()),
            ("clip_end_s", pa.float64()),
            ("video", pa.struct(video_fields)),
            ("media_path", pa.string()),
            ("media_segments", pa.list_(segment)),
            (
                "group",
                pa.struct(
                    [
                        ("kind", pa.string()),
                        ("name", pa.string()),
                        ("params", pa.string()),
                        ("members", pa.list_(member)),
                    ]
                ),
            ),
            ("videos", pa.list_(labelled)),
            ("provenance", pa.string()),
            (
                "draft",
                pa.struct(
                    [
                        ("question", pa.string()),
                        ("answer", pa.string()),
                        ("pipeline", pa.string()),
                        ("model", pa.string()),
                    ]
                ),
            ),
            ("annotators", pa.list_(pa.string())),
            ("verifications", pa.int64()),
            ("verified_at", pa.string()),
            *((part.name, part.arrow_type()) for part in PARTS.values()),
        ]
    )


@dataclass(frozen=True)
class RowPart:
    """A field other apps add to every export row (issue 20: the consensus outcome of an overlap
    disagreement), registered with ``register_part``: ``arrow_type`` (its pyarrow type, for
    ``row_schema()``), ``default`` (the value of a row it has nothing for) and
    ``fetch(project_id, first_qa_id, last_qa_id) -> {qa id: value}`` (one query per page of rows)."""

    name: str
    arrow_type: Callable[[], object]
    default: object
    fetch: Callable[[int, int, int], dict]


PARTS: dict[str, RowPart] = {}


def register_part(part: RowPart) -> RowPart:
    """Add ``part`` to every export row, after the built-in fields. Raises ValueError for a name
    taken. Register before the first export (an app's ``ready``): the schema is built once."""
    if part.name in PARTS and PARTS[part.name] is not part:
        raise ValueError(f"the export row already has a part {part.name!r}")
    PARTS[part.name] = part
    return part


def row_schema():
    """The explicit pyarrow schema of every export row (Parquet is written under it)."""
    global _ROW_SCHEMA
    if _ROW_SCHEMA is None:
        _ROW_SCHEMA = _schema()
    return _ROW_SCHEMA


_ROW_SCHEMA = None
