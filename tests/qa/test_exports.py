"""Exports that load anywhere (issue 11): one row shape for open, multiple-choice, interval,
video-option and paired items, loaded by the real libraries (pyarrow, pandas, Hugging Face datasets
current and 2.16, VLMEvalKit's TSV reading, lmms-eval's task YAML), and clips cut by ffmpeg."""

import ast
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.qa import exports
from annotator.qa.models import QAPair, QAType, Revision, WorkUnit
from annotator.qa.selectors import pseudonym
from tests.conftest import REPO, make_video

DATASETS216 = REPO / ".local" / "datasets216"


def _video(project, name, clip_file, **fields):
    data = clip_file.read_bytes() + name.encode()  # a distinct sha256 per video (content + name)
    stored = default_storage.save(f"originals/{name}", ContentFile(clip_file.read_bytes()))
    return Video.objects.create(
        project=project,
        sha256=hashlib.sha256(data).hexdigest(),
        filename=name,
        original=stored,
        status="ready",
        duration_s=4.0,
        fps=25.0,
        width=160,
        height=120,
        **fields,
    )


def _qa_type(project, slug, **fields):
    return QAType.objects.create(project=project, slug=slug, name=slug.replace("_", " "), **fields)


def _pair(unit, qa_type, annotator, question, answer, *, start=0.0, end=2.0, **fields):
    pair = QAPair.objects.create(
        project=unit.project,
        unit=unit,
        video=unit.video,
        qa_type=qa_type,
        origin="human",
        question=question,
        answer=answer,
        clip_start_s=start,
        clip_end_s=end,
        status="verified",
        provenance="human_added",
        verified_at=timezone.now(),
        **fields,
    )
    Revision.objects.create(qa_pair=pair, actor_user=annotator, action="add", after=pair.snapshot())
    return pair


@pytest.fixture
def clip_file(tmp_path_factory):
    return make_video(tmp_path_factory.mktemp("src") / "src.mp4", seconds=4.0, size="160x120", audio=False)


@pytest.fixture
def catalogue(project, annotator, clip_file):
    """Every kind of item: open and multiple choice on one video, paired open and multiple choice on a
    day-night pair (night 0.5 s later, with the mixed-type night recipe that broke pyarrow), a
    video-option item on an ego-exo set, and an interval answer on a two-part life log."""
    single = _video(project, "kitchen.mp4", clip_file, illumination="day", domain="kitchen", extra={"camera": "gopro"})
    day = _video(project, "route.mp4", clip_file, illumination="day")
    night = _video(
        project,
        "route-night.mp4",
        clip_file,
        illumination="night",
        source="synthetic",
        extra={"night_recipe": [["eq", {"brightness": -0.3}], "noise", 5]},
    )
    ego = _video(project, "ego.mp4", clip_file, view="ego")
    exo = _video(project, "exo.mp4", clip_file, view="exo")
    part0, part1 = _video(project, "log-0900.mp4", clip_file), _video(project, "log-0930.mp4", clip_file)

    pair_group = VideoGroup.objects.create(project=project, kind="day_night", name="route")
    VideoGroupMember.objects.create(group=pair_group, video=day, role="day")
    VideoGroupMember.objects.create(group=pair_group, video=night, role="night", offset_s=0.5)
    set_group = VideoGroup.objects.create(project=project, kind="ego_exo", name="set")
    VideoGroupMember.objects.create(group=set_group, video=ego, role="ego")
    VideoGroupMember.objects.create(group=set_group, video=exo, role="exo", position=1, offset_s=0.25)
    log = VideoGroup.objects.create(
        project=project, kind="life_log", name="day 1", params={"start": "2026-01-01T09:00:00"}
    )
    VideoGroupMember.objects.create(group=log, video=part0, role="part", position=0, offset_s=0.0)
    VideoGroupMember.objects.create(group=log, video=part1, role="part", position=1, offset_s=1800.0)

    def unit(video, group=None, end=4.0):
        return WorkUnit.objects.create(project=project, video=video, group=group, start_s=0.0, end_s=end)

    open_t = _qa_type(project, "scene_description")
    mc_t = _qa_type(project, "object_recognition")
    paired_t = _qa_type(project, "spatial_reasoning", paired=True)
    match_t = _qa_type(project, "view_matching", set_kind="ego_exo")
    loc_t = _qa_type(project, "temporal_localisation", set_kind="life_log", answer_kind="interval")
    u_single, u_pair, u_set, u_log = unit(single), unit(day, pair_group), unit(ego, set_group), unit(part0, log, 1804.0)
    pairs = {
        "open": _pair(u_single, open_t, annotator, "What happens?", "Someone cooks.", start=1.0, end=3.0),
        "mc": _pair(
            u_single, mc_t, annotator, "Which object appears?", "cup", options=["pan", "cup", "lamp"], answer_index=1
        ),
        "paired_mc": _pair(
            u_pair,
            paired_t,
            annotator,
            "What is left of the door?",
            "a chair",
            options=["a chair", "a bin"],
            answer_index=0,
        ),
        "paired_open": _pair(u_pair, paired_t, annotator, "How many steps are there?", "3"),
        "video_option": _pair(
            u_set,
            match_t,
            annotator,
            "Which video shows the same moment as Video 1?",
            "Video 2",
            options=["Video 2", "Video 3"],
            answer_index=0,
            videos=[
                {"label": "Video 1", "video_id": ego.pk, "role": "query", "start_s": 0.0, "end_s": 2.0},
                {"label": "Video 2", "video_id": exo.pk, "role": "candidate", "start_s": 0.25, "end_s": 2.25},
                {"label": "Video 3", "video_id": single.pk, "role": "candidate", "start_s": 1.0, "end_s": 3.0},
            ],
        ),
        "interval": _pair(
            u_log,
            loc_t,
            annotator,
            "When did I open the fridge?",
            "",
            start=0.0,
            end=1803.0,
            answer_start_s=1801.0,
            answer_end_s=1802.5,
        ),
    }
    return {"pairs": pairs, "videos": {v.filename: v for v in (single, day, night, ego, exo, part0, part1)}}


