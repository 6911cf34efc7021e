"""The lmms-eval task export (issue 18), loaded the way lmms-eval 0.7.3 loads a task: its own
``load_yaml_config`` (which resolves ``!function utils.*`` and relative ``data_files`` against the
YAML's folder) and ``datasets.load_dataset(path, **dataset_kwargs)`` as ``ConfigurableTask.download``
calls it, from a folder moved after the export; answers scored by the shipped ``utils.py`` with
lmms-eval's own multiple-choice parser.

lmms-eval is installed apart from the venv with ``pip --no-deps --target .local/lmms-eval``
(``make lmms-eval``, a prerequisite of ``make test``). Its ``lmms_eval/utils.py`` and task machinery
import torch, transformers and accelerate at the top, which this CPU machine does not install, so the
loader functions are compiled from that installed file's own source (``ast``: ``load_yaml_config``,
``import_function``, ``_resolve_local_data_files`` and the helpers they call), unchanged."""

import io
import json
import os
import shutil
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import REPO
from tests.qa.test_exports import _export, catalogue, clip_file  # noqa: F401  (fixtures)

LMMS_EVAL = REPO / ".local" / "lmms-eval"

LOAD_TASK = r"""
import ast, importlib, json, os, sys, yaml, datasets
root = os.environ["LMMS_EVAL_ROOT"]
source_path = os.path.join(root, "lmms_eval", "utils.py")
tree = ast.parse(open(source_path).read())
wanted = {"ignore_constructor", "import_function", "_LOCAL_BUILDERS", "_looks_like_url", "_resolve_local_data_files",
          "_maybe_resolve_yaml_local_data_files", "load_yaml_config"}
body = [n for n in tree.body if (isinstance(n, ast.FunctionDef) and n.name in wanted)
        or (isinstance(n, ast.Assign) and {getattr(t, "id", None) for t in n.targets} & wanted)]
assert len(body) == len(wanted), [getattr(n, "name", None) for n in body]
ns = {"os": os, "yaml": yaml, "importlib": importlib}
exec(compile(ast.Module(body=body, type_ignores=[]), source_path, "exec"), ns)

yaml_path, cache, answers = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
config = ns["load_yaml_config"](yaml_path=yaml_path)
kwargs = dict(config["dataset_kwargs"])
ds = datasets.load_dataset(path=config["dataset_path"], name=None, cache_dir=cache,
                           download_mode=datasets.DownloadMode.REUSE_DATASET_IF_EXISTS, **kwargs)[config["test_split"]]
docs = ds.to_list()
out = {"version": datasets.__version__, "data_files": kwargs["data_files"], "task": config["task"],
       "metric_list": config["metric_list"], "docs": docs,
       "visual": [config["doc_to_visual"](d) for d in docs], "text": [config["doc_to_text"](d) for d in docs],
       "scores": {}}
for i, doc in enumerate(docs):
    for answer in answers:
        out["scores"][f"{i}:{answer}"] = config["process_results"](doc, [answer])
print(json.dumps(out))
"""


