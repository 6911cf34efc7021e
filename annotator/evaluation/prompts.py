"""The prompts of model evaluation: the model's question, and the judge's rubric.

- ``predict``: a free-text stage (no schema; the engine stores the reply as ``{"text": ...}``)
  asking the evaluated model the question with the frames, worded as EgoNight's "Model Evaluation
  Prompt" (seed 000 App. A.5.1), with the options lettered A, B, C... for multiple choice; for
  several videos (an ego-exo set, an item whose options are videos), EgoExoBench's multi-video
  input (seed 001 Sec. 4.1 and App. B.1), its own prompt version (``PREDICT_VIDEOS``).
- ``judge`` (registered with the engine, ``engine.STAGES``): EgoNight's "Evaluation Protocol"
  (seed 000 App. A.5.1), system and user prompt as the paper gives them; the answer is
  ``{"pred": "correct"|"incorrect", "score": 0-5, "reason": str}``.
- ``judge`` with the VUDG rubric (seed 004 Sec. 3.4 and App. J.4, Figs. 16 and 17): accuracy (for
  temporal types: sequence correctness) 0-5 and relevance 0-5, with a reason. Same stage name, so
  the engine and the servers see one judge; its own prompt version and schema (not registered: the
  registry holds one stage per name).
"""

from __future__ import annotations

import re

from annotator.evaluation.metrics import letter
from annotator.inference import engine

PREDICT_VERSION = "eval-egonight-a51-v1"
JUDGE_VERSION = "judge-egonight-a51-v1"
JUDGE_VUDG_VERSION = "judge-vudg-j4-v1"
JUDGE_VUDG_TEMPORAL_VERSION = "judge-vudg-j4-temporal-v1"

PREDICT = engine.Stage(
    name="predict",
    prompt_version=PREDICT_VERSION,
    schema=None,
    temperature=0.0,
    system="You answer questions about a video from frames sampled from it, in order.",
)

# Seed 000 App. A.5.1, "Model Evaluation Prompt". {video} is the frames sent with the question.
_ASK = (
    "Please carefully read the question, use the visual cues in the {video} to answer the question: {question}\n"
    "The original FPS of the video is {fps}. This image set is obtained by sampling at {sampling} fps.\n"
    "Do not include any other content. You need to answer the question in any case and not demand additional "
    "context information.\n"
    "Note: All the actions mentioned refer to the person who recorded the video."
)
_CHOICES = "Options:\n{options}\nAnswer with the option's letter from the given choices directly."


def _fps(x: float | None) -> str:
    return "unknown" if not x else f"{x:.2f}".rstrip("0").rstrip(".")


def ask(question: str, *, n_frames: int, clip_s: float, fps: float | None, options: list[str] | None) -> str:
    """The user message asking the evaluated model ``question`` about ``n_frames`` frames sampled
    evenly over a clip of ``clip_s`` seconds of a video of ``fps`` frames per second; with
    ``options``, lettered A, B, C... and the letter asked for."""
    text = _ASK.format(
        video=f"{n_frames} video frame{'s' if n_frames != 1 else ''} given",
        question=question.strip(),
        fps=_fps(fps),
        sampling=_fps(n_frames / clip_s if clip_s > 0 else None),
    )
    if options:
        lines = "\n".join(f"{letter(i)}. {str(o).strip()}" for i, o in enumerate(options))
        text += "\n" + _CHOICES.format(options=lines)
    return text


# ------------------------------------------------------------------------------ several videos (EgoExoBench)

PREDICT_VIDEOS_VERSION = "eval-egoexo-s41-v1"  # prompt_version (100 chars) holds all
PREDICT_VIDEOS = engine.Stage(
    name="predict",
    prompt_version=PREDICT_VIDEOS_VERSION,
    schema=None,
    temperature=0.0,
    system="You answer questions about several videos from frames sampled from each of them, in order.",
)

# Seed 001 Sec. 4.1 (the question stem, the labelled options, only the letter asked for) and App. B.1
# Fig. 18 (the number of videos given, then each video's label followed by its frames).
_VIDEOS = (
    "You will be provided with {k} videos: {labels}. Each video's label is followed by its frames, {m} "
    "frame{s} per video sampled evenly from its clip, in order.{views}\n"
    "Please carefully analyze the content of each video and use the visual cues in the videos to answer the "
    "question: {question}\n"
    "Do not include any other content. You need to answer the question in any case and not demand additional "
    "context information."
)
_VIEWS = (
    " The videos are synchronised views of the same activity: ego is the first-person (egocentric) view and "
    "the exo videos ({exos}) are third-person (exocentric) views."
)


