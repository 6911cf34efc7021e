"""The EgoExoBench checks end to end on real footage, with the real worker and the loopback model
server: a consistency flag served first, the text-only filter (flag and drop), hard-negative
distractors ranked by meaning and checked by a model, resume after a failed stage and a rerun
served from the cache. Plus the pure parts (shuffles, ranking) and the all-or-nothing commit."""

import json
import math
import re
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from annotator.drafts import services
from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.pipelines.egoexobench import (
    EgoExoBenchChecks,
    _Change,
    pick_distractors,
    rank_candidates,
    seed_of,
    text_only_shuffles,
)
from annotator.drafts.templates import DraftSpec, shuffled_options
from annotator.errors import Conflict
from annotator.inference.models import ModelCall, ModelServer
from annotator.media.models import Video
from annotator.projects.models import Project
from annotator.qa.models import QAPair, Revision
from annotator.qa.queue import claim_next
from annotator.qa.selectors import unit_payload
from annotator.qa.services import ensure_qa_type
from tests.conftest import qh
from tests.drafts.conftest import run_draft
from tests.fake_model_server import n_images, user_text

ANNOTATIONS = {
    "description": "Two people ride bicycles past a brick building on a sunny street.",
    "objects": ["bicycle", "person", "building"],
    "actions": [{"label": "a person rides a bicycle past the camera", "start_s": 1.0, "end_s": 4.0}],
    "counts": [{"what": "bicycles", "count": 2, "at_s": None}],
}
COLOURS = ["red", "green", "blue", "yellow"]
OBJECTS = ["bicycle", "teapot", "violin", "pillow"]


@pytest.fixture
def street(worker, real_video, tmp_path, model_server):
    """bikes.mp4 (10 s of real footage) ingested by the real worker into project ``qa`` with its
    annotations, scenario (domain) ``street``; a model server ``llm`` on the loopback server."""
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"file": "bikes.mp4", "domain": "street", "annotations": ANNOTATIONS}) + "\n")
    call_command("ingest", str(real_video), "--project", "qa", "--manifest", str(manifest), "--wait", stdout=StringIO())
    project = Project.objects.get(slug="qa")
    ModelServer.objects.create(project=project, name="llm", base_url=model_server.base_url, model="fake-llm")
    return Video.objects.get(project=project, filename="bikes.mp4")


def drafts(video, *specs) -> list[QAPair]:
    """Save ``specs`` as one draft job's drafts of ``video`` (one unit), as a drafting pipeline
    would; returns their QA pairs in order."""
    run = DraftRun.objects.create(
        project=video.project, pipeline="templates", prompt_version="templates-v1", status=DraftRun.Status.DONE
    )
    job = DraftJob.objects.create(run=run, video=video)
    for slug in {s.qa_type for s in specs}:
        ensure_qa_type(video.project, slug)
    services.save_drafts(job, list(specs), actor="templates/templates-v1")
    return list(QAPair.objects.filter(draft__job=job).order_by("id"))


def mcq(key, question, options, answer_index=0, qa_type="object_recognition") -> DraftSpec:
    return DraftSpec(
        qa_type, question, options[answer_index], 0.0, 10.0, source_key=key, options=options, answer_index=answer_index
    )


def open_qa(key, question, answer, qa_type="object_recognition") -> DraftSpec:
    return DraftSpec(qa_type, question, answer, 0.0, 10.0, source_key=key)


def shown_options(body) -> list[str]:
    """The lettered options ("A. text") of a request, in the order shown."""
    return re.findall(r"^[A-Z]\. (.*)$", user_text(body), flags=re.MULTILINE)


def question_of(body) -> str:
    return re.search(r"^Question: (.*)$", user_text(body), flags=re.MULTILINE).group(1)


def system_of(body) -> str:
    return body["messages"][0]["content"]


def consistent(body) -> dict:
    return {"label": "consistent", "reason": "matches the annotations", "also_correct": []}


def run_checks(*params) -> dict:
    args = [a for p in params for a in ("--param", p)]
    code, out, _ = run_draft("--project", "qa", "--pipeline", "egoexobench_checks", "--server", "llm", *args, "--json")
    report = json.loads(out)
    report["exit"] = code
    return report


# ----------------------------------------------------------------------------- consistency


