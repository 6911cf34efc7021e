"""Timed multiple choice (EgoExoBench human performance, seed 001 Sec. 4 and App. A.5): the person
sees what a model sees (the question, the options, the clip or clips, replay allowed) under a time
limit (the paper: 60 s "quick", 180 s "deliberate"), and picks one option; accuracy per subtask.

Items come from verified QA pairs with options, ``per_type`` per QA type (30 in the paper), drawn
with the study's seed. Each item's options are shuffled once from its recorded seed, so the right
option's place says nothing (drafting pipelines often put it first); the same QA pair has the same
shuffle in every condition, and ``key`` keeps one person from getting it twice. Evaluators are
independent by default (``DEFAULTS``): nobody who built the QA pairs takes part.

Item ``payload``: ``question``, ``options`` (shown order), ``layout`` and ``media`` (the QA pair's
stimulus with its clips, ``_qa.render``: every view, labelled video or life-log segment).
``truth``: the right option's index in the shown order. Response (API and predictions): an option
index, 0-based, in the shown order (``study_items`` lists the options in that order).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

import numpy as np

from annotator.errors import Invalid
from annotator.studies.kinds import BuildReport, ScoreRow, _qa

METRICS = ("accuracy",)

# What the pages call this kind (what a participant reads first is ``instructions``), and the
# dashboard's bar charts: (metric, name, axis title with its unit, axis min, axis max).
TITLE = "timed multiple choice"
PLOTS = (("accuracy", "Accuracy", "Accuracy (share of questions right, 0–1)", 0, 1),)
PRIMARY = "accuracy"
DEFAULTS = {"independent": True}
PRESETS = {
    "egoexobench-human": {
        "per_type": 30,
        "time_limits": [60, 180],
        "independent": True,
        "conditions_per_participant": 1,
        "questions_per_participant": 60,
        "practice_items": 2,
        "attention_items": 2,
        "exclusion": {"max_attention_failures": 0},
    }
}
LIMIT_LABELS = {60.0: "quick", 180.0: "deliberate"}
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def instructions(f) -> str:
    """What a participant reads before the first item (Markdown), from the study's ``Facts``
    (``studies.instructions``): clips, keys, time limits, practice, attention items."""
    from annotator.studies.instructions import practice_line, time_limit_line

    about = "about one or more video clips " if f.clips else ""
    text = f"You will see a question {about}with several options. Pick the one right option.\n\n"
    if f.clips:
        text += "- Play the clips as often as you like before you answer.\n"
    text += "- Press **1**-**9** or **A**-**Z**, or click, to choose; **Enter** answers.\n"
    text += time_limit_line(f)
    if f.attention:
        text += "- A few questions check that you read carefully: they say which option to choose.\n"
    return text + practice_line(f, "the right option")


def option_seed(study_seed: int, qa_pair_id: int) -> int:
    """The recorded shuffle seed of a QA pair's options: 48 bits of SHA-256 of (study seed, pair)."""
    return int(hashlib.sha256(f"{study_seed}:mcq:{qa_pair_id}".encode()).hexdigest()[:12], 16)


def shuffled(options: list[str], answer_index: int, seed: int) -> tuple[list[str], int]:
    """The options in the order drawn from ``seed`` (``random.Random(seed).shuffle``, uniform) and the
    right option's index in that order."""
    order = list(range(len(options)))
    random.Random(seed).shuffle(order)
    return [options[i] for i in order], order.index(answer_index)