def ask_videos(
    question: str, *, labels: list[str], per_video: int, options: list[str] | None, ego_exo: bool = False
) -> str:
    """The user message asking ``question`` about several videos, whose frames follow (each video's
    ``per_video`` frames introduced by its label, in ``labels`` order, as ``StageInput.captions``):
    EgoExoBench's multi-video input (seed 001 App. B.1, Fig. 18) with its MCQ instruction (Sec. 4.1:
    the options lettered, the letter alone asked for). ``ego_exo``: the videos are the views of an
    ego-exo set ("ego", "exo 1", ...), which the text says."""
    views = ""
    if ego_exo:
        exos = [x for x in labels if x != "ego"]
        views = _VIEWS.format(exos=", ".join(exos))
    text = _VIDEOS.format(
        k=len(labels),
        labels=", ".join(labels),
        m=per_video,
        s="s" if per_video != 1 else "",
        views=views,
        question=question.strip(),
    )
    if options:
        lines = "\n".join(f"{letter(i)}. {str(o).strip()}" for i, o in enumerate(options))
        text += "\n" + _CHOICES.format(options=lines)
    return text


# ------------------------------------------------------------------------------ life logs and intervals

# Seed 002 Fig. 5 ("Example of input context"): X-LeBench's time-stamped records of a life log.
_LIFE_LOG = (
    'You will act as a "Life Recording Assistant" using the provided records to help camera wearer C '
    "obtain specific information. The provided data contains daily life recordings of C with the "
    "corresponding record time.\n"
    "First, analyze the question and identify the corresponding segments (the records within the specified "
    "or relevant time periods) that contain relevant information. Then, based on your analysis and the "
    "question, analyze the provided recordings in depth and answer the question accurately.\n"
    "Context:\n{context}\n"
    "Question: {question}"
)


def interval_format(times_s: list[float] | None = None, *, k: int = 5) -> str:
    """The answer format asked of an interval item (``annotator.scoring.localisation.ANSWER_FORMAT``),
    for one video: with ``times_s``, the frames' times as H:MM:SS from the video's start."""
    from annotator.scoring.localisation import ANSWER_FORMAT, format_clock

    head = ""
    if times_s:
        head = (
            "The frames are at "
            + ", ".join(format_clock(None, t) for t in times_s)
            + " (H:MM:SS from the video's start).\n"
        )
    return head + ANSWER_FORMAT.format(k=k)


def ask_life_log(
    question: str,
    *,
    stamps: list[str],
    records: list[tuple[str, str]],
    options: list[str] | None,
    interval: bool,
    k: int = 5,
) -> str:
    """The user message for an item of a life log (seed 002 Fig. 5): for each recording sampled
    (``records``: its wall-clock start and end), "The following frames are recorded during time of
    [start - end]", then the frames' own wall-clock times (``stamps``, in the order the images are
    sent), the question, and the answer format: intervals (``interval``), option letters
    (``options``) or free text."""
    lines = [f"The following frames are recorded during time of [{a} - {b}]." for a, b in records]
    lines.append("Frames, in order: " + ", ".join(f"frame {i + 1} at {t}" for i, t in enumerate(stamps)) + ".")
    text = _LIFE_LOG.format(context="\n".join(lines), question=question.strip())
    if interval:
        from annotator.scoring.localisation import ANSWER_FORMAT

        text += "\n" + ANSWER_FORMAT.format(k=k)
    elif options:
        text += "\n" + _CHOICES.format(
            options="\n".join(f"{letter(i)}. {str(o).strip()}" for i, o in enumerate(options))
        )
    return text


# ------------------------------------------------------------------------------ EgoNight's judge

JUDGE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["pred", "score", "reason"],
    "properties": {
        "pred": {"type": "string", "enum": ["correct", "incorrect"]},
        "score": {"type": "integer", "minimum": 0, "maximum": 5},
        "reason": {"type": "string"},
    },
}