@pytest.mark.django_db(transaction=True)
def test_an_inconsistent_pair_is_flagged_with_the_reason_and_its_unit_is_served_first(street, model_server):
    from annotator.projects.services import ensure_member

    (kept,) = drafts(street, open_qa("a", "What does the person ride?", "A bicycle."))
    (wrong,) = drafts(street, open_qa("b", "How many bicycles are there?", "Five.", qa_type="counting"))
    model_server.responders["consistency_check"] = lambda body: (
        {"label": "inconsistent", "reason": "the annotations count 2 bicycles", "also_correct": []}
        if "How many bicycles" in user_text(body)
        else consistent(body)
    )

    report = run_checks()

    assert report["exit"] == 0 and report["status"] == "done"
    assert {k: v for k, v in report["summary"].items()} == {
        "checked": 2,
        "inconsistent": 1,
        "text_only_flagged": 0,
        "dropped": 0,
        "hard_negatives_set": 0,
        "hard_negatives_failed": 0,
        "hard_negatives_too_few": 0,
        "no_annotations": 0,
        "no_scenario": 0,
    }
    assert {s: c["calls"] for s, c in report["calls"].items()} == {"consistency_check": 2}  # open items: no MC checks
    body = model_server.calls_of("consistency_check")[0]
    assert n_images(body) == 0
    assert "Objects: bicycle, person, building" in user_text(body) and "- 2 bicycles in the whole video" in user_text(
        body
    )
    actor = f"egoexobench_checks/fake-llm/run-{report['run']}"
    wrong.refresh_from_db()
    assert (wrong.flag_reason, wrong.flag_source) == (
        "inconsistent with the source annotations: the annotations count 2 bicycles",
        actor,
    )
    assert wrong.status == QAPair.Status.DRAFT and wrong.version == 1
    assert Revision.objects.filter(qa_pair=wrong, action=Revision.Action.FLAG, actor_model=actor).count() == 1
    kept.refresh_from_db()
    assert kept.flag_reason == "" and kept.revisions.count() == 1

    annotator, _ = ensure_member("ann", role="annotator", project=street.project)
    item = claim_next(street.project, annotator)
    assert item.unit_id == wrong.unit_id  # drafted after the other unit, served before it
    served = unit_payload(item, annotator)["qa_pairs"]
    assert [(p["id"], p["flag"]) for p in served] == [(qh(wrong), {"reason": wrong.flag_reason, "source": actor})]
    job = DraftJob.objects.get(run_id=report["run"])
    assert job.summary["pairs"][str(wrong.pk)] == {
        "consistency": {"label": "inconsistent", "reason": "the annotations count 2 bicycles", "also_correct": []}
    }


# ----------------------------------------------------------------------------- text-only


def answer_by_text(right_on: dict[str, set[int]]):
    """A text_only responder: for each question, the correct option's letter on the tries (1-based)
    listed in ``right_on``, another letter otherwise. The correct option is the first of OBJECTS or
    COLOURS (the tests key answer_index 0)."""
    seen: dict[str, int] = {}

    def respond(body):
        question, options = question_of(body), shown_options(body)
        seen[question] = seen.get(question, 0) + 1
        correct = next(i for i, o in enumerate(options) if o in ("bicycle", "red"))
        pick = correct if seen[question] in right_on[question] else (correct + 1) % len(options)
        return {"answer": "ABCD"[pick]}

    return respond


@pytest.mark.django_db(transaction=True)
def test_a_pair_answered_right_every_time_without_frames_is_flagged_and_two_of_three_is_not(street, model_server):
    always, twice = drafts(
        street,
        mcq("a", "Which object appears in the video?", OBJECTS),
        mcq("b", "What colour is the door?", COLOURS, qa_type="colour"),
    )
    model_server.responders["text_only"] = answer_by_text({always.question: {1, 2, 3}, twice.question: {1, 2}})

    report = run_checks("consistency=false", "hard_negatives=false")

    assert report["status"] == "done"
    assert report["summary"]["checked"] == 2 and report["summary"]["text_only_flagged"] == 1
    assert report["summary"]["dropped"] == 0
    calls = model_server.calls_of("text_only")
    assert len(calls) == 6 and all(n_images(b) == 0 for b in calls)  # no frames, ever
    for pair in (always, twice):
        orders = [shown_options(b) for b in calls if question_of(b) == pair.question]
        assert len(orders) == 3 and len({tuple(o) for o in orders}) == 3  # reshuffled each time
        assert len({o.index(pair.answer) for o in orders}) == 3  # the right option moved every time
        assert all(sorted(o) == sorted(pair.options) for o in orders)

    always.refresh_from_db()
    twice.refresh_from_db()
    assert always.flag_reason == (
        "answerable without the video: a model chose the right option in 3 of 3 text-only "
        "tries, the options reshuffled each time"
    )
    assert always.status == QAPair.Status.DRAFT and always.options == OBJECTS  # flagged, not changed
    assert twice.flag_reason == "" and twice.revisions.count() == 1

    outcome = DraftJob.objects.get(run_id=report["run"]).summary["pairs"]
    tries = outcome[str(always.pk)]["text_only"]["tries"]
    expected = text_only_shuffles(4, 0, 3, f"text-only:{always.pk}")
    assert [(t["seed"], t["order"]) for t in tries] == [(s, o) for s, o in expected]  # recorded, reproducible
    assert len({t["seed"] for t in tries}) == 3  # a seed per try
    assert [t["picked"] for t in tries] == [0, 0, 0] and all(t["correct"] for t in tries)
    assert [t["letter"] for t in tries] == ["ABCD"[o.index(0)] for _, o in expected]  # the letter maps back
    assert (
        outcome[str(twice.pk)]["text_only"]["right"] == 2 and outcome[str(twice.pk)]["text_only"]["outcome"] == "kept"
    )
    recorded = ModelCall.objects.filter(stage="text_only", request__qa_pair=always.pk).order_by("id")
    assert [c.request["seed"] for c in recorded] == [s for s, _ in expected]


