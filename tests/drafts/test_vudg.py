"""The VUDG multi-expert cascade (seed 004 Sec. 3.2 and App. J) end to end on real footage, with
the real worker and the loopback model server: the category quota, App. J.2's distractor rules and
the recorded shuffle, review flags served first, resume at the failed stage, the cache, and a stage
routed to a second server. The pure checks come first, without a database."""

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.drafts.models import Draft, DraftJob, DraftRun
from annotator.drafts.pipelines import vudg
from annotator.drafts.templates import shuffled_options
from annotator.inference import engine
from annotator.inference.models import ModelCall, ModelServer
from annotator.media.models import Video
from annotator.qa import queue, selectors
from annotator.qa.models import QAPair, QAType, QueueItem
from annotator.qa.services import FLAGGED_PRIORITY
from tests.conftest import make_video
from tests.drafts.conftest import numbered, run_draft
from tests.fake_model_server import FakeModelServer, n_images, user_text

# Model A's five items, in a scrambled order (the pipeline puts them in Q1..Q5 order).
OPEN_ITEMS = [
    {
        "category": "temporal",
        "question": "What happens first in the video?",
        "answer": "A cyclist enters from the left.",
    },
    {"category": "action", "question": "What does the person in the centre do?", "answer": "Rides a bicycle."},
    {"category": "attribute", "question": "What colour is the nearest bicycle?", "answer": "Red."},
    {
        "category": "temporal",
        "question": "What happens after the first cyclist passes?",
        "answer": "A second cyclist follows.",
    },
    {"category": "object", "question": "What does the rider hold?", "answer": "A handlebar."},
]
Q1_TO_Q5 = [OPEN_ITEMS[i] for i in (1, 2, 4, 0, 3)]
# Model B's distractors per question: clearly different, none shorter than needed (J.2 rules).
DISTRACTORS = {
    "What does the person in the centre do?": [
        "Walks a small dog.",
        "Pushes a pram.",
        "Carries a box.",
        "Jogs past.",
        "Waves at a car.",
    ],
    "What colour is the nearest bicycle?": ["Blue.", "Green.", "Yellow.", "Black.", "White."],
    "What does the rider hold?": ["A phone.", "A coffee cup.", "An umbrella.", "A leash.", "A newspaper."],
    "What happens first in the video?": [
        "A bus stops in front of the building.",
        "A dog runs across the road.",
        "The lights turn green.",
        "A door opens.",
        "A car parks on the right.",
    ],
    "What happens after the first cyclist passes?": [
        "A bus drives past the cyclist.",
        "Everyone stops at once.",
        "The first cyclist turns back.",
        "A pedestrian crosses.",
        "It starts to rain heavily.",
    ],
}


def _field(body: dict, name: str) -> str:
    return re.search(rf"^{name}: (.*)$", user_text(body), flags=re.MULTILINE).group(1)


def good_distractors(body: dict) -> dict:
    return {"correct": _field(body, "Answer"), "distractors": DISTRACTORS[_field(body, "Question")]}


def reviews(body: dict, labels: dict[int, tuple[str, str, str]] | None = None) -> dict:
    """Every numbered item labelled correct, but those in ``labels`` (n -> (label, reason, suggestion))."""
    labels = labels or {}
    out = []
    for n, _ in enumerate(numbered(body), 1):
        label, reason, suggestion = labels.get(n, ("correct", "", ""))
        out.append({"item": n, "label": label, "reason": reason, "suggested_answer": suggestion})
    return {"reviews": out}


def _duration_in(body: dict) -> float:
    return float(re.search(r"whole video \(([\d.]+) s\)", user_text(body)).group(1))


# ----------------------------------------------------------------------------- the pure checks


def _options(correct, *distractors):
    return {"correct": correct, "distractors": list(distractors)}


@pytest.mark.parametrize(
    "reply",
    [
        _options("Red.", "Blue.", "Green.", "Yellow.", "Black.", "White."),
        _options("Rides a bike", "Walks a dog.", "Sits", "Runs", "Jumps", "Waves"),  # a tie in length passes
        _options("Red", "Reddish", "Bluish", "Green", "Tan", "Grey"),  # "red" is not a whole word of "reddish"
    ],
)
def test_options_that_keep_the_j2_rules_pass(reply):
    assert vudg.check_distractors(reply, {}) is None