# Seed 000 App. A.5.1, "Evaluation Protocol" (GPT-4.1 as the judge), as the paper gives it.
JUDGE_SYSTEM = (
    "You are an intelligent chatbot designed for evaluating the correctness of AI assistant predictions for "
    "question-answer pairs.\n"
    "Your task is to compare the predicted answer with the ground-truth answer and determine if the predicted answer "
    "is correct or not. Here's how you can accomplish the task:\n"
    "INSTRUCTIONS:\n"
    "1. Focus on the correctness and accuracy of the predicted answer with the ground-truth.\n"
    "2. Consider uncertain predictions, such as 'it is impossible to answer the question from the video', as "
    "incorrect, unless the ground truth answer also says that."
)
_JUDGE_USER = (
    "Please evaluate the following video-based question-answer pair:\n"
    "Question: {question}\n"
    "Ground truth correct Answer: {answer}\n"
    "Predicted Answer: {prediction}\n"
    "Provide your evaluation as a correct/incorrect prediction along with the score where the score is an integer "
    "value between 0 (fully wrong) and 5 (fully correct). The middle score provides the percentage of correctness. "
    "For question that counting the number of objects, if the predicted answer falls in the range of the ground "
    "truth answer, it should be considered as correct.\n"
    "Please generate the response in the form of a Python dictionary string with keys 'pred', 'score' and 'reason', "
    "where value of 'pred' is a string of 'correct' or 'incorrect', value of 'score' is in INTEGER, not STRING and "
    "value of 'reason' should provide the reason behind the decision."
)

JUDGE = engine.register(
    engine.Stage(name="judge", prompt_version=JUDGE_VERSION, system=JUDGE_SYSTEM, schema=JUDGE_SCHEMA, temperature=0.0)
)


# ------------------------------------------------------------------------------ VUDG's judge

JUDGE_VUDG_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["accuracy_score", "relevance_score", "reason"],
    "properties": {
        "accuracy_score": {"type": "integer", "minimum": 0, "maximum": 5},
        "relevance_score": {"type": "integer", "minimum": 0, "maximum": 5},
        "reason": {"type": "string"},
    },
}

_RELEVANCE = (
    "2) Relevance:\n"
    "- 0: Entirely irrelevant; does not address the question.\n"
    "- 1: Minimally relevant; largely off-topic.\n"
    "- 2: Partially relevant; includes significant unrelated information.\n"
    "- 3: Mostly relevant; some extraneous details.\n"
    "- 4: Highly relevant; minor non-essential details.\n"
    "- 5: Fully relevant; directly addresses the question without deviation.\n"
)
_OUTPUT = (
    'Output Format (JSON):\n{"accuracy_score": <int 0-5>, "relevance_score": <int 0-5>, '
    '"reason": "<the reasons for both scores>"}'
)

# Seed 004 App. J.4, Fig. 16 (action, attribute and object questions).
JUDGE_VUDG_SYSTEM = (
    "Evaluate the answer on TWO dimensions: Accuracy and Relevance.\n"
    "Each score must be an integer from 0 to 5.\n"
    "1) Accuracy:\n"
    "- 0: Completely incorrect; contradicts the video's content.\n"
    "- 1: Mostly incorrect; only minor correct elements.\n"
    "- 2: Some correct elements; significant inaccuracies present.\n"
    "- 3: Generally correct; minor inaccuracies.\n"
    "- 4: Mostly correct; very minor errors.\n"
    "- 5: Completely accurate; aligns perfectly with the video's content.\n" + _RELEVANCE + "Instructions:\n"
    "1. Analyze the respondent's answer in the context of the question and the ground truth. Scores need to be given "
    "with sufficient reasons.\n"
    "2. Assign accuracy_score (0-5) based on the correctness of the information.\n"
    "3. Assign relevance_score (0-5) based on how well the answer addresses the question.\n"
    "4. The answer's phrasing does not need to match the expected wording exactly; meaning and content alignment are "
    "what matter.\n" + _OUTPUT
)
# Seed 004 App. J.4, Fig. 17 (temporal questions): sequence correctness in place of accuracy.
JUDGE_VUDG_TEMPORAL_SYSTEM = (
    "Evaluate the answer on TWO dimensions: Sequence Correctness and Relevance.\n"
    "Each score must be an integer from 0 to 5.\n"
    "1) Sequence Correctness (reported as accuracy_score):\n"
    "- 0: Completely incorrect order.\n"
    "- 1: Mostly incorrect order.\n"
    "- 2: Some correct order; significant errors.\n"
    "- 3: Generally correct order; minor errors.\n"
    "- 4: Mostly correct order; very minor errors.\n"
    "- 5: Perfect sequence.\n" + _RELEVANCE + "Instructions:\n"
    "1. Analyze the respondent's answer in the context of the question and the ground truth; provide brief "
    "justification for each score.\n"
    "2. Assign accuracy_score (0-5) based on how accurately the answer reflects the temporal order of events.\n"
    "3. Assign relevance_score (0-5) based on how directly the answer addresses the question's focus.\n"
    "4. The answer's phrasing does not need to match the expected wording exactly; meaning and order alignment are "
    "what matter.\n" + _OUTPUT
)
_VUDG_USER = "Question: {question}\nGround Truth: {answer}\nRespondent's Answer: {prediction}"