def _export(project, out, *args):
    call_command("export_qa", "--project", project.slug, "--out", str(out), *args, stderr=io.StringIO())
    return out


def _rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _shape(value):
    """The type skeleton of a JSON value: lists by their item shape (None when empty)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        shapes = [_shape(v) for v in value]
        assert all(s == shapes[0] for s in shapes), f"a list of mixed items: {value}"
        return [shapes[0]] if shapes else []
    return type(value).__name__


def _merge(a, b):
    """Two skeletons of the same keys, an empty list taking the other's item shape."""
    if isinstance(a, dict):
        assert set(a) == set(b), f"keys differ: {set(a) ^ set(b)}"
        return {k: _merge(a[k], b[k]) for k in a}
    if isinstance(a, list):
        assert isinstance(b, list), f"a list against {b}"
        return [_merge(a[0], b[0])] if a and b else (a or b)
    assert a == b, f"{a} against {b}"
    return a


def test_every_row_has_every_key_with_one_type_and_no_nulls(catalogue, project, tmp_path, annotator):
    rows = _rows(_export(project, tmp_path / "qa.jsonl"))
    assert [r["id"] for r in rows] == sorted(p.pk for p in catalogue["pairs"].values())
    shape = _shape(rows[0])
    for row in rows[1:]:
        shape = _merge(shape, _shape(row))
    assert "NoneType" not in json.dumps(shape)
    assert list(rows[0]) == exports.row_schema().names

    by = {r["id"]: r for r in rows}
    p = {k: by[v.pk] for k, v in catalogue["pairs"].items()}
    assert (p["open"]["options"], p["open"]["answer_index"], p["open"]["answer_start_s"]) == ([], -1, -1.0)
    assert (p["mc"]["options"], p["mc"]["answer_index"]) == (["pan", "cup", "lamp"], 1)
    assert (p["interval"]["answer_kind"], p["interval"]["answer_start_s"], p["interval"]["answer_end_s"]) == (
        "interval",
        1801.0,
        1802.5,
    )
    assert p["open"]["draft"] == {"question": "", "answer": "", "pipeline": "", "model": ""}
    assert p["open"]["group"] == {"kind": "", "name": "", "params": "{}", "members": []}
    assert p["open"]["annotators"] == [pseudonym(annotator.pk)] and p["open"]["verifications"] == 1
    assert json.loads(p["open"]["video"]["metadata"]) == {
        "camera": "gopro",
        "difficulty": None,
        "domain": "kitchen",
        "scenario": None,
        "view": None,
    }
    night = p["paired_mc"]["group"]["members"][1]
    assert (p["paired_mc"]["paired"], p["paired_mc"]["group"]["kind"]) == (True, "day_night")
    assert (night["role"], night["offset_s"], night["filename"]) == ("night", 0.5, "route-night.mp4")
    assert [(m["role"], m["position"]) for m in p["video_option"]["group"]["members"]] == [("ego", 0), ("exo", 1)]
    assert [(v["label"], v["filename"]) for v in p["video_option"]["videos"]] == [
        ("Video 1", "ego.mp4"),
        ("Video 2", "exo.mp4"),
        ("Video 3", "kitchen.mp4"),
    ]
    assert json.loads(p["interval"]["group"]["params"]) == {"start": "2026-01-01T09:00:00"}
    assert p["interval"]["set_kind"] == "life_log" and p["video_option"]["set_kind"] == "ego_exo"
    assert all(r["media_path"] == "" for r in rows)  # no --with-media
    assert p["mc"]["video"]["storage_path"] == catalogue["videos"]["kitchen.mp4"].original.name