@pytest.mark.parametrize(
    "reply, rule, detail",
    [
        (
            _options("The bicycle is red.", "Blue.", "Green.", "Yellow.", "Black.", "White."),
            vudg.RULE_LONGEST,
            "the correct option has 19 characters, every distractor fewer (longest 7)",
        ),
        (
            _options("  Red.  ", "Blu", "Grn", "Yel", "Blk", "  Whi  "),
            vudg.RULE_LONGEST,
            "the correct option has 4 characters, every distractor fewer (longest 3)",
        ),  # trimmed before counting
        (
            _options("Red.", "RED!", "Green.", "Yellow.", "Black.", "White."),
            vudg.RULE_DISTINCT,
            "the correct option and distractor 1 are the same once case, spaces and punctuation are ignored ('Red.', 'RED!')",
        ),
        (
            _options("A red car", "Blue.", "a  red, car", "Yellow.", "Black.", "White."),
            vudg.RULE_DISTINCT,
            "the correct option and distractor 2 are the same",
        ),
        (
            _options("Red.", "Blue.", "Bright red.", "Yellow.", "Black.", "White."),
            vudg.RULE_DISTINCT,
            "the correct option 'Red.' is contained in distractor 2 'Bright red.'",
        ),
        (
            _options("Red.", "Blue.", "Green.", "...", "Black.", "White."),
            vudg.RULE_DISTINCT,
            "distractor 3 has no letters or digits",
        ),
    ],
)
def test_options_that_break_a_j2_rule_are_malformed_and_name_the_rule(reply, rule, detail):
    with pytest.raises(engine.MalformedModelOutput) as caught:
        vudg.check_distractors(reply, {})
    assert str(caught.value).startswith(f"{rule}: {detail}")


def test_the_shuffle_seed_depends_on_the_video_and_the_item_only():
    assert vudg.shuffle_seed("ab" * 32, 0) == 0x50B73E59D5B11547  # the first 8 bytes of SHA-256("abab...ab:0")
    assert vudg.shuffle_seed("ab" * 32, 0) != vudg.shuffle_seed("ab" * 32, 1) != vudg.shuffle_seed("cd" * 32, 1)


# ----------------------------------------------------------------------------- end to end


def _ingest(path, manifest_dir, **meta):
    manifest = manifest_dir / f"{path.stem}.jsonl"
    manifest.write_text(json.dumps({"file": path.name, "illumination": "day", **meta}) + "\n")
    call_command("ingest", str(path), "--project", "proj", "--manifest", str(manifest), "--wait", stdout=StringIO())
    return Video.objects.get(filename=path.name, status=Video.Status.READY)


@pytest.fixture
def bikes(worker, project, real_video, tmp_path):
    """bikes.mp4 (10 s of real footage) ingested into project ``proj`` by the real worker."""
    return _ingest(real_video, tmp_path, domain="street")


@pytest.fixture
def cascade(model_server, project):
    """Server ``a`` (model fake-a) on the loopback server, answering every stage well."""
    ModelServer.objects.create(
        project=project,
        name="a",
        base_url=model_server.base_url,
        model="fake-a",
        price_prompt_per_mtok=1.0,
        price_completion_per_mtok=4.0,
    )
    model_server.responders["vudg_open"] = lambda body: {"items": OPEN_ITEMS}
    model_server.responders["vudg_distractors"] = good_distractors
    model_server.responders["vudg_review"] = lambda body: reviews(body)
    return model_server


def _vudg(*extra):
    code, out, err = run_draft(
        "--project", "proj", "--pipeline", "vudg", "--server", "a", "--param", "frames=4", "--json", *extra
    )
    return code, json.loads(out) if out else None, err