JUDGE_VUDG = engine.Stage(
    name="judge", prompt_version=JUDGE_VUDG_VERSION, system=JUDGE_VUDG_SYSTEM, schema=JUDGE_VUDG_SCHEMA, temperature=0.0
)
JUDGE_VUDG_TEMPORAL = engine.Stage(
    name="judge",
    prompt_version=JUDGE_VUDG_TEMPORAL_VERSION,
    system=JUDGE_VUDG_TEMPORAL_SYSTEM,
    schema=JUDGE_VUDG_SCHEMA,
    temperature=0.0,
)

# QA types whose slug names one of these are VUDG's temporal questions (Q4 and Q5, seed 004 Sec. 3.2).
TEMPORAL_WORDS = ("temporal", "order", "sequence")
# VUDG gives no correct/incorrect label: for the judge's accuracy and for re-judging, an answer whose
# accuracy is at least 3 ("generally correct; minor inaccuracies", Fig. 16) counts as correct.
VUDG_CORRECT_FROM = 3


def judge_stage(rubric: str, qa_type: str) -> engine.Stage:
    """The judge stage of ``rubric`` (``egonight`` or ``vudg``) for a QA type's slug."""
    if rubric == "vudg":
        temporal = any(w in qa_type.lower() for w in TEMPORAL_WORDS)
        return JUDGE_VUDG_TEMPORAL if temporal else JUDGE_VUDG
    return JUDGE


def judge_text(rubric: str, *, question: str, answer: str, prediction: str) -> str:
    """The judge's user message for one answer."""
    template = _VUDG_USER if rubric == "vudg" else _JUDGE_USER
    return template.format(question=question.strip(), answer=answer.strip(), prediction=prediction.strip())


def read_judgement(rubric: str, output: dict) -> dict:
    """The judge's validated answer as the prediction's fields: ``judge_pred``, ``judge_score``
    (EgoNight 0-5; VUDG accuracy + relevance, 0-10, seed 004 Sec. 3.4), ``judge_accuracy``,
    ``judge_relevance`` and ``judge_reason``."""
    if rubric == "vudg":
        acc, rel = int(output["accuracy_score"]), int(output["relevance_score"])
        return {
            "judge_pred": "correct" if acc >= VUDG_CORRECT_FROM else "incorrect",
            "judge_score": acc + rel,
            "judge_accuracy": acc,
            "judge_relevance": rel,
            "judge_reason": output.get("reason", ""),
        }
    return {
        "judge_pred": output["pred"],
        "judge_score": int(output["score"]),
        "judge_accuracy": None,
        "judge_relevance": None,
        "judge_reason": output.get("reason", ""),
    }


def prompt_version(rubric: str) -> str:
    """What an evaluation records as its prompt versions."""
    judge = f"{JUDGE_VUDG_VERSION}|{JUDGE_VUDG_TEMPORAL_VERSION}" if rubric == "vudg" else JUDGE_VERSION
    return f"predict:{PREDICT_VERSION}|{PREDICT_VIDEOS_VERSION}, judge:{judge}"


# ------------------------------------------------------------------------------ study items (issue 18)

PREDICT_ORDER_VERSION = "eval-egoflight-g-v1"

# Seed 003 App. G, "Proprietary model without / with hints" (the labels refer to the order the
# frames appear in the message; the answer line "The correct temporal order is: ...").
_ORDER = (
    "You are shown {n} {things} from a video. These {things} have been shuffled and are NOT in their original "
    'order. The labels "{Thing} 1", "{Thing} 2", etc. refer to the order they appear in this message, not their '
    "chronological order.\n"
)
_ORDER_HINTS = (
    "HINTS PROVIDED: {hints}\n"
    "CRITICAL HINT INFORMATION: The {things} marked as HINTS above are shown to you with their CORRECT "
    "temporal positions explicitly stated. These hint {things} MUST remain in their specified positions "
    "in your final answer. Use these fixed hint {things} as anchor points to determine where the "
    "remaining {things} should go.\n"
)
_ORDER_TASK = (
    "Your task: Determine the correct chronological order of these {things} based on the {content}.\n"
    "1. Briefly describe what you observe in each {thing}.\n"
    "2. Explain your reasoning for the temporal order.\n"
    "3. Finally, provide your answer in this format:\n\n"
    "The correct temporal order is: [comma-separated {thing} numbers]\n\n"
    'For example (with {n} {things}): "The correct temporal order is: {example}"'
)


