"""The ``lmms-eval`` format: a task folder (YAML, JSONL, utils.py), only with media."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import orjson

from annotator.qa.exports.base import FILES, ExportResult, Format, _atomic, _dumps, register
from annotator.qa.exports.items import LETTERS, _video_key, eval_items
from annotator.qa.exports.schema import NO_INT

NO_MEDIA_LMMS = (
    "the lmms-eval format needs the clips: give --with-media DIR (its items are videos; a task "
    "without them fails at its first item)"
)


def _quoted(text: str) -> str:
    """A YAML scalar that stays a string (JSON is YAML): a task named yes or 123 stays a string."""
    return orjson.dumps(text).decode()


def write_lmms_eval(rows: Iterable[dict], folder: Path, result: ExportResult, *, task: str) -> None:
    """An lmms-eval task folder: ``<task>.jsonl`` (one evaluation item a line: ``qa_id``,
    ``qa_type``, ``condition``, ``question``, ``options``, ``answer`` (the letter for multiple
    choice, else the text), ``answer_text``, ``answer_index``, ``answer_start_s``/``answer_end_s``,
    ``clip_start_s``/``clip_end_s``, ``video`` (sha256 name), ``media`` (clip paths relative to the
    folder), ``video_labels``), ``utils.py`` (``export_files/lmms_eval_utils.py``: doc_to_visual,
    doc_to_text, process_results) and ``<task>.yaml``: ``dataset_path: json`` with
    ``dataset_kwargs.data_files`` naming the JSONL relative to the YAML (lmms-eval 0.7.3's
    ``load_yaml_config`` resolves it against the YAML's folder, so the folder can be moved), and one
    mean metric per name its items report (``lmms_eval_utils.metric_names``: overall, per QA type,
    per condition, per both)."""
    from annotator.qa.export_files.lmms_eval_utils import metric_names

    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{task}.jsonl"
    tmp = _atomic(data)
    metrics: dict[str, None] = {}  # ordered set of the metric names the items report

    def items():
        for item in eval_items(rows, result):
            options = item["options"]
            mc = bool(options) and 0 <= item["answer_index"] < len(options) <= len(LETTERS)
            a, b = item["item_clip"]
            media = item["item_media"]
            if item["videos"]:
                media = [v["media_path"] for v in item["videos"] if v["media_path"]]
            metrics.update(dict.fromkeys(metric_names(item["qa_type"], item["condition"])))
            yield {
                "qa_id": item["id"],
                "qa_type": item["qa_type"],
                "condition": item["condition"],
                "question": item["question"],
                "options": options if mc else [],
                "answer": LETTERS[item["answer_index"]] if mc else item["answer"],
                "answer_text": item["answer"],
                "answer_index": item["answer_index"] if mc else NO_INT,
                "answer_start_s": item["answer_start_s"],
                "answer_end_s": item["answer_end_s"],
                "clip_start_s": a,
                "clip_end_s": b,
                "video": _video_key(item),
                "media": media,
                "video_labels": [v["label"] for v in item["videos"]],
            }

    n = 0
    try:
        with open(tmp, "wb") as f:
            for item in items():
                f.write(_dumps(item))
                n += 1
        os.replace(tmp, data)
    finally:
        tmp.unlink(missing_ok=True)
    (folder / "utils.py").write_bytes((FILES / "lmms_eval_utils.py").read_bytes())
    names = sorted(metrics, key=lambda m: (m != "accuracy", m)) or ["accuracy"]
    config = (
        f"# lmms-eval task written by the annotator's export_qa (README: Export formats).\n"
        f"task: {_quoted(task)}\n"
        f"dataset_path: json\n"
        f"dataset_kwargs:\n"
        f"  data_files:\n"
        f"    test: {_quoted(data.name)}\n"  # relative to this YAML (lmms-eval resolves it against its folder)
        f"test_split: test\n"
        f"output_type: generate_until\n"
        f"doc_to_visual: !function utils.doc_to_visual\n"
        f"doc_to_text: !function utils.doc_to_text\n"
        f"doc_to_target: answer\n"
        f"generation_kwargs:\n"
        f"  max_new_tokens: 128\n"
        f"  temperature: 0\n"
        f"  do_sample: false\n"
        f"process_results: !function utils.process_results\n"
        f"metric_list:\n"
        + "".join(f"  - metric: {_quoted(m)}\n    aggregation: mean\n    higher_is_better: true\n" for m in names)
        + "metadata:\n"
        "  version: 2\n"
    )
    (folder / f"{task}.yaml").write_text(config)
    result.items = n
    result.files += [folder / f"{task}.yaml", data, folder / "utils.py"]


register(
    Format(
        "lmms-eval",
        lambda rows, out, result, *, project, task, **_: write_lmms_eval(
            rows, out, result, task=task or f"{project.slug}_qa".replace("-", "_")
        ),
        label="lmms-eval",
        position=40,
        folder=True,
        needs_media=NO_MEDIA_LMMS,
    )
)