@pytest.mark.django_db(transaction=True)
def test_a_reply_that_breaks_the_category_quota_is_retried_and_five_items_are_saved_in_q_order(bikes, cascade):
    replies = iter(
        [
            {
                "items": [
                    OPEN_ITEMS[1],
                    {**OPEN_ITEMS[1], "question": "What does the rider do next?"},
                    OPEN_ITEMS[2],
                    OPEN_ITEMS[4],
                    OPEN_ITEMS[0],
                ]
            }
        ]
    )  # two actions, one temporal
    cascade.responders["vudg_open"] = lambda body: next(replies, {"items": OPEN_ITEMS})
    code, report, err = _vudg()
    assert code == 0, err
    assert report["status"] == "done" and report["drafts"] == 5
    assert report["summary"] == {"items": 5, "correct": 5, "fixable": 0, "invalid": 0, "distractor_retries": 0}
    assert {s: (c["calls"], c["errors"]) for s, c in report["calls"].items()} == {
        "vudg_open": (2, 1),
        "vudg_distractors": (5, 0),
        "vudg_review": (1, 0),
    }
    first, second = ModelCall.objects.filter(stage="vudg_open").order_by("id")
    assert first.error == (
        "malformed: the category quota (seed 004 Sec. 3.2) is 1 action, 1 attribute, 1 object, "
        "2 temporal; got 2 action, 1 attribute, 1 object, 1 temporal"
    )
    assert first.output is None and (second.error, second.attempt) == ("", 2)

    for stage in vudg.Vudg.stages:  # strict structured output; frames for model A and model C only
        body = cascade.calls_of(stage)[0]
        assert (
            body["response_format"]["json_schema"]["name"] == stage and body["response_format"]["json_schema"]["strict"]
        )
        assert body["model"] == "fake-a"
    assert [n_images(b) for b in cascade.calls_of("vudg_open")] == [4, 4]
    assert [n_images(b) for b in cascade.calls_of("vudg_distractors")] == [0] * 5
    assert n_images(cascade.calls_of("vudg_review")[0]) == 4
    assert "at 1.25 s, 3.75 s, 6.25 s, 8.75 s" in user_text(cascade.calls_of("vudg_open")[0])  # evenly, whole video

    drafts = list(Draft.objects.order_by("id"))
    assert [(d.source_key, d.qa_type, d.question) for d in drafts] == [
        ("q1-action", "vudg_action", Q1_TO_Q5[0]["question"]),
        ("q2-attribute", "vudg_attribute", Q1_TO_Q5[1]["question"]),
        ("q3-object", "vudg_object", Q1_TO_Q5[2]["question"]),
        ("q4-temporal", "vudg_temporal", Q1_TO_Q5[3]["question"]),
        ("q5-temporal", "vudg_temporal", Q1_TO_Q5[4]["question"]),
    ]
    assert all((d.clip_start_s, d.clip_end_s) == (0.0, bikes.duration_s) for d in drafts)
    assert set(QAType.objects.filter(project__slug="proj").values_list("slug", "clip_policy", "paired")) == {
        ("vudg_action", "whole", False),
        ("vudg_attribute", "whole", False),
        ("vudg_object", "whole", False),
        ("vudg_temporal", "whole", False),
    }
    assert QAPair.objects.filter(unit__video=bikes).count() == 5
    assert not QAPair.objects.exclude(flag_reason="").exists()


