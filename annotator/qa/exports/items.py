"""Evaluation items of the toolkit formats (VLMEvalKit, lmms-eval): a paired item asked of each clip."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from annotator.qa.exports.base import ExportResult
from annotator.qa.exports.media import clip_name

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def eval_items(rows: Iterable[dict], result: ExportResult) -> Iterator[dict]:
    """Evaluation items of export rows for the toolkit formats: a paired item (day-night group)
    becomes two, the same question of the day clip and of the night clip (EgoNight seed 000 Sec. 3.2
    and Fig. 3; Fig. 5(a) compares day and night per paired type); any other row is one item of its
    own video (a life-log item of its parts in order). Each item: the row plus ``condition``
    (``day``/``night``/``""``), ``item_video`` (the video's row fields), ``item_clip`` (start, end
    seconds of that video) and ``item_media`` (list of relative clip paths, in order)."""
    for row in rows:
        result.rows += 1
        members = row["group"]["members"]
        if row["paired"] and row["group"]["kind"] == "day_night":
            for role in ("day", "night"):
                m = next((m for m in members if m["role"] == role), None)
                if m is None:
                    continue
                yield {
                    **row,
                    "condition": role,
                    "item_video": m,
                    "item_clip": (
                        max(row["clip_start_s"] + m["offset_s"], 0.0),
                        max(row["clip_end_s"] + m["offset_s"], 0.0),
                    ),
                    "item_media": [m["media_path"]] if m["media_path"] else [],
                }
        elif row["group"]["kind"] == "life_log":
            yield {
                **row,
                "condition": "",
                "item_video": row["video"],
                "item_clip": (row["clip_start_s"], row["clip_end_s"]),
                "item_media": [s["media_path"] for s in row["media_segments"] if s["media_path"]],
            }
        else:
            yield {
                **row,
                "condition": row["video"]["illumination"],
                "item_video": row["video"],
                "item_clip": (row["clip_start_s"], row["clip_end_s"]),
                "item_media": [row["media_path"]] if row["media_path"] else [],
            }


def _video_key(item: dict) -> str:
    a, b = item["item_clip"]
    return clip_name(item["item_video"]["sha256"], a, b)[:-4]
