"""VUDG's progressive multi-expert cascade (seed 004 Sec. 3.2 and App. J), one job per ready video.

Three models, so that no model validates its own output (seed 004 Sec. 3.2); each stage can be
routed to its own server (``--stage-server STAGE=NAME``):

1. ``vudg_open`` (model A; App. J.1): from frames sampled evenly over the whole video, five
   open-ended QA pairs with the category quota of Sec. 3.2: one *action*, one *attribute*, one
   *object* and two *temporal* (Q1 to Q5). ``check_open`` enforces the exact quota and non-empty
   texts; a breach is recorded and retried like bad JSON.
2. ``vudg_distractors`` (model B; App. J.2), one text-only call per item: the correct option (the
   open answer, shortened if that keeps its meaning; J.2 rule 4) and five distractors, a 6-way
   multiple-choice item. ``check_distractors`` enforces J.2's rules (see its docstring for the
   exact tests); a breach raises MalformedModelOutput naming the rule, so the call is recorded and
   retried. The six options are then shuffled with ``templates.shuffled_options`` from a seed
   derived from the video's SHA-256 and the item's index (``shuffle_seed``), so a rerun gives the
   same order; the seed is stored in the draft's ``params``.
3. ``vudg_review`` (model C; App. J.3): one call with the same frames reviews every finished
   (shuffled) item and labels it ``correct``, ``fixable`` (the question is sound, the marked answer
   or an option is not; it may suggest the right answer) or ``invalid`` (asks about something the
   video does not show, or cannot be decided from it), each with a reason. Fixable and invalid
   items are saved as model flags (``DraftSpec.flag`` = ``"<label>: <reason>"``, plus the
   suggested answer when one was given): their unit is served first in the review queue with the
   label and reason (``qa.services.flag_qa_pair``). Correct items go to the normal first pass.

QA types: one per VUDG category, whole-video clips, created by ``clean_params`` with
``ensure_qa_type`` when the project lacks them (an admin's existing type of the same slug is kept):
``vudg_action``, ``vudg_attribute``, ``vudg_object``, ``vudg_temporal``.

Each draft's ``params``: ``category``, ``open_answer`` (model A's answer, before model B's wording),
``shuffle_seed``, ``review`` (``{"label", "reason", "suggested_answer"}``), ``frame_times_s``.

The job's summary: ``items`` (drafts written), ``correct``, ``fixable``, ``invalid`` (review
labels) and ``distractor_retries`` (failed ``vudg_distractors`` attempts recorded on this job,
rule breaches and transport errors alike; 0 when every answer came from the cache).

Parameters: ``frames`` (frames per video, 1-32, default ``LLM_FRAMES``), ``cache`` (bool).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections import Counter

from django.conf import settings

from annotator.adapters import ffmpeg
from annotator.drafts.pipelines.base import JobContext, PipelineDef, Result, register, require
from annotator.drafts.templates import DraftSpec, shuffled_options
from annotator.inference import engine
from annotator.inference.models import ModelCall
from annotator.qa.services import ensure_qa_type

MAX_CHARS = 2000
N_DISTRACTORS = 5  # a 6-way item (seed 004 Sec. 3.2, "five plausible but incorrect options")
LETTERS = "ABCDEF"

# The category quota per video (seed 004 Sec. 3.2: one question for each of categories (1)-(3) and
# two for category (4)), in the paper's Q1..Q5 order.
QUOTA = {"action": 1, "attribute": 1, "object": 1, "temporal": 2}
CATEGORY_ORDER = tuple(QUOTA)
# The descriptions are what annotators read (on the verify page): plain words, no paper references
# (issue 21); the categories are seed 004 Sec. 3.2 (1)-(4), in this order.
QA_TYPES = {
    "action": (
        "vudg_action",
        "VUDG action recognition",
        "Recognise the action occurring at a specific time point in the video.",
    ),
    "attribute": (
        "vudg_attribute",
        "VUDG attribute identification",
        "Visual attributes of simple objects: colour, shape, position and the like.",
    ),
    "object": (
        "vudg_object",
        "VUDG object identification",
        "Recognise, describe or give the role of a specific object.",
    ),
    "temporal": (
        "vudg_temporal",
        "VUDG temporal understanding",
        "The order of events: what happens before or after a given action.",
    ),
}
LABELS = ("correct", "fixable", "invalid")

RULE_LONGEST = "J.2 rule 'the correct option must not be the longest'"
RULE_DISTINCT = "J.2 rule 'options must differ clearly in meaning'"


def _obj(**props) -> dict:
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


def _text_ok(value: str) -> bool:
    return bool(value.strip()) and len(value) <= MAX_CHARS


# ----------------------------------------------------------------------------- checks (pure)


def check_open(out: dict, ctx: dict) -> None:
    """Model A's answer: exactly the quota of ``QUOTA`` (1 action, 1 attribute, 1 object,
    2 temporal; seed 004 Sec. 3.2), every question and answer a non-empty text of at most
    ``MAX_CHARS`` characters. Raises MalformedModelOutput saying what is wrong."""
    got = Counter(item["category"] for item in out["items"])
    if got != Counter(QUOTA):
        want = ", ".join(f"{n} {c}" for c, n in QUOTA.items())
        have = ", ".join(f"{got.get(c, 0)} {c}" for c in QUOTA)
        raise engine.MalformedModelOutput(f"the category quota (seed 004 Sec. 3.2) is {want}; got {have}")
    for i, item in enumerate(out["items"], 1):
        if not (_text_ok(item["question"]) and _text_ok(item["answer"])):
            raise engine.MalformedModelOutput(
                f"item {i}: question and answer must be non-empty texts of at most {MAX_CHARS} characters"
            )


def normalised(option: str) -> str:
    """``option`` for comparing meanings: case folded, every Unicode punctuation character
    (category P*) turned into a space, runs of whitespace collapsed to one space, trimmed."""
    text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in option.casefold())
    return " ".join(text.split())


def check_distractors(out: dict, ctx: dict) -> None:
    """Model B's answer against App. J.2's rules; raises MalformedModelOutput naming the rule.

    - Shape: a non-empty ``correct`` option and exactly ``N_DISTRACTORS`` (5) non-empty
      distractors, each at most ``MAX_CHARS`` characters.
    - ``RULE_DISTINCT`` (J.2 rules 2 and 5, "significant" semantic differences): with
      ``normalised`` options (case, whitespace and punctuation ignored), no option is empty, no two
      are equal, and none is contained in another as a whole-word run (``" a "`` in ``" b "`` with
      both padded by a space: "red" is contained in "bright red" but not in "reddish").
    - ``RULE_LONGEST`` (J.2 rule 4, "Avoid making the correct option the longest one"), strictly:
      the correct option's length in characters (Python ``len``, after trimming outer
      whitespace) must not exceed that of the longest distractor, i.e. at least one distractor is
      at least as long. A tie passes.
    """
    correct, distractors = out["correct"], out["distractors"]
    if len(distractors) != N_DISTRACTORS:
        raise engine.MalformedModelOutput(
            f"a 6-way item needs exactly {N_DISTRACTORS} distractors, got {len(distractors)}"
        )
    options = [correct, *distractors]
    if not all(_text_ok(o) for o in options):
        raise engine.MalformedModelOutput(f"every option must be a non-empty text of at most {MAX_CHARS} characters")
    names = ["the correct option", *(f"distractor {i}" for i in range(1, len(distractors) + 1))]
    norms = [normalised(o) for o in options]
    for name, norm in zip(names, norms):
        if not norm:
            raise engine.MalformedModelOutput(f"{RULE_DISTINCT}: {name} has no letters or digits")
    for i in range(len(options)):
        for j in range(i + 1, len(options)):
            a, b = norms[i], norms[j]
            if a == b:
                raise engine.MalformedModelOutput(
                    f"{RULE_DISTINCT}: {names[i]} and {names[j]} are the same once case, spaces and punctuation "
                    f"are ignored ({options[i].strip()!r}, {options[j].strip()!r})"
                )
            inner, outer = (i, j) if len(a) < len(b) else (j, i)
            if f" {norms[inner]} " in f" {norms[outer]} ":
                raise engine.MalformedModelOutput(
                    f"{RULE_DISTINCT}: {names[inner]} {options[inner].strip()!r} is contained in "
                    f"{names[outer]} {options[outer].strip()!r}"
                )
    longest = max(len(d.strip()) for d in distractors)
    if len(correct.strip()) > longest:
        raise engine.MalformedModelOutput(
            f"{RULE_LONGEST}: the correct option has {len(correct.strip())} characters, every distractor fewer "
            f"(longest {longest}); shorten the correct option or lengthen a distractor"
        )


def check_review(out: dict, ctx: dict) -> None:
    """Model C's answer: one review per item, numbered 1..``ctx["n_items"]`` each exactly once;
    fixable and invalid labels need a non-empty reason. Raises MalformedModelOutput."""
    n = ctx["n_items"]
    numbers = sorted(r["item"] for r in out["reviews"])
    if numbers != list(range(1, n + 1)):
        raise engine.MalformedModelOutput(f"give exactly one review for each item 1 to {n}, got items {numbers}")
    for review in out["reviews"]:
        if review["label"] != "correct" and not review["reason"].strip():
            raise engine.MalformedModelOutput(f"item {review['item']}: a {review['label']} label needs a reason")
        if len(review["reason"]) > MAX_CHARS or len(review["suggested_answer"]) > MAX_CHARS:
            raise engine.MalformedModelOutput(
                f"item {review['item']}: reason and suggested answer are at most {MAX_CHARS} characters"
            )


def shuffle_seed(video_sha256: str, index: int) -> int:
    """The option shuffle's seed of item ``index`` (0-based, Q1..Q5 order) of a video: the first
    8 bytes of SHA-256("<video sha256>:<index>") as an integer. Stable across reruns and servers."""
    return int(hashlib.sha256(f"{video_sha256}:{index}".encode()).hexdigest()[:16], 16)


def flag_text(review: dict) -> str:
    """The model flag for a review: "" for correct, else "<label>: <reason>" and, when the model
    suggested one, " (suggested answer: <answer>)"."""
    if review["label"] == "correct":
        return ""
    text = f"{review['label']}: {review['reason'].strip()}"
    if review["suggested_answer"].strip():
        text += f" (suggested answer: {review['suggested_answer'].strip()})"
    return text


# ----------------------------------------------------------------------------- stages

OPEN = engine.register(
    engine.Stage(
        name="vudg_open",
        prompt_version="vudg-open-v1",
        system=(
            "You write open-ended questions with answers about one video, for a benchmark of video understanding "
            "across domains. You see frames sampled evenly over the whole video, in time order. Write exactly five "
            "items, each with its category:\n"
            "- action (one item): what a person or animal does at a particular moment;\n"
            "- attribute (one item): a visible property of an object, such as its colour, size, shape, position, "
            "distance, number, motion, material, state, orientation or texture;\n"
            "- object (one item): which object it is, what it looks like, or what it is used for;\n"
            "- temporal (two items): the order of events, or what happens before or after a given action.\n"
            "Rely only on what the frames show; ignore any sound. Each question must have one clear answer that the "
            "video settles. Keep answers short, ten words or fewer. Reply in JSON."
        ),
        schema=_obj(
            items={
                "type": "array",
                "items": _obj(
                    category={"type": "string", "enum": list(CATEGORY_ORDER)},
                    question={"type": "string"},
                    answer={"type": "string"},
                ),
            }
        ),
        check=check_open,
    )
)
DISTRACTORS = engine.register(
    engine.Stage(
        name="vudg_distractors",
        prompt_version="vudg-distractors-v1",
        system=(
            "You turn an open-ended video question and its answer into a six-option multiple-choice item. Return the "
            "correct option and five wrong options (distractors).\n"
            "- The correct option says what the given answer says; you may shorten it, never change its meaning.\n"
            "- Each distractor fits the question and sounds plausible, but is clearly wrong and clearly different in "
            "meaning from the answer and from every other option: not a synonym, not a rewording, not a part or an "
            "extension of another option. For temporal questions, make the order or timing of events differ clearly.\n"
            "- Keep the six options about equally long. The correct option must not be the longest: at least one "
            "distractor must have as many characters or more.\n"
            "Reply in JSON."
        ),
        schema=_obj(correct={"type": "string"}, distractors={"type": "array", "items": {"type": "string"}}),
        check=check_distractors,
    )
)
REVIEW = engine.register(
    engine.Stage(
        name="vudg_review",
        prompt_version="vudg-review-v1",
        system=(
            "You are a strict reviewer of multiple-choice questions about a video, judging only by what its frames "
            "show (never by sound). For each numbered item check that the actions, object attributes and objects it "
            "mentions are in the video and that the order and timing of events match the video's progression; take "
            "extra care with the timing of temporal items. Label each item:\n"
            "- correct: the question is sound and the marked answer is right and the only right option;\n"
            "- fixable: the question is sound but the marked answer is wrong or imprecise, or an option is also "
            "right; put the right answer in suggested_answer when you can tell it;\n"
            "- invalid: the question asks about something the video does not show, is ambiguous, or cannot be "
            "settled from the video. When unsure, choose invalid.\n"
            "Give a short reason for every label (for correct it may be empty); suggested_answer is empty unless "
            "the label is fixable. Reply in JSON."
        ),
        schema=_obj(
            reviews={
                "type": "array",
                "items": _obj(
                    item={"type": "integer"},
                    label={"type": "string", "enum": list(LABELS)},
                    reason={"type": "string"},
                    suggested_answer={"type": "string"},
                ),
            }
        ),
        check=check_review,
    )
)


# ----------------------------------------------------------------------------- the pipeline


def _frames_text(times_s: list[float], duration_s: float) -> str:
    return (
        f"The {len(times_s)} frames that follow were sampled evenly over the whole video ({duration_s:.1f} s), "
        f"at {', '.join(f'{t:.2f} s' for t in times_s)}."
    )


def _item_text(n: int, category: str, question: str, options: list[str], answer_index: int) -> str:
    lines = [f"{n}. [{category}] {question}"]
    lines += [f"   {LETTERS[k]}) {option}" for k, option in enumerate(options)]
    lines.append(f"   Marked answer: {LETTERS[answer_index]}")
    return "\n".join(lines)


class Vudg(PipelineDef):
    name = "vudg"
    label = "VUDG multi-expert cascade (open QA, distractors, review)"
    position = 40
    stages = ("vudg_open", "vudg_distractors", "vudg_review")

    def clean_params(self, project, params: dict) -> dict:
        """Check ``frames`` (1-32, default ``LLM_FRAMES``); refuse ``qa_type`` (VUDG drafts every
        category of a video together, by its quota); create the four VUDG QA types if missing."""
        frames = params.get("frames", settings.LLM_FRAMES)
        require(
            isinstance(frames, int) and not isinstance(frames, bool) and 1 <= frames <= 32,
            "frames must be a whole number from 1 to 32",
        )
        require(
            not params.get("qa_type"),
            "the vudg pipeline drafts all four VUDG categories of a video together "
            "(seed 004 Sec. 3.2); it takes no QA type",
            "qa_type",
        )
        for slug, name, description in QA_TYPES.values():
            ensure_qa_type(project, slug, name=name, description=description)
        return {**params, "frames": frames}

    def work(self, ctx: JobContext) -> Result:
        video = ctx.video
        duration = video.duration_s
        times = ffmpeg.sample_times(0.0, duration, ctx.params["frames"])
        key, frames = ctx.frames(video, times)
        where = _frames_text(times, duration)
        record = {"video": video.sha256, "frame_times_s": times}

        # 1. Model A: open-ended QA with the quota, put in Q1..Q5 order (temporal items keep theirs).
        opened = ctx.call(
            "vudg_open",
            engine.StageInput(
                text=f"{where}\nWrite the five question-answer items.", image_key=key, images=frames, record=record
            ),
        )["items"]
        opened = sorted(opened, key=lambda item: CATEGORY_ORDER.index(item["category"]))

        # 2. Model B: five distractors per item, then the recorded shuffle.
        items = []
        for index, item in enumerate(opened):
            question, answer = item["question"].strip(), item["answer"].strip()
            mc = ctx.call(
                "vudg_distractors",
                engine.StageInput(
                    text=f"Category: {item['category']}\nQuestion: {question}\nAnswer: {answer}",
                    record={"video": video.sha256, "item": index + 1, "category": item["category"]},
                ),
            )
            seed = shuffle_seed(video.sha256, index)
            options, answer_index = shuffled_options(
                mc["correct"].strip(), [d.strip() for d in mc["distractors"]], seed
            )
            items.append(
                {
                    "category": item["category"],
                    "question": question,
                    "open_answer": answer,
                    "options": options,
                    "answer_index": answer_index,
                    "seed": seed,
                }
            )

        # 3. Model C: review every finished item against the same frames.
        listed = "\n".join(
            _item_text(n, it["category"], it["question"], it["options"], it["answer_index"])
            for n, it in enumerate(items, 1)
        )
        reviews = ctx.call(
            "vudg_review",
            engine.StageInput(
                text=f"{where}\nItems:\n{listed}",
                image_key=key,
                images=frames,
                record=record,
                context={"n_items": len(items)},
            ),
        )["reviews"]
        by_item = {r["item"]: r for r in reviews}

        specs, summary = [], {"items": 0, **{label: 0 for label in LABELS}}
        for n, it in enumerate(items, 1):
            review = by_item[n]
            summary[review["label"]] += 1
            slug = QA_TYPES[it["category"]][0]
            specs.append(
                DraftSpec(
                    slug,
                    it["question"],
                    it["options"][it["answer_index"]],
                    0.0,
                    duration,
                    source_key=f"q{n}-{it['category']}",
                    options=it["options"],
                    answer_index=it["answer_index"],
                    flag=flag_text(review),
                    params={
                        "category": it["category"],
                        "open_answer": it["open_answer"],
                        "shuffle_seed": it["seed"],
                        "frame_times_s": times,
                        "review": {
                            "label": review["label"],
                            "reason": review["reason"].strip(),
                            "suggested_answer": review["suggested_answer"].strip(),
                        },
                    },
                )
            )
        summary["items"] = len(specs)
        summary["distractor_retries"] = (
            ModelCall.objects.filter(job=ctx.job, stage="vudg_distractors").exclude(error="").count()
        )
        return Result(specs=specs, summary=summary)


register(Vudg())