@pytest.mark.django_db(transaction=True)
def test_distractors_that_break_j2_rules_are_recorded_and_retried_and_the_shuffle_is_recorded(bikes, cascade, settings):
    settings.LLM_MAX_ATTEMPTS = 4  # three breaches, then a good answer
    attribute = "What colour is the nearest bicycle?"
    bad = iter(
        [
            {"correct": "The bicycle is red.", "distractors": ["Blue.", "Green.", "Yellow.", "Black.", "White."]},
            {"correct": "Red.", "distractors": ["RED!", "Green.", "Yellow.", "Black.", "White."]},
            {"correct": "Red.", "distractors": ["Blue.", "Dark red.", "Yellow.", "Black.", "White."]},
        ]
    )

    def distractors(body):
        if _field(body, "Question") == attribute:
            return next(bad, None) or good_distractors(body)
        return good_distractors(body)

    cascade.responders["vudg_distractors"] = distractors
    code, report, err = _vudg()
    assert code == 0, err
    assert report["summary"]["distractor_retries"] == 3
    calls = list(ModelCall.objects.filter(stage="vudg_distractors", request__item=2).order_by("id"))
    assert [c.error for c in calls] == [
        (
            f"malformed: {vudg.RULE_LONGEST}: the correct option has 19 characters, every distractor fewer "
            "(longest 7); shorten the correct option or lengthen a distractor"
        ),
        (
            f"malformed: {vudg.RULE_DISTINCT}: the correct option and distractor 1 are the same once case, spaces "
            "and punctuation are ignored ('Red.', 'RED!')"
        ),
        f"malformed: {vudg.RULE_DISTINCT}: the correct option 'Red.' is contained in distractor 2 'Dark red.'",
        "",
    ]
    assert [c.attempt for c in calls] == [1, 2, 3, 4]
    assert calls[0].raw_output == json.dumps(
        {"correct": "The bicycle is red.", "distractors": ["Blue.", "Green.", "Yellow.", "Black.", "White."]}
    )

    pair = QAPair.objects.get(question=attribute)
    seed = vudg.shuffle_seed(bikes.sha256, 1)
    expected, index = shuffled_options("Red.", DISTRACTORS[attribute], seed)
    assert len(pair.options) == 6 and pair.options == expected and pair.answer_index == index
    assert pair.options[pair.answer_index] == pair.answer == "Red."
    assert pair.draft.params["shuffle_seed"] == seed and pair.draft.params["open_answer"] == "Red."
    orders = {q: (p, i) for q, p, i in QAPair.objects.values_list("question", "options", "answer_index")}
    assert {i for _, i in orders.values()} != {0}  # the correct option is not always first

    # The same seed gives the same order: a rerun (answers from the cache) saves the very same items.
    code, again, err = _vudg()
    assert code == 0, err
    reran = QAPair.objects.filter(draft__job__run_id=again["run"])
    assert {q: (p, i) for q, p, i in reran.values_list("question", "options", "answer_index")} == orders
    # ...and the review model saw the shuffled options with the marked letter.
    listed = user_text(cascade.calls_of("vudg_review")[0])
    assert f"   {'ABCDEF'[index]}) Red.\n" in listed and f"Marked answer: {'ABCDEF'[index]}" in listed


@pytest.fixture
def two_videos(bikes, tmp_path):
    """bikes.mp4 and a later 3 s test-pattern clip, both ready in project ``proj``."""
    short = _ingest(make_video(tmp_path / "pattern.mp4", seconds=3.0), tmp_path, domain="synthetic")
    assert short.pk > bikes.pk
    return bikes, short


@pytest.mark.django_db(transaction=True)
def test_fixable_and_invalid_items_reach_the_review_queue_first_with_label_and_reason(
    two_videos, cascade, annotator, annotator2, settings
):
    bikes, short = two_videos
    settings.DRAFT_RUN_MAX_THREADS = 1  # videos in id order: the flagged unit is the newer one
    flagged = {
        2: ("fixable", "The nearest bicycle is blue.", "Blue."),
        5: ("invalid", "Only one cyclist is visible.", ""),
    }
    cascade.responders["vudg_review"] = lambda body: reviews(body, flagged if _duration_in(body) < 5 else None)
    code, report, err = _vudg()
    assert code == 0, err
    assert report["summary"] == {"items": 10, "correct": 8, "fixable": 1, "invalid": 1, "distractor_retries": 0}
    plain, marked = bikes.units.get(), short.units.get()
    assert plain.pk < marked.pk  # by id alone, the unit with only correct items would come first

    item = queue.claim_next(bikes.project, annotator)
    assert item.unit_id == marked.pk and item.kind == QueueItem.Kind.FIRST_PASS and item.priority == FLAGGED_PRIORITY
    shown = {p["question"]: p["flag"] for p in selectors.unit_payload(item, annotator)["qa_pairs"]}
    actor = QAPair.objects.filter(unit=marked).exclude(flag_source="").values_list("flag_source", flat=True).first()
    assert actor.startswith(f"vudg/fake-a/run-{report['run']}")
    assert shown == {
        Q1_TO_Q5[0]["question"]: None,
        Q1_TO_Q5[1]["question"]: {
            "reason": "fixable: The nearest bicycle is blue. (suggested answer: Blue.)",
            "source": actor,
        },
        Q1_TO_Q5[2]["question"]: None,
        Q1_TO_Q5[3]["question"]: None,
        Q1_TO_Q5[4]["question"]: {"reason": "invalid: Only one cyclist is visible.", "source": actor},
    }
    assert QAPair.objects.get(unit=marked, question=Q1_TO_Q5[1]["question"]).draft.params["review"] == {
        "label": "fixable",
        "reason": "The nearest bicycle is blue.",
        "suggested_answer": "Blue.",
    }

    nxt = queue.claim_next(bikes.project, annotator2)  # the correct items: the normal first pass
    assert nxt.unit_id == plain.pk and nxt.priority == 0
    assert not QAPair.objects.filter(unit=plain).exclude(flag_reason="").exists()