def _load_task(yaml_path, cache, answers):
    if not (LMMS_EVAL / ".installed").is_file():
        pytest.fail(f"{LMMS_EVAL} is missing: run `make lmms-eval` (make test does)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    env.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", LMMS_EVAL_ROOT=str(LMMS_EVAL), PYTHONPATH=str(LMMS_EVAL))
    done = subprocess.run(
        [sys.executable, "-c", LOAD_TASK, str(yaml_path), str(cache), json.dumps(answers)],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert "torch" not in done.stderr
    return got


ANSWERS = ["B", "I think it is A", "The answer is (B).", "Someone cooks.", ""]


def test_the_task_loads_from_a_moved_folder_and_scores_as_lmms_eval_parses(catalogue, project, tmp_path):
    first = tmp_path / "first" / "task"
    _export(project, first, "--format", "lmms-eval", "--task", "egonight_qa", "--with-media", first / "media")
    config_text = (first / "egonight_qa.yaml").read_text()
    assert str(tmp_path) not in config_text  # no absolute path anywhere in the task
    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    shutil.move(first, moved)
    assert not first.exists()

    got = _load_task(moved / "egonight_qa.yaml", tmp_path / "cache", ANSWERS)
    assert got["task"] == "egonight_qa" and got["data_files"] == {"test": str(moved / "egonight_qa.jsonl")}
    docs = got["docs"]
    pairs = catalogue["pairs"]
    assert [(d["qa_id"], d["condition"]) for d in docs] == [
        (pairs["open"].pk, "day"),
        (pairs["mc"].pk, "day"),
        (pairs["paired_mc"].pk, "day"),
        (pairs["paired_mc"].pk, "night"),
        (pairs["paired_open"].pk, "day"),
        (pairs["paired_open"].pk, "night"),
        (pairs["video_option"].pk, ""),
        (pairs["interval"].pk, ""),
    ]
    # Every clip is found under the moved folder.
    for paths in got["visual"]:
        assert paths and all(p.startswith(str(moved) + "/media/") and os.path.isfile(p) for p in paths)
    assert len(got["visual"][6]) == 3  # the three labelled videos of the video-option item
    assert got["text"][1].startswith("Which object appears?\nA. pan\nB. cup\nC. lamp\nAnswer with the option's letter")

    scores = got["scores"]
    mc, paired_day, paired_night, open_item = "1", "2", "3", "0"
    # lmms-eval's parser reads the letter in a sentence (the old regex scored "I think it is A" 0).
    assert scores[f"{paired_day}:I think it is A"]["accuracy"] == 1.0
    assert scores[f"{mc}:I think it is A"]["accuracy"] == 0.0
    assert scores[f"{mc}:The answer is (B)."]["accuracy"] == 1.0 and scores[f"{mc}:B"]["accuracy"] == 1.0
    assert scores[f"{mc}:"]["accuracy"] == 0.0
    assert scores[f"{open_item}:Someone cooks."]["accuracy"] == 1.0 and scores[f"{open_item}:B"]["accuracy"] == 0.0
    # Per QA type and condition, not only overall.
    assert scores[f"{paired_night}:I think it is A"] == {
        "accuracy": 1.0,
        "accuracy:type=spatial_reasoning": 1.0,
        "accuracy:condition=night": 1.0,
        "accuracy:type=spatial_reasoning:condition=night": 1.0,
    }
    assert set(scores["6:B"]) == {"accuracy", "accuracy:type=view_matching"}  # no condition: no condition metrics
    reported = set().union(*(set(v) for v in scores.values()))
    listed = [m["metric"] for m in got["metric_list"]]
    assert set(listed) == reported and listed[0] == "accuracy"
    assert all(m["aggregation"] == "mean" and m["higher_is_better"] is True for m in got["metric_list"])
    assert "accuracy:type=spatial_reasoning:condition=day" in listed and "accuracy:condition=night" in listed


def test_an_lmms_eval_task_without_media_is_refused_and_nothing_is_written(catalogue, project, tmp_path):
    with pytest.raises(CommandError, match="the lmms-eval format needs the clips: give --with-media DIR"):
        call_command(
            "export_qa",
            "--project",
            project.slug,
            "--out",
            str(tmp_path / "task"),
            "--format",
            "lmms-eval",
            stderr=io.StringIO(),
        )
    assert list(tmp_path.iterdir()) == []


def test_the_shipped_utils_is_the_package_file(catalogue, project, tmp_path):
    from annotator.qa import exports

    folder = _export(project, tmp_path / "task", "--format", "lmms-eval", "--with-media", tmp_path / "task" / "m")
    assert (folder / "utils.py").read_bytes() == (exports.FILES / "lmms_eval_utils.py").read_bytes()
