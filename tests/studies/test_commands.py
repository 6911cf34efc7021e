"""The study commands as researchers script them: ``study_create`` (and its alias ``ordering_create``)
builds studies of every kind from real (ffmpeg-made) videos and verified QA pairs, ``study_items``
exports the items with their truth, ``study_import_predictions`` imports model predictions (bad
lines skipped by number) that a Celery worker scores, and ``study_scores`` prints the table."""

import json
from io import BytesIO, StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from PIL import Image

from annotator.studies.models import Condition, Element, Item, Prediction, Study
from tests.conftest import make_video


def _cmd(*args):
    out, err = StringIO(), StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def built(worker, tmp_path):
    """Two videos: 40 s (5 short, 2 medium, 1 long clip) and 12 s (1 short clip only)."""
    long_video = make_video(tmp_path / "walk.mp4", seconds=40.0, audio=False)
    short_video = make_video(tmp_path / "tap.mp4", seconds=12.0, audio=False)
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {
                    "file": "walk.mp4",
                    "annotations": {
                        "description": "Someone walks down a corridor.",
                        "actions": [{"label": "opens a door", "start_s": 16.0, "end_s": 20.0}],
                    },
                },
                {"file": "tap.mp4", "annotations": {"description": "A tap drips."}},
            ]
        )
        + "\n"
    )
    call_command(
        "ingest",
        str(long_video),
        str(short_video),
        "--project",
        "ord",
        "--manifest",
        str(manifest),
        "--wait",
        stdout=StringIO(),
    )
    code, out, _ = _cmd(
        "ordering_create", "--project", "ord", "--preset", "ego-flight", "--name", "pilot", "--practice-items", "1"
    )
    assert code == 0, out
    return out


def test_the_preset_builds_nine_conditions_with_items_and_counts_what_it_skipped(built):
    # The practice clip (medium, 15-30 s of the 40 s video) takes out every trial clip over those seconds,
    # the long clip 0-30 s and the short clips 8-16 s, 16-24 s and 24-32 s: practice feedback shows the
    # true order of those seconds.
    assert "9 conditions, 10 items, 1 practice items" in built
    assert "condition 5 (long clips): 0 items, 1 videos too short" in built
    conds = {c.number: c for c in Condition.objects.all()}
    assert [
        tuple(c.variables[k] for k in ("n_frames", "clip_length", "annotation", "hints")) + (c.baseline,)
        for c in conds.values()
    ] == [
        (2, "medium", "brief", [], False),
        (4, "medium", "brief", [], True),
        (8, "medium", "brief", [], False),
        (4, "short", "brief", [], False),
        (4, "long", "brief", [], False),
        (4, "medium", "none", [], False),
        (4, "medium", "comprehensive", [], False),
        (4, "medium", "brief", [1, 3], False),
        (4, "medium", "brief", [2, 4], False),
    ]
    counts = {n: Item.objects.filter(condition__number=n, role="scored").count() for n in conds}
    assert counts == {1: 1, 2: 1, 3: 1, 4: 3, 5: 0, 6: 1, 7: 1, 8: 1, 9: 1}
    practice = Item.objects.get(role="practice")
    clip = practice.payload["clip"]
    assert practice.condition.baseline and (clip["start_s"], clip["end_s"]) == (15.0, 30.0)
    trial_clips = [i.payload["clip"] for i in Item.objects.filter(role="scored")]
    assert not [
        c
        for c in trial_clips
        if c["video_id"] == clip["video_id"]  # nor do any of their seconds
        and c["start_s"] < clip["end_s"]
        and clip["start_s"] < c["end_s"]
    ]

    item = Item.objects.get(condition__number=3)
    frames = Element.objects.filter(pk__in=item.truth)
    assert sorted(f.t_s for f in frames) == [0.938, 2.812, 4.688, 6.562, 8.438, 10.312, 12.188, 14.062]
    image = Image.open(BytesIO(default_storage.open(frames[0].image.name).read()))
    assert image.size == (224, 224)
    assert sorted(item.payload["shown"]) == sorted(item.truth)
    # Conditions 2, 6, 7, 8 and 9 sample the same 4 times of the same medium clip: frames are stored once.
    same = [Item.objects.get(condition__number=n, role="scored") for n in (2, 6, 7, 8, 9)]
    assert len({tuple(i.truth) for i in same}) == 1
    # The trial's medium clip (0-15 s) has no annotated action, so "comprehensive" falls back to the brief line;
    # the practice clip (15-30 s) holds the door-opening, timed from the clip's start.
    assert Item.objects.get(condition__number=7).payload["annotation"] == "Someone walks down a corridor."
    assert Item.objects.get(condition__number=6).payload["annotation"] == ""
    hinted = Item.objects.get(condition__number=8)
    assert hinted.payload["shown"][0] == hinted.truth[0] and hinted.payload["shown"][2] == hinted.truth[2]


