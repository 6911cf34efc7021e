"""Annotation-derived QA templates (EgoExoBench, seed 001 Sec. 3.2, "Annotation-Derived QA").

Pure functions: structured annotations in, draft specs out. No model, no Django.

Annotations (from the manifest): ``description`` (str), ``objects`` (list of str), ``actions``
(list of {label, start_s, end_s}), ``counts`` (list of {what, count, at_s or null}).
Each template yields QA pairs of one QA type:

=====================  ==========================================================  ============
QA type                question                                                    clip
=====================  ==========================================================  ============
scene_description      "Describe what happens in this video."                      whole video
object_recognition     4-way multiple choice: which object appears (3 distractors  whole video
                       drawn from other videos' objects, options shuffled with a
                       recorded seed)
action_recognition     "What happens in this clip?"                                the action's range
counting               "How many <what> are there?" / "... at <t> s?"              whole, or 3 s around t
=====================  ==========================================================  ============
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

TEMPLATE_QA_TYPES = {
    "scene_description": ("Scene description", "whole"),
    "object_recognition": ("Object recognition", "whole"),
    "action_recognition": ("Action recognition", "given"),
    "counting": ("Counting", "window"),
}
COUNT_WINDOW_S = 3.0  # EgoNight's short window for static types (seed 000 Sec. 3.2)
N_OPTIONS = 4  # EgoExoBench items are 4-way (seed 001 Sec. 3.2)


@dataclass(frozen=True)
class DraftSpec:
    """A QA pair a pipeline proposes. Times in seconds; ``options[answer_index]`` is the answer.
    A non-empty ``flag`` (a model's review label and reason) makes the QA pair a model flag,
    served first in the review queue."""

    qa_type: str
    question: str
    answer: str
    clip_start_s: float
    clip_end_s: float
    source_key: str
    options: list[str] | None = None
    answer_index: int | None = None
    params: dict = field(default_factory=dict)
    flag: str = ""


def shuffled_options(correct: str, distractors: list[str], seed: int) -> tuple[list[str], int]:
    """Options in a uniformly random order drawn from ``seed``; returns (options, index of correct).

    ``random.Random(seed).shuffle`` is a Fisher-Yates shuffle, so each order is equally likely and
    the same seed always gives the same order (the shuffle is recorded by keeping the seed).
    """
    options = [correct, *distractors]
    random.Random(seed).shuffle(options)
    return options, options.index(correct)


def _clamp(t: float, duration_s: float) -> float:
    return max(0.0, min(float(t), duration_s))


def build_template_drafts(
    annotations: dict, duration_s: float, *, distractor_pool: list[str], seed: int
) -> list[DraftSpec]:
    """Draft specs for one video from its structured annotations.

    ``distractor_pool`` holds object names seen in *other* videos; the object item is skipped
    when fewer than ``N_OPTIONS - 1`` usable distractors exist. ``seed`` drives the option shuffle
    and distractor choice and is stored in each item's ``params``. Malformed entries (missing
    labels, empty or out-of-range times) are skipped, never guessed.
    """
    specs: list[DraftSpec] = []
    whole = (0.0, duration_s)
    description = (annotations.get("description") or "").strip()
    if description:
        specs.append(
            DraftSpec(
                "scene_description",
                "Describe what happens in this video.",
                description,
                *whole,
                source_key="description",
            )
        )

    objects = [o.strip() for o in annotations.get("objects") or [] if isinstance(o, str) and o.strip()]
    own = {o.lower() for o in objects}
    pool = sorted({d for d in distractor_pool if d.lower() not in own})
    if objects and len(pool) >= N_OPTIONS - 1:
        rng = random.Random(seed)
        correct = rng.choice(objects)
        distractors = rng.sample(pool, N_OPTIONS - 1)
        options, index = shuffled_options(correct, distractors, seed)
        specs.append(
            DraftSpec(
                "object_recognition",
                "Which of these objects appears in the video?",
                correct,
                *whole,
                source_key="objects",
                options=options,
                answer_index=index,
                params={"shuffle_seed": seed},
            )
        )

    for i, action in enumerate(annotations.get("actions") or []):
        label = (action.get("label") or "").strip() if isinstance(action, dict) else ""
        if not label:
            continue
        start = _clamp(action.get("start_s", 0.0), duration_s)
        end = _clamp(action.get("end_s", duration_s), duration_s)
        if end <= start:
            continue
        specs.append(
            DraftSpec("action_recognition", "What happens in this clip?", label, start, end, source_key=f"action-{i}")
        )

    for i, count in enumerate(annotations.get("counts") or []):
        if not isinstance(count, dict) or not str(count.get("what") or "").strip():
            continue
        if not isinstance(count.get("count"), int):
            continue
        what = str(count["what"]).strip()
        at = count.get("at_s")
        if at is None:
            question, clip = f"How many {what} are there?", whole
        else:
            at = _clamp(at, duration_s)
            half = COUNT_WINDOW_S / 2
            start, end = max(0.0, at - half), min(duration_s, at + half)
            question, clip = f"How many {what} are there at {at:.1f} s?", (start, end)
        specs.append(DraftSpec("counting", question, str(count["count"]), *clip, source_key=f"count-{i}"))
    return specs