@pytest.mark.django_db(transaction=True)
def test_the_drop_policy_deletes_the_pair_so_it_is_no_longer_served(street, model_server):
    from annotator.projects.services import ensure_member

    always, other = drafts(
        street,
        mcq("a", "Which object appears in the video?", OBJECTS),
        open_qa("b", "What does the person ride?", "A bicycle."),
    )
    model_server.responders["text_only"] = answer_by_text({always.question: {1, 2, 3}})

    report = run_checks("consistency=false", "hard_negatives=false", "text_only=drop")

    assert report["summary"]["dropped"] == 1 and report["summary"]["text_only_flagged"] == 0
    always.refresh_from_db()
    assert always.status == QAPair.Status.DELETED and always.version == 2
    drop = always.revisions.get(action=Revision.Action.DELETE)
    assert drop.actor_model == f"egoexobench_checks/fake-llm/run-{report['run']}" and drop.actor_user is None
    assert drop.after["flag_reason"].startswith("answerable without the video")
    annotator, _ = ensure_member("ann", role="annotator", project=street.project)
    served = unit_payload(claim_next(street.project, annotator), annotator)["qa_pairs"]
    assert [p["id"] for p in served] == [qh(other)]


# ----------------------------------------------------------------------------- hard negatives


@pytest.fixture
def kitchen(street, real_video, tmp_path):
    """motion.mov ingested into project ``qa`` as scenario ``kitchen``."""
    source = real_video.parent / "motion.mov"
    manifest = tmp_path / "k.jsonl"
    manifest.write_text(json.dumps({"file": "motion.mov", "domain": "kitchen"}) + "\n")
    call_command("ingest", str(source), "--project", "qa", "--manifest", str(manifest), "--wait", stdout=StringIO())
    return Video.objects.get(project=street.project, filename="motion.mov")