def test_items_export_predictions_import_and_scores(built, tmp_path):
    out = tmp_path / "items.jsonl"
    assert _cmd("ordering_items", "pilot", "--out", str(out))[0] == 0
    items = [json.loads(line) for line in out.read_text().splitlines() if json.loads(line)["role"] == "scored"]
    assert len(items) == 10
    assert {"item_id", "condition", "role", "subtask", "group", "shown", "truth", "hints", "clip"} <= set(items[0])
    assert items[0]["condition"] == 1 and len(items[0]["truth"]) == 2

    lines = []
    for it in items:
        lines.append(json.dumps({"model": "oracle", "item_id": it["item_id"], "predicted": it["truth"]}))
        lines.append(json.dumps({"model": "backwards", "item_id": it["item_id"], "predicted": it["truth"][::-1]}))
    lines.insert(3, "this is not json")
    lines.insert(6, json.dumps({"model": "oracle", "item_id": 999999, "predicted": [1, 2]}))
    lines.insert(
        9, json.dumps({"model": "oracle", "item_id": items[0]["item_id"], "predicted": [items[0]["truth"][0]]})
    )
    preds = tmp_path / "preds.jsonl"
    preds.write_text("\n".join(lines) + "\n")

    code, stdout, stderr = _cmd("study_import_predictions", "pilot", str(preds))
    assert code == 1  # some lines were bad
    assert stderr.splitlines() == [
        "line 4: not JSON: Expecting value: line 1 column 1 (char 0)",
        "line 7: item_id 999999 is not a scored item of pilot",
        "line 10: expected 2 elements, got 1",
    ]
    assert "imported 20 predictions, skipped 3 lines" in stdout and "scored" in stdout
    assert Prediction.objects.filter(scored_at__isnull=True).count() == 0

    code, stdout, _ = _cmd("study_scores", "pilot", "--json")
    table = json.loads(stdout)
    assert table["unscored"] == 0 and table["kind"] == "ordering"
    by = {(r["condition"]["number"], r["respondent"]): r["metrics"] for r in table["rows"]}
    assert set(by) == {(n, m) for n in (1, 2, 3, 4, 6, 7, 8, 9) for m in ("oracle", "backwards")}
    assert by[(2, "oracle")]["kendall_tau_b"] == {"mean": 1.0, "ci_low": None, "ci_high": None, "n": 1}
    assert by[(4, "oracle")]["kendall_tau_b"] == {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 3}
    assert by[(4, "backwards")]["kendall_tau_b"]["mean"] == pytest.approx(-1.0)
    assert by[(8, "backwards")]["kendall_tau_b"]["mean"] == pytest.approx(-1.0)  # the two free frames, swapped
    assert by[(3, "backwards")]["exact_match"]["mean"] == 0.0
    assert by[(4, "backwards")]["position_accuracy"]["mean"] == 0.0

    again = tmp_path / "again.jsonl"
    again.write_text(
        json.dumps({"model": "backwards", "item_id": items[0]["item_id"], "predicted": items[0]["truth"]}) + "\n"
    )
    assert _cmd("ordering_import_predictions", "pilot", str(again))[0] == 0
    assert Prediction.objects.filter(model="backwards").count() == 10  # replaced, not added
    assert Prediction.objects.get(model="backwards", item_id=items[0]["item_id"]).scores["kendall_tau_b"] == 1.0