def test_pyarrow_infers_the_declared_schema_and_pandas_reads_answer_index_as_integers(catalogue, project, tmp_path):
    import pandas as pd
    import pyarrow.json as paj

    path = _export(project, tmp_path / "qa.jsonl")
    table = paj.read_json(path)
    assert table.schema.equals(exports.row_schema()), table.schema
    frame = pd.read_json(path, lines=True)
    assert str(frame["answer_index"].dtype) == "int64"
    assert sorted(frame["answer_index"]) == [-1, -1, -1, 0, 0, 1]


def _split_exports(project, folder, fmt="jsonl"):
    """Two exports of different QA types into one folder: open-ended items only (read first: its empty
    lists are what type inference cannot type), and multiple choice only."""
    ext = "parquet" if fmt == "parquet" else "jsonl"
    _export(project, folder / f"1-open.{ext}", "--format", fmt, "--qa-type", "scene_description")
    _export(project, folder / f"2-mc.{ext}", "--format", fmt, "--qa-type", "object_recognition")
    return folder  # Parquet: FOLDER/data/<name>.parquet and FOLDER/README.md (the Hub layout)


LOAD_TOGETHER = r"""
import json, sys, datasets, pyarrow as pa, pyarrow.json as paj, pyarrow.parquet as pq
folder, out = sys.argv[1], {}
ds = datasets.load_dataset(folder, split="test", cache_dir=folder + "/.cache")
out["folder"] = sorted((r["qa_type"], r["answer_index"], r["options"]) for r in ds)
out["features"] = str(ds.features["options"])
# Each file alone, then together with concatenate_datasets (the order that needs no null-typed column).
alone = [datasets.load_dataset("json", data_files=folder + f"/{n}.jsonl", split="train", features=ds.features,
                               cache_dir=folder + "/.cache") for n in ("1-open", "2-mc")]
out["concatenated"] = len(datasets.concatenate_datasets(alone))
tables = [paj.read_json(folder + f"/{n}.jsonl") for n in ("2-mc", "1-open")]
out["pyarrow"] = pa.concat_tables([t.cast(tables[0].schema) for t in tables]).num_rows
out["version"] = datasets.__version__
print(json.dumps(out))
"""


def _run_loader(script, *args, legacy=False):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    env["HF_DATASETS_OFFLINE"] = "1"
    env["HF_HUB_OFFLINE"] = "1"
    if legacy:
        if not (DATASETS216 / ".installed").is_file():
            pytest.fail(f"{DATASETS216} is missing: run `make datasets216` (make test does)")
        env["PYTHONPATH"] = str(DATASETS216)
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("legacy", [False, True], ids=["datasets-current", "datasets-2.16"])
def test_two_exports_of_different_qa_types_load_together_in_datasets(catalogue, project, tmp_path, legacy):
    folder = _split_exports(project, tmp_path / "exports")
    got = _run_loader(LOAD_TOGETHER, folder, legacy=legacy)
    assert got["version"].startswith("2.16" if legacy else "5.")
    assert got["folder"] == [["object_recognition", 1, ["pan", "cup", "lamp"]], ["scene_description", -1, []]]
    assert "string" in got["features"]
    assert (got["concatenated"], got["pyarrow"]) == (2, 2)


LOAD_PARQUET = r"""
import json, sys, datasets, pyarrow.parquet as pq
folder = sys.argv[1]
out = {"version": datasets.__version__}
for order in (["1-open", "2-mc"], ["2-mc", "1-open"]):
    ds = datasets.load_dataset("parquet", data_files=[f"{folder}/data/{n}.parquet" for n in order], split="train",
                               cache_dir=folder + "/.cache")
    out[order[0]] = [(r["qa_type"], r["answer_index"], r["options"]) for r in ds]
card = datasets.load_dataset(folder, split="test", cache_dir=folder + "/.cache")
out["card"] = len(card)
out["schema"] = str(pq.read_schema(f"{folder}/data/1-open.parquet").field("options").type)
print(json.dumps(out))
"""