@pytest.mark.django_db(transaction=True)
def test_hard_negatives_are_the_closest_answers_of_the_scenario_and_a_distractor_also_correct_is_replaced(
    street, kitchen, model_server
):
    item, *_ = drafts(
        street,
        mcq("m", "Which vehicle do the people ride?", ["a red bicycle", "a teapot", "a violin", "a pillow"]),
        *[
            open_qa(f"c{i}", f"What is shown {i}?", text)
            for i, text in enumerate(
                ["a blue bicycle", "a motorcycle", "a scooter", "a dog", "a kitchen knife", "a red bike"]
            )
        ],
    )
    drafts(kitchen, open_qa("k", "What is on the wall?", "a green bicycle"))  # closer, but another scenario
    model_server.responders["consistency_check"] = lambda body: (
        {
            "label": "inconsistent",
            "reason": "the blue one could be right",
            "also_correct": ["ABCD"[shown_options(body).index("a blue bicycle")]],
        }
        if "a blue bicycle" in shown_options(body)
        else consistent(body)
    )

    report = run_checks("consistency=false", "text_only=off")

    assert report["status"] == "done", report["failures"]
    assert report["summary"]["hard_negatives_set"] == 1 and report["summary"]["hard_negatives_failed"] == 0
    checks = model_server.calls_of("consistency_check")
    assert all("distractors" in system_of(b) for b in checks)  # the distractor check's own prompt
    assert [sorted(shown_options(b)) for b in checks] == [
        sorted(
            ["a red bicycle", "a blue bicycle", "a motorcycle", "a scooter"]
        ),  # the three nearest; "a red bike" is the answer again
        sorted(["a red bicycle", "a motorcycle", "a scooter", "a dog"]),  # the rejected one replaced by the next
    ]
    seed = seed_of("hard-negatives", item.pk, 1)
    options, index = shuffled_options("a red bicycle", ["a motorcycle", "a scooter", "a dog"], seed)
    item.refresh_from_db()
    assert (item.options, item.answer_index, item.answer, item.version) == (options, index, "a red bicycle", 2)
    assert item.status == QAPair.Status.DRAFT and item.flag_reason == ""
    revision = item.revisions.get(action=Revision.Action.MODIFY)
    assert revision.actor_model == f"egoexobench_checks/fake-llm/run-{report['run']}" and revision.actor_user is None
    assert revision.before["options"] == ["a red bicycle", "a teapot", "a violin", "a pillow"]
    note = revision.after["hard_negatives"]
    assert (note["status"], note["seed"], note["rounds"], note["rejected"]) == ("set", seed, 2, ["a blue bicycle"])
    assert [d["text"] for d in note["distractors"]] == ["a motorcycle", "a scooter", "a dog"]
    assert note["distractors"][0]["similarity"] > note["distractors"][2]["similarity"]
    assert ModelCall.objects.filter(stage="consistency_check", prompt_version="egoexo-distractors-v1").count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_pair_whose_every_candidate_set_is_rejected_keeps_its_options_and_is_flagged(street, model_server):
    item, *_ = drafts(
        street,
        mcq("m", "Which vehicle do the people ride?", ["a red bicycle", "a teapot", "a violin", "a pillow"]),
        *[
            open_qa(f"c{i}", f"What is shown {i}?", t)
            for i, t in enumerate(["a blue bicycle", "a motorcycle", "a scooter", "a dog"])
        ],
    )
    model_server.responders["consistency_check"] = lambda body: {  # the nearest option is always "also correct"
        "label": "inconsistent",
        "reason": "too close",
        "also_correct": [
            "ABCD"[
                shown_options(body).index(
                    next(t for t in ("a blue bicycle", "a motorcycle") if t in shown_options(body))
                )
            ]
        ],
    }

    report = run_checks("consistency=false", "text_only=off")

    assert report["summary"]["hard_negatives_failed"] == 1 and report["summary"]["hard_negatives_set"] == 0
    item.refresh_from_db()
    assert item.options == ["a red bicycle", "a teapot", "a violin", "a pillow"] and item.version == 1
    assert item.flag_reason == (
        "hard-negative distractors: every candidate set had an option that is also correct "
        "(rejected 'a blue bicycle', 'a motorcycle'); the drafted options were kept"
    )


# ----------------------------------------------------------------------------- resume and cache


@pytest.mark.django_db(transaction=True)
def test_a_run_failed_at_the_text_only_stage_writes_nothing_resumes_there_and_a_rerun_costs_nothing(
    street, model_server, settings
):
    settings.LLM_MAX_ATTEMPTS = 2
    wrong, always = drafts(
        street,
        open_qa("a", "How many bicycles are there?", "Five.", qa_type="counting"),
        mcq("b", "Which object appears in the video?", OBJECTS),
    )
    model_server.responders["consistency_check"] = lambda body: (
        {"label": "inconsistent", "reason": "2 bicycles", "also_correct": []}
        if "How many" in user_text(body)
        else consistent(body)
    )
    model_server.responders["text_only"] = lambda body: {"answer": "ABCD"[shown_options(body).index("bicycle")]}
    model_server.fail_next("malformed", stage="text_only", n=2)  # the first text-only call gives up

    report = run_checks("hard_negatives=false")

    assert report["exit"] == 1 and report["status"] == "failed"
    assert report["failures"] == [
        {
            "video": "bikes.mp4",
            "stage": "text_only",
            "error": (
                "no usable answer in 2 attempts; last: malformed: not JSON: Expecting value: line 1 column 13 (char 12)"
            ),
        }
    ]
    wrong.refresh_from_db()
    assert wrong.flag_reason == "" and Revision.objects.count() == 2  # the consistency flag was not written either
    before = len(model_server.requests)

    code, out, err = run_draft("--project", "qa", "--resume", str(report["run"]), "--json")
    resumed = json.loads(out)
    assert code == 0 and resumed["status"] == "done", err
    assert model_server.stages[before:] == ["text_only"] * 3  # consistency came from the cache
    assert resumed["calls"]["consistency_check"]["cache_hits"] == 2
    wrong.refresh_from_db()
    always.refresh_from_db()
    assert wrong.flag_reason == "inconsistent with the source annotations: 2 bicycles"
    assert always.flag_reason.startswith("answerable without the video")
    revisions = Revision.objects.count()

    before = len(model_server.requests)
    again = run_checks("hard_negatives=false")
    assert again["status"] == "done" and len(model_server.requests) == before  # no request at all
    assert again["cost_usd"] == 0 and {s: (c["calls"], c["cache_hits"]) for s, c in again["calls"].items()} == {
        "consistency_check": (2, 2),
        "text_only": (3, 3),
    }
    assert Revision.objects.count() == revisions  # the same verdicts write nothing new


