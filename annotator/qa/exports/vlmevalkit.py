"""The ``vlmevalkit`` format: VLMEvalKit's Video-MCQ TSV and the dataset class that reads it."""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from pathlib import Path

from annotator.qa.exports.base import FILES, ExportResult, Format, _atomic, register
from annotator.qa.exports.items import LETTERS, _video_key, eval_items
from annotator.qa.exports.rows import max_options


def write_vlmevalkit(rows: Iterable[dict], out: Path, result: ExportResult, *, max_options: int) -> None:
    """VLMEvalKit's Video-MCQ TSV (``vlmeval.smp.load`` reads it with ``pd.read_csv(sep='\\t')``):
    ``index`` (0..n-1), ``question``, one column per option letter ``A``..(``max_options`` letters,
    "" past an item's own options), ``answer`` (the letter), ``video`` (the clip's name, sha256 and
    range, without extension), ``video_path`` (relative clip path; "" without ``--with-media``),
    ``candidates`` (the lettered options "A. text" as a Python list literal, as Video-MME's TSV), ``category`` (QA
    type), ``condition`` (day/night/...), ``clip_start_s``, ``clip_end_s``, ``medias`` (for items
    whose options are videos: EgoExoBench_MCQ's list of ``{type: video, video_path, video_start,
    video_end}``, one per labelled video; else "[]"), ``qa_id``, ``provenance``.
    Only multiple-choice items: open-ended ones are counted in ``result.skipped``. Beside the TSV goes
    ``vlmevalkit_dataset.py`` (``export_files/``): the VideoBaseDataset class that hands VLMEvalKit the
    clips (its generic path would read the TSV as a text-only task)."""
    letters = LETTERS[: max(max_options, 1)]
    columns = [
        "index",
        "question",
        *letters,
        "answer",
        "video",
        "video_path",
        "candidates",
        "category",
        "condition",
        "clip_start_s",
        "clip_end_s",
        "medias",
        "qa_id",
        "provenance",
    ]
    tmp = _atomic(out)
    index = 0
    try:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, delimiter="\t", lineterminator="\n")
            writer.writerow(columns)
            for item in eval_items(rows, result):
                options = item["options"]
                if not options or not 0 <= item["answer_index"] < len(options) or len(options) > len(letters):
                    result.skipped["not multiple choice"] = result.skipped.get("not multiple choice", 0) + 1
                    continue
                medias = [
                    {
                        "type": "video",
                        "video_path": v["media_path"],
                        "video_start": v["start_s"],
                        "video_end": v["end_s"],
                    }
                    for v in item["videos"]
                ]
                a, b = item["item_clip"]
                writer.writerow(
                    [
                        index,
                        item["question"],
                        *(options[i] if i < len(options) else "" for i in range(len(letters))),
                        letters[item["answer_index"]],
                        _video_key(item),
                        item["item_media"][0] if item["item_media"] else "",
                        repr([f"{letters[i]}. {o}" for i, o in enumerate(options)]),
                        item["qa_type"],
                        item["condition"],
                        a,
                        b,
                        repr(medias),
                        item["id"],
                        item["provenance"],
                    ]
                )
                index += 1
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    shipped = out.with_name("vlmevalkit_dataset.py")
    shipped.write_bytes((FILES / "vlmevalkit_dataset.py").read_bytes())
    result.items = index
    result.files += [out, shipped]


register(
    Format(
        "vlmevalkit",
        lambda rows, out, result, *, project, filters, **_: write_vlmevalkit(
            rows, out, result, max_options=max_options(project, filters)
        ),
        label="VLMEvalKit",
        suffix="tsv",
        position=30,
    )
)
