"""Exports a researcher loads without edits (issue 18), each loaded the way its consumer loads it:
``datasets.load_dataset(FOLDER)`` (current and 2.16) after a re-export into the same folder, JSONL
files of one QA type each, a pyarrow dataset over a Parquet export, and the VLMEvalKit TSV read by the
dataset class shipped beside it."""

import ast
import json

import pandas as pd
import pytest

from annotator.qa import exports
from tests.qa.test_exports import _export, _run_loader, catalogue, clip_file  # noqa: F401  (fixtures)

LOAD_FOLDER = r"""
import json, sys, datasets
folder = sys.argv[1]
ds = datasets.load_dataset(folder, split="test", cache_dir=sys.argv[2])
print(json.dumps({"version": datasets.__version__, "rows": sorted((r["qa_type"], r["question"]) for r in ds)}))
"""


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize("legacy", [False, True], ids=["datasets-current", "datasets-2.16"])
def test_re_exporting_into_one_folder_loads_the_new_rows(catalogue, project, tmp_path, fmt, legacy):
    folder, cache = tmp_path / "export", tmp_path / "cache"
    out = folder / f"qa.{fmt}"
    _export(project, out, "--format", fmt)
    first = _run_loader(LOAD_FOLDER, folder, cache, legacy=legacy)
    assert len(first["rows"]) == 6

    _export(project, out, "--format", fmt, "--qa-type", "object_recognition")  # the same file, 1 row now
    again = _run_loader(LOAD_FOLDER, folder, cache, legacy=legacy)
    assert again["version"].startswith("2.16" if legacy else "5.")
    assert again["rows"] == [["object_recognition", "Which object appears?"]]
    assert len(list(cache.rglob("*.arrow"))) >= 2  # the old rows are still cached, under the old config's name


LOAD_PER_TYPE = r"""
import json, sys, datasets
open_folder, mc_folder, all_folder, cache = sys.argv[1:5]
a = datasets.load_dataset(open_folder, split="test", cache_dir=cache)
b = datasets.load_dataset(mc_folder, split="test", cache_dir=cache)
both = datasets.concatenate_datasets([a, b])
# One JSON line a chunk: the first chunk holds only the open item (options []), which alone infers a
# list of nulls; the card's features type it.
chunked = datasets.load_dataset(all_folder, split="test", cache_dir=cache, chunksize=64)
print(json.dumps({"same": a.features == b.features, "options": str(a.features["options"]),
                  "both": [(r["qa_type"], r["options"]) for r in both],
                  "chunked": [(r["qa_type"], r["options"]) for r in chunked][:2]}))
"""


@pytest.mark.parametrize("legacy", [False, True], ids=["datasets-current", "datasets-2.16"])
def test_json_exports_of_one_qa_type_each_load_with_the_same_types_and_combine(catalogue, project, tmp_path, legacy):
    _export(project, tmp_path / "open" / "qa.jsonl", "--qa-type", "scene_description")
    _export(project, tmp_path / "mc" / "qa.jsonl", "--qa-type", "object_recognition")
    _export(project, tmp_path / "all" / "qa.jsonl")
    first = json.loads((tmp_path / "all" / "qa.jsonl").read_text().splitlines()[0])
    assert (first["qa_type"], first["options"]) == ("scene_description", [])
    got = _run_loader(
        LOAD_PER_TYPE, tmp_path / "open", tmp_path / "mc", tmp_path / "all", tmp_path / "cache", legacy=legacy
    )
    assert got["same"] is True and "string" in got["options"]
    assert got["both"] == [["scene_description", []], ["object_recognition", ["pan", "cup", "lamp"]]]
    assert got["chunked"] == [["scene_description", []], ["object_recognition", ["pan", "cup", "lamp"]]]


def test_a_pyarrow_dataset_over_the_parquet_data_folder_reads_every_export(catalogue, project, tmp_path):
    import pyarrow.dataset as pads

    folder = tmp_path / "hub"
    _export(project, folder / "open.parquet", "--format", "parquet", "--qa-type", "scene_description")
    _export(project, folder / "data" / "mc.parquet", "--format", "parquet", "--qa-type", "object_recognition")
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "data"]
    dataset = pads.dataset(folder / "data", format="parquet")
    table = dataset.to_table()
    assert table.schema.remove_metadata().equals(exports.row_schema())
    assert sorted(table.column("qa_type").to_pylist()) == ["object_recognition", "scene_description"]
    header = (folder / "README.md").read_text().split("---\n")[1]
    assert "path: data/*.parquet" in header