@pytest.mark.django_db(transaction=True)
def test_bad_parameters_are_refused_in_plain_words(street):
    from django.core.management.base import CommandError

    for param, message in [
        ("k=11", "k must be a whole number from 1 to 10"),
        ("text_only=maybe", "text_only must be flag, drop or off"),
        ("near_identical=0", "near_identical must be a number above 0 and at most 1"),
    ]:
        with pytest.raises(CommandError, match=f"^{message}$"):
            run_checks(param)
    with pytest.raises(CommandError, match="^every check is off"):
        run_checks("consistency=false", "hard_negatives=false", "text_only=off")
    assert DraftRun.objects.filter(pipeline="egoexobench_checks").count() == 0


# ----------------------------------------------------------------------------- the commit


@pytest.mark.django_db
def test_the_commit_writes_nothing_when_a_pair_changed_since_it_was_checked(project):
    from annotator.qa.models import WorkUnit

    video = Video.objects.create(
        project=project, sha256="0" * 64, filename="v.mp4", duration_s=10.0, status=Video.Status.READY
    )
    unit = WorkUnit.objects.create(project=project, video=video, start_s=0.0, end_s=10.0)
    qa_type = ensure_qa_type(project, "object_recognition")
    a, b = (
        QAPair.objects.create(
            project=project,
            unit=unit,
            video=video,
            qa_type=qa_type,
            origin="machine",
            question=f"Q{i}?",
            answer="x",
            clip_start_s=0.0,
            clip_end_s=10.0,
        )
        for i in (1, 2)
    )
    QAPair.objects.filter(pk=b.pk).update(version=2)  # someone changed b after the checks read it
    with pytest.raises(Conflict, match=f"^QA pair {b.pk} changed since the checks read it"):
        EgoExoBenchChecks._commit(None, [_Change(a.pk, 1, flags=["bad"]), _Change(b.pk, 1, drop="text only")], "m")
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.flag_reason, b.status, Revision.objects.count()) == ("", QAPair.Status.DRAFT, 0)


# ----------------------------------------------------------------------------- pure parts


@pytest.mark.parametrize("n,k", [(4, 3), (4, 10), (3, 10), (2, 3), (5, 1)])
def test_text_only_shuffles_are_distinct_and_move_the_answer_through_every_position(n, k):
    shuffles = text_only_shuffles(n, 1, k, "base")
    orders = [tuple(o) for _, o in shuffles]
    assert len(orders) == min(k, math.factorial(n)) and len(set(orders)) == len(orders)
    assert all(sorted(o) == list(range(n)) for o in orders)
    for start in range(0, len(orders), n):
        positions = [o.index(1) for o in orders[start : start + n]]
        assert len(set(positions)) == len(positions)
    assert shuffles == text_only_shuffles(n, 1, k, "base")  # the same seeds give the same orders
    assert len({seed for seed, _ in shuffles}) == len(shuffles)


def test_candidates_that_paraphrase_the_answer_or_each_other_are_left_out():
    vectors = {
        "answer": [1.0, 0.0, 0.0],
        "same meaning": [0.99, 0.141, 0.0],
        "close": [0.8, 0.6, 0.0],
        "close twin": [0.79, 0.613, 0.0],
        "far": [0.1, -0.995, 0.0],
        "middle": [0.5, 0.0, 0.866],
    }

    def encode(texts):
        v = np.array([vectors[t] for t in texts])
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    ranked = rank_candidates(
        "answer", ["far", "close", "Answer", "same meaning", "close twin", "middle", "far"], encode
    )
    assert [c.text for c in ranked] == ["close", "close twin", "middle", "far"]  # "Answer" is the answer itself
    assert [c.text for c in pick_distractors(ranked, 2, set())] == ["close", "middle"]  # the twin is a paraphrase
    assert [c.text for c in pick_distractors(ranked, 3, {"close"})] == ["close twin", "middle", "far"]
    assert len(pick_distractors(ranked, 5, set())) == 3
