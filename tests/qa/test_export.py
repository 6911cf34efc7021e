"""The JSONL export: exactly the verified QA pairs, in the schema the README documents (the row
shape of every kind of item: tests/qa/test_exports.py)."""

import json
import re

import pytest
from django.core.management import call_command

from annotator.qa.exports import row_schema
from annotator.qa.queue import claim_next
from annotator.qa.selectors import pseudonym
from annotator.qa.services import Addition, Decision, submit_unit

VIDEO_KEYS = {
    "id",
    "sha256",
    "filename",
    "duration_s",
    "fps",
    "width",
    "height",
    "illumination",
    "source",
    "storage_path",
    "metadata",
}


@pytest.fixture
def verified(make_unit, annotator, annotator2):
    """Two units: the first verified (keep, modify, delete, keep MC, add one), the second untouched."""
    unit = claim_next(make_unit().project, annotator).unit
    make_unit()  # its drafts stay undecided and must not be exported
    a, b, c, mc = unit.qa_pairs.order_by("id")
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="x",
        time_spent_ms=1000,
        decisions=[
            Decision(a.pk, "keep"),
            Decision(b.pk, "modify", question="What is poured?", answer="water"),
            Decision(c.pk, "delete", reason="duplicate"),
            Decision(mc.pk, "keep"),
        ],
        additions=[Addition("object_recognition", "What colour is the cup?", "red", 1.0, 4.0)],
    )
    return {"kept": a, "modified": b, "deleted": c, "mc": mc}


def _export(project, tmp_path, *extra):
    out = tmp_path / "qa.jsonl"
    call_command("export_qa", "--project", project.slug, "--out", str(out), *extra)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_it_exports_exactly_the_verified_items(verified, project, tmp_path, annotator):
    rows = _export(project, tmp_path)
    assert [r["provenance"] for r in rows] == ["machine_kept", "machine_modified", "machine_kept", "human_added"]
    assert verified["deleted"].pk not in {r["id"] for r in rows}
    for row in rows:
        assert list(row) == row_schema().names
        assert set(row["video"]) == VIDEO_KEYS
        assert row["annotators"] == [pseudonym(annotator.pk)]
        assert row["verifications"] == 1
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z", row["verified_at"])

    kept, modified, mc, added = rows
    assert kept["draft"] == {
        "question": kept["question"],
        "answer": kept["answer"],
        "pipeline": "templates",
        "model": "",
    }
    assert (modified["question"], modified["answer"]) == ("What is poured?", "water")
    assert modified["draft"]["question"] == "What happens in part 1 of clip 1?"
    assert (mc["options"], mc["answer_index"], mc["answer"]) == (["pan", "cup", "lamp", "shoe"], 1, "cup")
    assert (kept["options"], kept["answer_index"]) == ([], -1)
    assert added["draft"] == {"question": "", "answer": "", "pipeline": "", "model": ""}
    assert (added["clip_start_s"], added["clip_end_s"]) == (1.0, 4.0)
    assert added["qa_type"] == "object_recognition" and added["paired"] is False and added["group"]["kind"] == ""
    assert kept["video"]["illumination"] == "day"
    assert json.loads(kept["video"]["metadata"]) == {
        "difficulty": None,
        "domain": "kitchen",
        "scenario": None,
        "view": None,
    }
    assert kept["project"] == "proj" and (kept["clip_start_s"], kept["clip_end_s"]) == (0.0, 10.0)


def test_filters_narrow_the_export(verified, project, tmp_path):
    rows = _export(project, tmp_path, "--provenance", "human_added")
    assert [r["question"] for r in rows] == ["What colour is the cup?"]
    assert _export(project, tmp_path, "--illumination", "night") == []


def test_pseudonyms_are_stable_and_not_the_username(annotator):
    assert pseudonym(annotator.pk) == pseudonym(annotator.pk)
    assert re.fullmatch(r"ann-[0-9a-f]{12}", pseudonym(annotator.pk))
    assert pseudonym(annotator.pk) != pseudonym(annotator.pk + 1)