def _shipped_class(folder):
    """The shipped vlmevalkit_dataset.py, imported from the export folder as a user would."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("vlmevalkit_dataset_under_test", folder / "vlmevalkit_dataset.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_vlmevalkit_export_ships_its_video_dataset_class_which_hands_over_the_clips(catalogue, project, tmp_path):
    folder = tmp_path / "vlm"
    _export(project, folder / "qa.tsv", "--format", "vlmevalkit", "--with-media", folder / "clips")
    assert (folder / "vlmevalkit_dataset.py").read_bytes() == (exports.FILES / "vlmevalkit_dataset.py").read_bytes()
    module = _shipped_class(folder)
    data = module.read_table(folder / "qa.tsv")
    assert ast.literal_eval(data.iloc[0]["candidates"]) == ["A. pan", "B. cup", "C. lamp"]
    assert module.options_of(data.iloc[0]) == {"A": "pan", "B": "cup", "C": "lamp"}

    message = module.build_message(data.iloc[0], str(folder))
    assert [m["type"] for m in message] == ["video", "text"]
    assert (
        message[0]["value"] == str(folder / data.iloc[0]["video_path"])
        and (folder / data.iloc[0]["video_path"]).is_file()
    )
    assert message[1]["value"] == (
        "Which object appears?\nA. pan\nB. cup\nC. lamp\n"
        "Answer with the option's letter from the given choices directly."
    )
    video_option = module.build_message(data.iloc[3], str(folder))
    assert [m["value"] for m in video_option if m["type"] == "text"][:3] == ["Video 1:", "Video 2:", "Video 3:"]
    assert all(
        (folder / "clips" / m["value"].rsplit("/", 1)[1]).is_file() for m in video_option if m["type"] == "video"
    )

    predictions = data.assign(prediction=["B", "A", "C", "A"])  # right, right, wrong, right
    table = module.accuracy_table(predictions, lambda text, choices: text.strip()[:1])
    assert table.to_dict("records") == [
        {"category": "Overall", "condition": "", "n": 4, "accuracy": 0.75},
        {"category": "object_recognition", "condition": "", "n": 1, "accuracy": 1.0},
        {"category": "object_recognition", "condition": "day", "n": 1, "accuracy": 1.0},
        {"category": "spatial_reasoning", "condition": "", "n": 2, "accuracy": 0.5},
        {"category": "spatial_reasoning", "condition": "day", "n": 1, "accuracy": 1.0},
        {"category": "spatial_reasoning", "condition": "night", "n": 1, "accuracy": 0.0},
        {"category": "view_matching", "condition": "", "n": 1, "accuracy": 1.0},
    ]


def test_the_vlmevalkit_class_refuses_an_item_without_a_clip(catalogue, project, tmp_path):
    _export(project, tmp_path / "qa.tsv", "--format", "vlmevalkit")
    module = _shipped_class(tmp_path)
    data = pd.read_csv(tmp_path / "qa.tsv", sep="\t")  # as VLMEvalKit's load reads it: empty cells are NaN
    with pytest.raises(FileNotFoundError, match=r"item 0 \(QA \d+\) has no clip: export with --with-media DIR"):
        module.build_message(data.iloc[0], str(tmp_path))


def test_a_format_is_a_module_that_registers_itself(catalogue, project, tmp_path, monkeypatch):
    assert exports.FORMATS == ("jsonl", "parquet", "vlmevalkit", "lmms-eval")
    written = []

    def write(rows, out, result, **context):
        written.extend((out, row["id"]) for row in rows)

    monkeypatch.setitem(exports.REGISTRY, "ids", exports.Format("ids", write))
    exports.export(project, "ids", tmp_path / "ids.txt", filters=exports.Filters(qa_type="object_recognition"))
    assert written == [(tmp_path / "ids.txt", catalogue["pairs"]["mc"].pk)]
    with pytest.raises(ValueError, match="unknown export format 'csv'"):
        exports.export(project, "csv", tmp_path / "x.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