def test_a_multiple_choice_study_from_the_command_line_with_quick_and_deliberate_conditions(
    verified, project, tmp_path
):
    from annotator.studies.services import score_pending

    verified(3)
    code, stdout, stderr = _cmd(
        "study_create",
        "--project",
        project.slug,
        "--kind",
        "mcq",
        "--name",
        "human-mc",
        "--per-type",
        "30",
        "--time-limits",
        "60,180",
        "--seed",
        "5",
        "--json",
    )
    assert code == 0, stderr
    made = json.loads(stdout)
    study = Study.objects.get(name="human-mc")
    assert made == {"id": study.pk, "name": "human-mc", "kind": "mcq", "items": 6}  # 3 pairs with options x 2 limits
    assert [(c.label, c.time_limit_s) for c in study.conditions.all()] == [
        ("quick (60 s)", 60.0),
        ("deliberate (180 s)", 180.0),
    ]
    assert study.independent and study.seed == 5
    assert study.sampling == {
        "seed": 5,
        "per_type": {"object_recognition": {"available": 3, "taken": 3}},
        # every item's pair was on a verification unit's page (exposure ledger, issue 19)
        "exposure": {"on footage or answers of verification units": 6},
    }

    out = tmp_path / "items.jsonl"
    assert _cmd("study_items", "human-mc", "--out", str(out))[0] == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == 6 and {i["condition"] for i in items} == {1, 2}
    assert all(i["options"][i["answer_index"]] == "cup" and i["subtask"] == "object_recognition" for i in items)

    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"model": m, "item_id": i["item_id"], "predicted": p}) + "\n"
            for i in items
            for m, p in (("oracle", i["answer_index"]), ("first-option", 0))
        )
    )
    code, stdout, _ = _cmd("study_import_predictions", "human-mc", str(preds), "--no-wait")
    assert code == 0 and "imported 12 predictions, skipped 0 lines" in stdout
    assert score_pending(study.pk) == 12
    table = json.loads(_cmd("study_scores", "human-mc", "--json")[1])
    by = {(r["condition"]["number"], r["subtask"], r["respondent"]): r["metrics"]["accuracy"] for r in table["rows"]}
    assert set(by) == {(c, "object_recognition", m) for c in (1, 2) for m in ("oracle", "first-option")}
    assert by[(1, "object_recognition", "oracle")]["mean"] == 1.0
    first = sum(i["answer_index"] == 0 for i in items if i["condition"] == 1) / 3
    assert by[(1, "object_recognition", "first-option")]["mean"] == pytest.approx(first)

    # --no-independent lets builders take part; a taken name is refused without writing anything.
    assert (
        _cmd(
            "study_create",
            "--project",
            project.slug,
            "--kind",
            "mcq",
            "--name",
            "open-mc",
            "--no-independent",
            "--json",
        )[0]
        == 0
    )
    assert not Study.objects.get(name="open-mc").independent
    with pytest.raises(Exception, match="already exists"):
        call_command("study_create", "--project", project.slug, "--kind", "mcq", "--name", "open-mc", stdout=StringIO())
    assert Study.objects.filter(name="open-mc").count() == 1


def test_likert_items_carry_their_control_group_for_researchers_only(verified, project, tmp_path):
    verified(2, delete_open=1)  # per unit: one open pair deleted, one open and one multiple-choice pair verified
    code, stdout, stderr = _cmd(
        "study_create",
        "--project",
        project.slug,
        "--kind",
        "likert",
        "--name",
        "quality",
        "--preset",
        "vudg-quality",
        "--per-type",
        "2",
        "--seed",
        "3",
        "--json",
    )
    assert code == 0, stderr
    # Real: 2 scene_description + 2 object_recognition; random-matched: one per real pair; filtered: the 2
    # deleted scene_description pairs. Each rated for relevance and correctness.
    assert json.loads(stdout)["items"] == 2 * (4 + 4 + 2)
    out = tmp_path / "items.jsonl"
    assert _cmd("study_items", "quality", "--out", str(out))[0] == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    scored = [x for x in lines if x["role"] == "scored"]
    assert {(x["criterion"], x["group"]) for x in scored} == {
        (c, g) for c in ("relevance", "correctness") for g in ("real", "random_matched", "filtered")
    }
    assert [x["instructed_score"] for x in lines if x["role"] == "attention"] == [
        Item.objects.get(role="attention").truth
    ]
    # Nothing in what a participant's page is built from names the group.
    assert all("group" not in i.payload for i in Item.objects.filter(condition__study__name="quality"))
