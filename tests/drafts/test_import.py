"""The import pipeline end to end on real footage with the real worker: the platform's own export
read back as drafts with their provenance, model predictions, unknown videos reported per line,
and a malformed file refused by line number with nothing written. No model server is involved."""

import json
from io import StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.drafts import services
from annotator.drafts.models import Draft, DraftJob, DraftRun
from annotator.drafts.templates import DraftSpec
from annotator.inference.models import ModelCall
from annotator.media.models import Video
from annotator.projects.models import Project
from annotator.qa.models import QAPair, QAType, Revision
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, ensure_qa_type, submit_unit
from tests.drafts.conftest import run_draft

OPTIONS = ["bicycle", "teapot", "violin", "pillow"]


@pytest.fixture
def bikes(worker, real_video, tmp_path):
    """bikes.mp4 ingested by the real worker into project ``imp``."""
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"file": "bikes.mp4", "domain": "street"}) + "\n")
    call_command(
        "ingest", str(real_video), "--project", "imp", "--manifest", str(manifest), "--wait", stdout=StringIO()
    )
    return Video.objects.get(project__slug="imp", filename="bikes.mp4")


def run_import(path) -> dict:
    code, out, err = run_draft("--project", "imp", "--pipeline", "import", "--file", str(path), "--json")
    report = json.loads(out)
    assert code == 0, err
    return report