def build(study, options: dict, progress: Callable[[str], None]) -> BuildReport:
    """Conditions (one per ``time_limits`` entry, seconds) and items from the project's verified
    QA pairs with options: ``per_type`` per QA type (all if unset), each in every condition; then
    ``practice_items`` practice items from pairs not drawn (condition 1), and ``attention_items``
    instructed items ("choose option C"). Raises Invalid for bad options."""
    from annotator.qa.models import QAPair
    from annotator.studies.models import Item

    conditions = _qa.time_limit_conditions(study, options.get("time_limits"), LIMIT_LABELS)
    pool = _qa.qa_pool(
        study,
        QAPair.objects.filter(project=study.project, status=QAPair.Status.VERIFIED, options__isnull=False),
        options,
    )
    sampled = _qa.sample_pairs(study, pool, options.get("per_type"))
    drawn = {p.pk for pairs in sampled.values() for p in pairs}
    practice_pairs = list(
        pool.exclude(pk__in=drawn)
        .select_related("qa_type", "unit__group", "video")
        .order_by("id")[: study.practice_items]
    )
    report = BuildReport()
    everything = [p for pairs in sampled.values() for p in pairs] + practice_pairs
    kept, shown = _qa.render(everything, report, progress)
    kept_ids = {p.pk for p in kept}
    sampled = {slug: [p for p in pairs if p.pk in kept_ids] for slug, pairs in sampled.items()}
    practice_pairs = [p for p in practice_pairs if p.pk in kept_ids]

    def make(cond, index, pair, role):
        opts, right = shuffled(list(pair.options), pair.answer_index, option_seed(study.seed, pair.pk))
        return Item.objects.create(
            condition=cond,
            index=index,
            role=role,
            subtask=pair.qa_type.slug,
            key=f"qa:{pair.pk}",
            qa_pair=pair,
            footage_id=pair.video.derived_from_id or pair.video_id,
            seed=option_seed(study.seed, pair.pk),
            payload={"question": pair.question, "options": opts, **shown[pair.pk]},
            truth=right,
        )

    for cond in conditions:
        index = 0
        for pairs in sampled.values():
            for pair in pairs:
                make(cond, index, pair, Item.Role.SCORED)
                index += 1
        report.items[cond.number] = index
        progress(f"  condition {cond.number} ({cond.label}): {index} items")
    base = report.items.get(1, 0)
    for j, pair in enumerate(practice_pairs):
        make(conditions[0], base + j, pair, Item.Role.PRACTICE)
    report.practice = len(practice_pairs)
    n_attention = int(options.get("attention_items") or 0)
    if not 0 <= n_attention <= 20:
        raise Invalid("attention_items must be between 0 and 20")
    rng = random.Random(f"{study.seed}:attention")
    for j in range(n_attention):
        n = rng.randint(3, 5)
        right = rng.randrange(n)
        Item.objects.create(
            condition=conditions[0],
            index=base + len(practice_pairs) + j,
            role=Item.Role.ATTENTION,
            key=f"attention:{j}",
            seed=0,
            truth=right,
            payload={
                "question": f"This question checks that you read carefully: choose option {LETTERS[right]}.",
                "options": [f"Option {LETTERS[i]}" for i in range(n)],
                "media": [],
            },
        )
    report.attention = n_attention
    return report


def payload(trial) -> dict:
    """``question``, ``options`` (``[{"letter": "A", "text": ...}]`` in the shown order) and
    ``videos`` (``_qa.media_payload``) with their ``video_layout``. No correctness."""
    p = trial.item.payload
    return {
        "question": p["question"],
        "options": [{"letter": LETTERS[i], "text": t} for i, t in enumerate(p["options"])],
        "videos": _qa.media_payload(trial.item),
        "video_layout": _qa.video_layout(trial.item),
    }


def _index(value, n: int, exc=Invalid):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
        message = f"the answer must be an option index from 0 to {n - 1}"
        raise exc(message, errors={"response": message}) if exc is Invalid else exc(message)
    return value


def validate(trial, response) -> int:
    """``response``: the chosen option's index (0-based, in the shown order). Raises Invalid otherwise."""
    return _index(response, len(trial.item.payload["options"]))


def validate_prediction(item, predicted) -> int:
    """A model's chosen option index (0-based, in the order ``study_items`` lists). Raises ValueError."""
    return _index(predicted, len(item.payload["options"]), ValueError)


def score(rows: list[ScoreRow]) -> list[dict]:
    """``accuracy``: 1.0 for the right option in time, else 0.0 (a timed-out or missing answer is
    wrong: EgoExoBench counts unanswered questions as wrong). Vectorised over the rows."""
    if not rows:
        return []
    chosen = np.array([-1 if r.response is None or r.timed_out else r.response for r in rows])
    truth = np.array([r.truth for r in rows])
    return [{"accuracy": float(v)} for v in (chosen == truth)]


def feedback(trial) -> dict:
    """Whether the practice answer was right, and the right option's letter."""
    right = trial.item.truth
    return {"correct": trial.response == right and not trial.timed_out, "truth": LETTERS[right]}


def export(item) -> dict:
    """Researcher fields: ``question``, ``options`` (shown order), ``answer_index`` (in that order),
    ``qa_pair_id``, ``media`` (storage names of the clips)."""
    p = item.payload
    return {
        "question": p["question"],
        "options": p["options"],
        "answer_index": item.truth,
        "qa_pair_id": item.qa_pair_id,
        "media": _qa.clip_names(p),
    }


def shows(item) -> list:
    """What a trial of ``item`` puts in front of the person (exposure ledger, issue 19): its clips,
    and its QA pair's answer among the options."""
    from annotator.exposure.ledger import OPTIONS, Shown

    return _qa.footage_shown(item.payload) + ([Shown(OPTIONS, qa_pair_id=item.qa_pair_id)] if item.qa_pair_id else [])


def needs(item):
    """What the item's truth rests on: its QA pair's answer."""
    from annotator.exposure.ledger import Needs

    return Needs(answer_of=item.qa_pair_id)


def reveals(item) -> list:
    """What a practice trial's feedback puts in front of the person (``feedback``): the right option,
    i.e. the QA pair's answer."""
    from annotator.exposure.ledger import ANSWER, Shown

    return [Shown(ANSWER, qa_pair_id=item.qa_pair_id)] if item.qa_pair_id else []
