"""Building an EGO-FLIGHT experiment from real (ffmpeg-made) videos, exporting its items, importing
model predictions (bad lines skipped by number), scoring them in a Celery worker, and the table."""

import json
from io import BytesIO, StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from PIL import Image

from annotator.experiments.models import Condition, Element, Item, Prediction
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
    manifest.write_text("\n".join(json.dumps(x) for x in [
        {"file": "walk.mp4", "annotations": {"description": "Someone walks down a corridor.",
                                             "actions": [{"label": "opens a door", "start_s": 16.0, "end_s": 20.0}]}},
        {"file": "tap.mp4", "annotations": {"description": "A tap drips."}},
    ]) + "\n")
    call_command("ingest", str(long_video), str(short_video), "--project", "ord", "--manifest", str(manifest), "--wait",
                 stdout=StringIO())
    code, out, _ = _cmd("ordering_create", "--project", "ord", "--preset", "ego-flight", "--name", "pilot", "--practice-items", "1")
    assert code == 0, out
    return out


def test_the_preset_builds_nine_conditions_with_items_and_counts_what_it_skipped(built):
    assert "9 conditions, 14 items, 1 practice items" in built
    assert "condition 5 (long clips): 1 items, 1 videos too short" in built
    conds = {c.number: c for c in Condition.objects.all()}
    assert [(c.n_frames, c.clip_length, c.annotation, c.hints, c.baseline) for c in conds.values()] == [
        (2, "medium", "brief", [], False), (4, "medium", "brief", [], True), (8, "medium", "brief", [], False),
        (4, "short", "brief", [], False), (4, "long", "brief", [], False), (4, "medium", "none", [], False),
        (4, "medium", "comprehensive", [], False), (4, "medium", "brief", [1, 3], False), (4, "medium", "brief", [2, 4], False)]
    counts = {n: Item.objects.filter(condition__number=n, practice=False).count() for n in conds}
    assert counts == {1: 1, 2: 1, 3: 1, 4: 6, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1}
    practice = Item.objects.get(practice=True)
    assert practice.condition.baseline and (practice.clip.start_s, practice.clip.end_s) == (15.0, 30.0)
    trial_clips = set(Item.objects.filter(practice=False).values_list("clip_id", flat=True))
    assert practice.clip_id not in trial_clips  # practice clips never come back as trials

    item = Item.objects.get(condition__number=3)
    frames = Element.objects.filter(pk__in=item.truth)
    assert sorted(f.t_s for f in frames) == [0.938, 2.812, 4.688, 6.562, 8.438, 10.312, 12.188, 14.062]
    image = Image.open(BytesIO(default_storage.open(frames[0].image.name).read()))
    assert image.size == (224, 224)
    assert sorted(item.shown) == sorted(item.truth)
    # Conditions 2, 6, 7, 8 and 9 sample the same 4 times of the same medium clip: frames are stored once.
    same = [Item.objects.get(condition__number=n, practice=False) for n in (2, 6, 7, 8, 9)]
    assert len({tuple(i.truth) for i in same}) == 1
    # The trial's medium clip (0-15 s) has no annotated action, so "comprehensive" falls back to the brief line;
    # the practice clip (15-30 s) holds the door-opening, timed from the clip's start.
    assert Item.objects.get(condition__number=7).annotation == "Someone walks down a corridor."
    assert practice.clip.comprehensive == "1.0-5.0 s: opens a door"
    assert Item.objects.get(condition__number=6).annotation == ""
    hinted = Item.objects.get(condition__number=8)
    assert hinted.shown[0] == hinted.truth[0] and hinted.shown[2] == hinted.truth[2]


def test_items_export_predictions_import_and_scores(built, tmp_path):
    out = tmp_path / "items.jsonl"
    assert _cmd("ordering_items", "pilot", "--out", str(out))[0] == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == 14 and set(items[0]) == {"item_id", "condition", "shown", "truth", "hints"}
    assert items[0]["condition"]["n_frames"] == 2

    lines = []
    for it in items:
        lines.append(json.dumps({"model": "oracle", "item_id": it["item_id"], "predicted": it["truth"]}))
        lines.append(json.dumps({"model": "backwards", "item_id": it["item_id"], "predicted": it["truth"][::-1]}))
    lines.insert(3, "this is not json")
    lines.insert(6, json.dumps({"model": "oracle", "item_id": 999999, "predicted": [1, 2]}))
    lines.insert(9, json.dumps({"model": "oracle", "item_id": items[0]["item_id"], "predicted": [items[0]["truth"][0]]}))
    preds = tmp_path / "preds.jsonl"
    preds.write_text("\n".join(lines) + "\n")

    code, stdout, stderr = _cmd("ordering_import_predictions", "pilot", str(preds))
    assert code == 1  # some lines were bad
    assert stderr.splitlines() == [
        "line 4: not JSON: Expecting value: line 1 column 1 (char 0)",
        "line 7: item_id 999999 is not an item of pilot",
        "line 10: expected 2 elements, got 1",
    ]
    assert "imported 28 predictions, skipped 3 lines" in stdout and "scored" in stdout
    assert Prediction.objects.filter(scored_at__isnull=True).count() == 0

    code, stdout, _ = _cmd("ordering_scores", "pilot", "--json")
    table = json.loads(stdout)
    assert table["unscored"] == 0
    by = {(r["condition"]["number"], r["respondent"]): r["metrics"] for r in table["rows"]}
    assert set(by) == {(n, m) for n in range(1, 10) for m in ("oracle", "backwards")}
    assert by[(2, "oracle")]["kendall_tau_b"] == {"mean": 1.0, "ci_low": None, "ci_high": None, "n": 1}
    assert by[(4, "oracle")]["kendall_tau_b"] == {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 6}
    assert by[(4, "backwards")]["kendall_tau_b"]["mean"] == pytest.approx(-1.0)
    assert by[(8, "backwards")]["kendall_tau_b"]["mean"] == pytest.approx(-1.0)  # the two free frames, swapped
    assert by[(3, "backwards")]["exact_match"]["mean"] == 0.0

    again = tmp_path / "again.jsonl"
    again.write_text(json.dumps({"model": "backwards", "item_id": items[0]["item_id"], "predicted": items[0]["truth"]}) + "\n")
    assert _cmd("ordering_import_predictions", "pilot", str(again))[0] == 0
    assert Prediction.objects.filter(model="backwards").count() == 14  # replaced, not added
    assert Prediction.objects.get(model="backwards", item_id=items[0]["item_id"]).kendall_tau_b == 1.0
