"""The export row's explicit pyarrow schema (``row_schema``) and what "absent" is in a row."""

from __future__ import annotations

# What "absent" is in a row: no value is ever null (see the module docstring).
NO_INT = -1


NO_FLOAT = -1.0


def _schema():
    """The pyarrow schema of an export row (``ROW_SCHEMA``); built lazily so that importing this
    module does not import pyarrow."""
    import pyarrow as pa

    video_fields = [
        ("id", pa.int64()), ("sha256", pa.string()), ("filename", pa.string()), ("duration_s", pa.float64()),
        ("fps", pa.float64()), ("width", pa.int64()), ("height", pa.int64()), ("illumination", pa.string()),
        ("source", pa.string()), ("storage_path", pa.string()), ("metadata", pa.string()),
    ]
    member = pa.struct([("role", pa.string()), ("position", pa.int64()), ("offset_s", pa.float64()),
                        *video_fields[:10], ("media_path", pa.string())])
    segment = pa.struct([("position", pa.int64()), ("video_id", pa.int64()), ("sha256", pa.string()),
                         ("filename", pa.string()), ("start_s", pa.float64()), ("end_s", pa.float64()),
                         ("virtual_start_s", pa.float64()), ("virtual_end_s", pa.float64()), ("media_path", pa.string())])
    labelled = pa.struct([("label", pa.string()), ("video_id", pa.int64()), ("role", pa.string()),
                          ("start_s", pa.float64()), ("end_s", pa.float64()), ("sha256", pa.string()),
                          ("filename", pa.string()), ("media_path", pa.string())])
    return pa.schema([
        ("id", pa.int64()), ("project", pa.string()), ("qa_type", pa.string()), ("set_kind", pa.string()),
        ("answer_kind", pa.string()), ("paired", pa.bool_()), ("question", pa.string()), ("answer", pa.string()),
        ("options", pa.list_(pa.string())), ("answer_index", pa.int64()),
        ("answer_start_s", pa.float64()), ("answer_end_s", pa.float64()),
        ("clip_start_s", pa.float64()), ("clip_end_s", pa.float64()),
        ("video", pa.struct(video_fields)), ("media_path", pa.string()), ("media_segments", pa.list_(segment)),
        ("group", pa.struct([("kind", pa.string()), ("name", pa.string()), ("params", pa.string()),
                             ("members", pa.list_(member))])),
        ("videos", pa.list_(labelled)),
        ("provenance", pa.string()),
        ("draft", pa.struct([("question", pa.string()), ("answer", pa.string()), ("pipeline", pa.string()),
                             ("model", pa.string())])),
        ("annotators", pa.list_(pa.string())), ("verifications", pa.int64()), ("verified_at", pa.string()),
    ])


def row_schema():
    """The explicit pyarrow schema of every export row (Parquet is written under it)."""
    global _ROW_SCHEMA
    if _ROW_SCHEMA is None:
        _ROW_SCHEMA = _schema()
    return _ROW_SCHEMA


_ROW_SCHEMA = None