@pytest.mark.parametrize("legacy", [False, True], ids=["datasets-current", "datasets-2.16"])
def test_parquet_has_the_explicit_schema_and_a_dataset_card(catalogue, project, tmp_path, legacy):
    import pyarrow.parquet as pq

    folder = _split_exports(project, tmp_path / "exports", fmt="parquet")
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "README.md",
        "data/1-open.parquet",
        "data/2-mc.parquet",
    ]
    assert pq.read_schema(folder / "data" / "1-open.parquet").remove_metadata().equals(exports.row_schema())
    card = (folder / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    name = "qa-" + exports.data_fingerprint(folder, "data/*.parquet")
    assert header["configs"] == [{"config_name": name, "data_files": [{"split": "test", "path": "data/*.parquet"}]}]
    assert header["dataset_info"]["config_name"] == name
    assert [f["name"] for f in header["dataset_info"]["features"]] == exports.row_schema().names
    got = _run_loader(LOAD_PARQUET, folder, legacy=legacy)
    assert got["1-open"] == [["scene_description", -1, []], ["object_recognition", 1, ["pan", "cup", "lamp"]]]
    assert got["2-mc"] == got["1-open"][::-1] and got["card"] == 2
    assert got["schema"] == "list<element: string>" or got["schema"] == "list<item: string>"


def test_a_readme_that_is_not_an_export_card_is_left_alone(catalogue, project, tmp_path):
    (tmp_path / "README.md").write_text("my notes\n")
    _export(project, tmp_path / "qa.jsonl")
    assert (tmp_path / "README.md").read_text() == "my notes\n"


def test_vlmevalkit_tsv_reads_as_vlmevalkit_reads_it_with_paired_items_asked_of_day_and_night(
    catalogue, project, tmp_path
):
    import pandas as pd

    path = _export(project, tmp_path / "qa.tsv", "--format", "vlmevalkit")
    data = pd.read_csv(path, sep="\t")  # vlmeval.smp.load of a .tsv
    assert list(data.columns) == [
        "index",
        "question",
        "A",
        "B",
        "C",
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
    assert list(data["index"]) == [0, 1, 2, 3]
    pairs = catalogue["pairs"]
    assert list(data["qa_id"]) == [
        pairs["mc"].pk,
        pairs["paired_mc"].pk,
        pairs["paired_mc"].pk,
        pairs["video_option"].pk,
    ]
    assert list(data["answer"]) == ["B", "A", "A", "A"]
    assert list(data["condition"]) == ["day", "day", "night", ""] or list(data["condition"].fillna("")) == [
        "day",
        "day",
        "night",
        "",
    ]
    day, night = data.iloc[1], data.iloc[2]
    assert (day["clip_start_s"], day["clip_end_s"], night["clip_start_s"], night["clip_end_s"]) == (0.0, 2.0, 0.5, 2.5)
    assert day["video"].startswith(catalogue["videos"]["route.mp4"].sha256[:16])
    assert night["video"].startswith(catalogue["videos"]["route-night.mp4"].sha256[:16])
    assert ast.literal_eval(data.iloc[0]["candidates"]) == ["A. pan", "B. cup", "C. lamp"]  # as Video-MME's TSV
    assert data.iloc[0][["A", "B", "C"]].tolist() == ["pan", "cup", "lamp"]
    medias = ast.literal_eval(data.iloc[3]["medias"])
    assert [(m["type"], m["video_start"], m["video_end"]) for m in medias] == [
        ("video", 0.0, 2.0),
        ("video", 0.25, 2.25),
        ("video", 1.0, 3.0),
    ]


def _probe_duration(path):
    done = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(done.stdout)["format"]["duration"])


def test_with_media_cuts_each_clip_once_and_rows_point_at_it(catalogue, project, tmp_path):
    out = tmp_path / "export" / "qa.jsonl"
    _export(project, out, "--with-media", tmp_path / "export" / "clips")
    rows = {r["id"]: r for r in _rows(out)}
    pairs, videos = catalogue["pairs"], catalogue["videos"]
    mc = rows[pairs["mc"].pk]
    assert mc["media_path"] == f"clips/{videos['kitchen.mp4'].sha256[:16]}_0-2000.mp4"
    night = rows[pairs["paired_mc"].pk]["group"]["members"][1]
    assert night["media_path"] == f"clips/{videos['route-night.mp4'].sha256[:16]}_500-2500.mp4"
    labelled = rows[pairs["video_option"].pk]["videos"]
    assert [Path(v["media_path"]).name for v in labelled] == [
        f"{videos['ego.mp4'].sha256[:16]}_0-2000.mp4",
        f"{videos['exo.mp4'].sha256[:16]}_250-2250.mp4",
        f"{videos['kitchen.mp4'].sha256[:16]}_1000-3000.mp4",
    ]
    paths = (
        {r["media_path"] for r in rows.values()}
        | {m["media_path"] for r in rows.values() for m in r["group"]["members"]}
        | {v["media_path"] for r in rows.values() for v in r["videos"]}
    )
    paths.discard("")
    clips = sorted((tmp_path / "export" / "clips").iterdir())
    assert sorted(p.name for p in clips) == sorted(Path(p).name for p in paths)  # each cut once, nothing else left
    for path in paths:  # playable, and as long as the range in its name
        start_ms, end_ms = Path(path).stem.split("_")[1].split("-")
        assert _probe_duration(out.parent / path) == pytest.approx((int(end_ms) - int(start_ms)) / 1000, abs=0.1)

    before = {p.name: p.stat().st_mtime_ns for p in clips}
    err = io.StringIO()
    call_command(
        "export_qa",
        "--project",
        project.slug,
        "--out",
        str(out),
        "--with-media",
        str(tmp_path / "export" / "clips"),
        stderr=err,
    )
    assert f"clips: 0 cut, {len(clips)} reused, 0 failed" in err.getvalue()
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "export" / "clips").iterdir()} == before