def write_jsonl(path, rows) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def verified_export(bikes, tmp_path):
    """Two template drafts of bikes.mp4 verified by an annotator (the open one modified), exported
    with ``export_qa``; returns (export path, the exported rows)."""
    from annotator.projects.services import ensure_member

    run = DraftRun.objects.create(
        project=bikes.project, pipeline="templates", prompt_version="templates-v1", status=DraftRun.Status.DONE
    )
    job = DraftJob.objects.create(run=run, video=bikes)
    for slug in ("object_recognition", "action_recognition"):
        ensure_qa_type(bikes.project, slug)
    services.save_drafts(
        job,
        [
            DraftSpec(
                "object_recognition",
                "Which of these objects appears in the video?",
                "bicycle",
                0.0,
                10.0,
                source_key="objects",
                options=OPTIONS,
                answer_index=0,
                params={"shuffle_seed": 7},
            ),
            DraftSpec(
                "action_recognition", "What happens in this clip?", "people ride", 1.0, 4.0, source_key="action-0"
            ),
        ],
        actor="templates/templates-v1",
    )
    annotator, _ = ensure_member("ann", role="annotator", project=bikes.project)
    unit = claim_next(bikes.project, annotator).unit
    mc, action = unit.qa_pairs.order_by("id")
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="k1",
        time_spent_ms=1000,
        decisions=[Decision(mc.pk, "keep"), Decision(action.pk, "modify", answer="two people ride bicycles")],
        additions=[],
    )
    out = tmp_path / "qa.jsonl"
    call_command("export_qa", "--project", "imp", "--out", str(out), stderr=StringIO())
    return out, [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.django_db(transaction=True)
def test_the_platforms_own_export_is_read_back_as_drafts_with_their_provenance(verified_export, bikes, model_server):
    path, exported = verified_export
    before = set(QAPair.objects.values_list("id", flat=True))

    report = run_import(path)

    assert report["status"] == "done" and report["servers"] == {} and report["calls"] == {}
    assert model_server.requests == [] and ModelCall.objects.count() == 0  # no model involved
    assert report["summary"] == {"imported": 2, "predictions": 0, "already_imported": 0} and report["drafts"] == 2
    assert {
        k: report["params"][k]
        for k in ("imported_from", "rows", "importable_rows", "videos", "unknown_rows", "unknown_videos")
    } == {
        "imported_from": "qa.jsonl",
        "rows": 2,
        "importable_rows": 2,
        "videos": 1,
        "unknown_rows": 0,
        "unknown_videos": [],
    }
    new = list(QAPair.objects.exclude(id__in=before).select_related("draft", "qa_type").order_by("id"))
    assert [
        (p.qa_type.slug, p.question, p.answer, p.options, p.answer_index, p.clip_start_s, p.clip_end_s) for p in new
    ] == [
        (
            r["qa_type"],
            r["question"],
            r["answer"],
            r["options"] or None,  # the export's open item: [] and -1
            r["answer_index"] if r["options"] else None,
            r["clip_start_s"],
            r["clip_end_s"],
        )
        for r in exported
    ]
    assert [(p.status, p.origin, p.video_id) for p in new] == [("draft", "machine", bikes.pk)] * 2
    run_id = report["run"]
    for line, (pair, row) in enumerate(zip(new, exported), start=1):
        assert pair.draft.params == {
            "imported_from": "qa.jsonl",
            "file_sha256": report["params"]["file_sha256"],
            "line": line,
            "kind": "qa",
            "original_id": row["id"],
            "model": None,
            "original": {
                "project": "imp",
                "provenance": row["provenance"],
                "pipeline": "templates",
                "verified_at": row["verified_at"],
            },
        }
        assert pair.draft.source_key == f"line-{line}"
        assert pair.revisions.get().actor_model == f"import/no-model/run-{run_id}"
    assert [r["provenance"] for r in exported] == ["machine_kept", "machine_modified"]
    assert new[1].answer == "two people ride bicycles"  # the verified text, not the machine's draft
    assert new[0].unit_id == new[1].unit_id != QAPair.objects.get(id=min(before)).unit_id  # a new unit to verify

    again = run_import(path)  # the same file again adds nothing
    assert again["summary"] == {"imported": 0, "predictions": 0, "already_imported": 2}
    assert QAPair.objects.count() == len(before) + 2


@pytest.mark.django_db(transaction=True)
def test_predictions_become_drafts_and_rows_naming_unknown_videos_are_reported_by_line(bikes, tmp_path):
    path = write_jsonl(
        tmp_path / "preds.jsonl",
        [
            {
                "video": "bikes.mp4",
                "qa_type": "object_recognition",
                "question": "Which object appears?",
                "options": OPTIONS,
                "answer_index": 0,
                "prediction": "C",
                "model": "gpt-4o",
                "id": "q-1",
            },
            {"video": "nope.mp4", "qa_type": "counting", "question": "How many?", "prediction": "2", "model": "gpt-4o"},
            "",
            {
                "video": {"sha256": bikes.sha256},
                "qa_type": "counting",
                "question": "How many bicycles are there?",
                "prediction": "two",
                "model": "gpt-4o",
                "id": 7,
                "clip": {"start_s": 2.0, "end_s": 99.0},
            },
            {"video": "f" * 64, "qa_type": "counting", "question": "How many?", "prediction": "3", "model": "gpt-4o"},
        ],
    )

    report = run_import(path)

    assert report["status"] == "done"
    assert report["summary"] == {"imported": 2, "predictions": 2, "already_imported": 0}
    assert report["params"]["unknown_rows"] == 2 and report["params"]["unknown_videos"] == [
        {"line": 2, "video": "nope.mp4", "reason": "no video named nope.mp4 in project imp"},
        {"line": 5, "video": "f" * 64, "reason": f"no video with SHA-256 {'f' * 64} in project imp"},
    ]
    choice, count = QAPair.objects.select_related("draft").order_by("id")
    assert (choice.options, choice.answer_index, choice.answer) == (OPTIONS, 2, "violin")  # "C", the model's choice
    assert choice.draft.params == {
        "imported_from": "preds.jsonl",
        "file_sha256": report["params"]["file_sha256"],
        "line": 1,
        "kind": "prediction",
        "original_id": "q-1",
        "model": "gpt-4o",
        "original": {"truth_index": 0},
    }
    assert (count.question, count.answer, count.options) == ("How many bicycles are there?", "two", None)
    assert (count.clip_start_s, count.clip_end_s) == (2.0, bikes.duration_s)  # clipped to the video
    assert count.draft.params["line"] == 4 and count.draft.params["original_id"] == 7
    assert QAType.objects.filter(project=bikes.project, slug="counting").exists()


@pytest.mark.django_db(transaction=True)
def test_a_malformed_file_is_refused_by_line_number_and_nothing_is_written(bikes, tmp_path):
    good = {"video": "bikes.mp4", "qa_type": "brand_new_type", "question": "What is shown?", "answer": "bikes"}
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            good,
            '{"video": "bikes.mp4", "qa_type": "x", "question": "Q?" "answer": "a"}',
            good,
            {**good, "question": ""},
            {**good, "options": ["a", "b"], "answer_index": 5},
            {**good, "clip": {"start_s": 50.0, "end_s": 60.0}},
            [1, 2],
        ],
    )
    counts = (
        DraftRun.objects.count(),
        Draft.objects.count(),
        QAPair.objects.count(),
        QAType.objects.count(),
        Revision.objects.count(),
    )
    stored = f"imports/{bikes.project_id}"

    with pytest.raises(CommandError) as refused:
        run_draft("--project", "imp", "--pipeline", "import", "--file", path)

    assert str(refused.value) == (
        "bad.jsonl: 5 malformed lines; nothing was imported: "
        "line 2: not JSON (Expecting ',' delimiter at column 57); "
        "line 4: question must be a non-empty text; "
        "line 5: answer_index must be an integer from 0 to 1; "
        f"line 6: the clip starts at 50 s, after the end of bikes.mp4 ({bikes.duration_s:g} s); "
        "line 7: a row must be a JSON object"
    )
    assert (
        DraftRun.objects.count(),
        Draft.objects.count(),
        QAPair.objects.count(),
        QAType.objects.count(),
        Revision.objects.count(),
    ) == counts
    assert not QAType.objects.filter(slug="brand_new_type").exists()
    assert not default_storage.exists(stored)  # no rows were stored for workers either


@pytest.mark.django_db(transaction=True)
def test_a_file_that_names_no_known_video_or_is_missing_is_refused(bikes, tmp_path):
    path = write_jsonl(
        tmp_path / "elsewhere.jsonl",
        [{"video": "other.mp4", "qa_type": "counting", "question": "How many?", "answer": "2"}],
    )
    with pytest.raises(
        CommandError,
        match=r"^elsewhere\.jsonl: no row names a usable video of project imp: "
        r"line 1: no video named other\.mp4 in project imp$",
    ):
        run_draft("--project", "imp", "--pipeline", "import", "--file", path)
    with pytest.raises(CommandError, match=r"^cannot read /nonexistent\.jsonl: No such file or directory$"):
        run_draft("--project", "imp", "--pipeline", "import", "--file", "/nonexistent.jsonl")
    with pytest.raises(CommandError, match=r"^the import pipeline needs --file PATH \(a JSONL file\)$"):
        run_draft("--project", "imp", "--pipeline", "import")
    assert DraftRun.objects.filter(project=Project.objects.get(slug="imp")).count() == 0