def ask_order(*, n: int, texts: list[str] | None, context: str, hints: dict[int, int]) -> str:
    """EGO-FLIGHT's ordering prompt (seed 003 App. G) for ``n`` shuffled frames (sent as images in
    the shown order) or, with ``texts``, shuffled texts (X-LeBench summary ordering, seed 002
    App. C.4: the texts are in the message, numbered in the shown order). ``context``: the scene
    context (the condition's annotation; '' for none). ``hints``: shown number -> true position
    (1-based) of each pinned element, stated as the paper's hints; {} for none."""
    thing = "text" if texts is not None else "frame"
    things, Thing = thing + "s", thing.capitalize()
    text = _ORDER.format(n=n, things=things, Thing=Thing)
    if texts is not None:
        text += "".join(f"{Thing} {i}: {t.strip()}\n" for i, t in enumerate(texts, start=1))
    if hints:
        described = "; ".join(
            f"{Thing} {shown} should be in temporal position {pos}" for shown, pos in sorted(hints.items())
        )
        text += _ORDER_HINTS.format(hints=described, things=things)
    if context.strip():
        text += f"The video shows: {context.strip()}\n"
    example = ", ".join(str(i) for i in ([2, 4, 1, 3] if n == 4 else list(range(n, 0, -1))))
    return text + _ORDER_TASK.format(
        things=things, thing=thing, n=n, example=example, content="visual content" if texts is None else "texts"
    )


_ORDER_LINE = re.compile(r"temporal order is\s*:?\s*\[?\s*((?:\d+\s*(?:,|and|->|→|\s)\s*)*\d+)", re.IGNORECASE)


def read_order(text: str, n: int) -> list[int] | None:
    """The shown numbers (1-based) a model's answer orders, earliest first: the numbers after the
    last "The correct temporal order is:" (seed 003 App. G's answer line), else the answer's last
    run of n comma-separated numbers. None unless they are each of 1..n exactly once."""
    found = _ORDER_LINE.findall(text or "")
    candidates = [found[-1]] if found else re.findall(r"((?:\d+\s*,\s*){%d}\d+)" % max(n - 1, 0), text or "")[-1:]
    for run in candidates:
        numbers = [int(x) for x in re.findall(r"\d+", run)]
        if sorted(numbers) == list(range(1, n + 1)):
            return numbers
    return None


PREDICT_RATING_VERSION = "eval-likert-v1"


def ask_rating(*, criterion: str, scale: str, question: str, answer: str, description: str) -> str:
    """The rating request of a Likert item: the words its raters read (the criterion and what 1
    and 5 mean, VUDG seed 004 Sec. 4.5, X-LeBench seed 002 App. D), what is rated, and the reply
    asked for: one whole number from 1 to 5."""
    text = f"Rate the following on {criterion.replace('_', ' ')}: {scale}\n"
    if question:
        text += f"Question: {question.strip()}\nAnswer: {answer.strip()}\n"
    if description:
        text += f"Record: {description.strip()}\n"
    return text + "Reply with the score alone, one whole number from 1 to 5."


def read_rating(text: str) -> int | None:
    """The score 1-5 a model's reply gives: the reply's first whole number, when it is 1 to 5."""
    found = re.search(r"(?<![\d.])(\d+)(?![\d.])", text or "")
    return int(found.group(1)) if found and 1 <= int(found.group(1)) <= 5 else None


def _check_order(output: dict, context: dict) -> None:
    if read_order(output["text"], context["n"]) is None:
        raise engine.MalformedModelOutput(f"the answer gives no order of the numbers 1 to {context['n']}, each once")


def _check_rating(output: dict, context: dict) -> None:
    if read_rating(output["text"]) is None:
        raise engine.MalformedModelOutput("the answer gives no score from 1 to 5")


# Free-text stages whose reply must be readable: an unreadable one is recorded and asked again.
PREDICT_ORDER = engine.Stage(
    name="predict",
    prompt_version=PREDICT_ORDER_VERSION,
    schema=None,
    temperature=0.0,
    check=_check_order,
    system="You put shuffled frames of a video, or shuffled texts, back in the order they happened.",
)
PREDICT_RATING = engine.Stage(
    name="predict",
    prompt_version=PREDICT_RATING_VERSION,
    schema=None,
    temperature=0.0,
    check=_check_rating,
    system="You rate items on a scale from 1 to 5, as human raters were asked to.",
)