@pytest.mark.django_db(transaction=True)
def test_a_run_that_failed_at_review_resumes_there_and_a_rerun_costs_nothing(bikes, cascade, settings):
    settings.LLM_MAX_ATTEMPTS = 2
    cascade.fail_next("malformed", stage="vudg_review", n=2)
    code, report, _ = _vudg()
    assert code == 1 and report["status"] == "failed"
    assert report["failures"] == [
        {
            "video": "bikes.mp4",
            "stage": "vudg_review",
            "error": "no usable answer in 2 attempts; last: malformed: not JSON: "
            "Expecting value: line 1 column 13 (char 12)",
        }
    ]
    assert QAPair.objects.count() == 0 and Draft.objects.count() == 0  # nothing half-written
    run = DraftRun.objects.get()
    before = len(cascade.requests)

    code, out, err = run_draft("--project", "proj", "--resume", str(run.pk), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "done" and report["drafts"] == 5
    assert cascade.stages[before:] == ["vudg_review"]  # model A and model B came from the cache
    assert {s: c["cache_hits"] for s, c in report["calls"].items()} == {
        "vudg_open": 1,
        "vudg_distractors": 5,
        "vudg_review": 0,
    }

    before = len(cascade.requests)
    code, again, _ = _vudg()
    assert code == 0
    assert len(cascade.requests) == before  # unchanged inputs: no request at all
    assert again["cost_usd"] == 0 and {s: c["cache_hits"] for s, c in again["calls"].items()} == {
        "vudg_open": 1,
        "vudg_distractors": 5,
        "vudg_review": 1,
    }
    assert DraftJob.objects.get(run_id=again["run"]).status == DraftJob.Status.DONE and again["drafts"] == 5


@pytest.mark.django_db(transaction=True)
def test_a_stage_server_routes_review_to_a_second_server(bikes, cascade, project):
    other = FakeModelServer()
    try:
        other.responders["vudg_review"] = lambda body: reviews(body)
        ModelServer.objects.create(project=project, name="other", base_url=other.base_url, model="fake-c")
        code, report, err = _vudg("--stage-server", "vudg_review=other")
        assert code == 0, err
        assert cascade.stages == ["vudg_open"] + ["vudg_distractors"] * 5
        assert {b["model"] for b in cascade.requests} == {"fake-a"}
        assert other.stages == ["vudg_review"] and other.requests[0]["model"] == "fake-c"
        assert n_images(other.requests[0]) == 4
        assert {s: v["server"] for s, v in report["servers"].items()} == {
            "vudg_open": "a",
            "vudg_distractors": "a",
            "vudg_review": "other",
        }
        assert set(ModelCall.objects.values_list("stage", "model")) == {
            ("vudg_open", "fake-a"),
            ("vudg_distractors", "fake-a"),
            ("vudg_review", "fake-c"),
        }
        assert DraftRun.objects.get().model == "fake-a, fake-c"
    finally:
        other.close()


@pytest.mark.django_db
def test_bad_parameters_are_refused_in_plain_words_and_start_nothing(project):
    ModelServer.objects.create(project=project, name="a", base_url="http://127.0.0.1:9/v1", model="fake-a")
    with pytest.raises(CommandError, match=r"^frames must be a whole number from 1 to 32$"):
        run_draft("--project", "proj", "--pipeline", "vudg", "--server", "a", "--param", "frames=0")
    with pytest.raises(
        CommandError, match=r"^the vudg pipeline drafts all four VUDG categories .* it takes no QA type$"
    ):
        run_draft("--project", "proj", "--pipeline", "vudg", "--server", "a", "--qa-type", "vudg_action")
    assert DraftRun.objects.count() == 0 and QAType.objects.count() == 0