def test_a_clip_that_cannot_be_cut_fails_alone_and_the_export_says_so(catalogue, project, tmp_path):
    broken = catalogue["videos"]["ego.mp4"]
    default_storage.delete(broken.original.name)
    out = tmp_path / "qa.jsonl"
    with pytest.raises(CommandError, match="1 clips could not be cut; the export is written"):
        call_command(
            "export_qa",
            "--project",
            project.slug,
            "--out",
            str(out),
            "--with-media",
            str(tmp_path / "m"),
            stderr=io.StringIO(),
        )
    rows = {r["id"]: r for r in _rows(out)}
    item = rows[catalogue["pairs"]["video_option"].pk]
    assert item["media_path"] == "" and item["videos"][0]["media_path"] == ""
    assert item["videos"][1]["media_path"].startswith("m/")  # the other clips of the same item are there
    assert rows[catalogue["pairs"]["mc"].pk]["media_path"].startswith("m/")
    assert (out.parent / rows[catalogue["pairs"]["mc"].pk]["media_path"]).is_file()


def test_a_bad_format_is_a_clear_error_and_writes_nothing(catalogue, project, tmp_path):
    with pytest.raises(
        CommandError, match="unknown --format 'csv': choose one of jsonl, parquet, vlmevalkit, lmms-eval"
    ):
        call_command("export_qa", "--project", project.slug, "--out", str(tmp_path / "qa.csv"), "--format", "csv")
    with pytest.raises(CommandError, match="the parquet format is written to a file or folder: give --out PATH"):
        call_command("export_qa", "--project", project.slug, "--out", "-", "--format", "parquet")
    with pytest.raises(CommandError, match="--task must be 1 to 64 letters, digits, - or _"):
        call_command(
            "export_qa",
            "--project",
            project.slug,
            "--out",
            str(tmp_path / "t"),
            "--format",
            "lmms-eval",
            "--task",
            "../escape",
        )
    assert list(tmp_path.iterdir()) == []


def test_the_api_export_streams_the_same_rows(catalogue, project, tmp_path):
    from tests.api.test_api import _client_for

    client, _ = _client_for("export-admin", "admin", project)
    res = client.get(f"/api/projects/{project.slug}/export/?qa_type=view_matching")
    assert res.status_code == 200
    lines = b"".join(res.streaming_content).decode().splitlines()
    file_rows = [r for r in _rows(_export(project, tmp_path / "qa.jsonl")) if r["qa_type"] == "view_matching"]
    assert [json.loads(line) for line in lines] == file_rows


@pytest.fixture(autouse=True)
def _no_cache_left(tmp_path):
    yield
    shutil.rmtree(tmp_path / "exports" / ".cache", ignore_errors=True)


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_pages_are_read_ahead_with_the_same_rows(catalogue, project):
    from django.db import transaction

    ahead = list(exports.iter_rows(project, chunk_rows=2))  # autocommit: a reader thread fetches pages
    with transaction.atomic():
        in_turn = list(exports.iter_rows(project, chunk_rows=2))  # the caller's snapshot, page by page
    assert [r["id"] for r in ahead] == sorted(p.pk for p in catalogue["pairs"].values())
    assert ahead == in_turn
