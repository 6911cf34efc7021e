"""Prompt and answer format for the ``llm`` draft pipeline (``annotator.drafts.pipelines.llm``).
Pure: no Django, no network.

The model sees frames sampled evenly over the video (with their timestamps) and is asked for
QA pairs of one QA type as JSON::

    {"qa_pairs": [{"question": "...", "answer": "..."}, ...]}

``parse_answer`` accepts exactly that (optionally inside a ```json fence) and raises
MalformedModelOutput (the inference engine's) for anything else, so a bad answer is recorded and
retried, never half-saved.
"""

from __future__ import annotations

import json
import re

from annotator.inference.errors import MalformedModelOutput

PROMPT_VERSION = "llm-qa-v1"
MAX_PAIRS = 10
MAX_CHARS = 2000

SYSTEM_PROMPT = (
    "You write question-answer pairs for a video question-answering benchmark. "
    "Ask only about what the frames show; answers must be short, specific and checkable from the video. "
    'Reply with JSON only, exactly: {"qa_pairs": [{"question": "...", "answer": "..."}]}'
)


__all__ = [
    "MAX_CHARS",
    "MAX_PAIRS",
    "PROMPT_VERSION",
    "SYSTEM_PROMPT",
    "MalformedModelOutput",
    "check_reply",
    "clips_for",
    "parse_answer",
    "user_text",
]


def clips_for(clip_policy: str, window_s: float | None, duration_s: float, n_windows: int) -> list[tuple[float, float]]:
    """The clips (start, end in seconds) a QA type is drafted on: for a ``window`` policy,
    ``n_windows`` windows of ``window_s`` seconds centred on the centres of n equal parts of the
    video (EgoNight's 3 s clips for static and spatial types, seed 000 Sec. 3.2), kept inside the
    video; otherwise (or for a video no longer than one window) the whole video."""
    if clip_policy != "window" or not window_s or duration_s <= window_s or n_windows < 1:
        return [(0.0, duration_s)]
    step = duration_s / n_windows
    clips = []
    for i in range(n_windows):
        start = min(max(0.0, step * (i + 0.5) - window_s / 2), duration_s - window_s)
        clips.append((round(start, 3), round(start + window_s, 3)))
    return clips


def user_text(
    qa_type_name: str,
    guidelines: str,
    times_s: list[float],
    duration_s: float,
    n_pairs: int,
    clip: tuple[float, float] | None = None,
) -> str:
    """The text part of the request; frame images follow it in the same order as ``times_s``.
    ``clip`` (start, end in seconds) names the part of the video the frames come from."""
    stamps = ", ".join(f"{t:.2f} s" for t in times_s)
    where = (
        f"The clip covers {clip[0]:.1f}-{clip[1]:.1f} s of a {duration_s:.1f} s video"
        if clip and clip != (0.0, duration_s)
        else f"The video lasts {duration_s:.1f} s"
    )
    parts = [
        f"QA type: {qa_type_name}.",
        f"{where}; the {len(times_s)} frames that follow were taken at {stamps}.",
        f"Write up to {n_pairs} question-answer pairs of this type about what these frames show.",
    ]
    if guidelines.strip():
        parts.append(f"Guidelines: {guidelines.strip()}")
    return "\n".join(parts)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_answer(text: str) -> list[tuple[str, str]]:
    """Return [(question, answer), ...] from a reply; raise MalformedModelOutput if malformed.

    Rules: a JSON object with a non-empty list ``qa_pairs`` of at most MAX_PAIRS objects, each
    with non-empty string ``question`` and ``answer`` of at most MAX_CHARS characters.
    """
    match = _FENCE.match(text or "")
    body = match.group(1) if match else (text or "").strip()
    if not body:
        raise MalformedModelOutput("empty reply")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise MalformedModelOutput(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("qa_pairs"), list):
        raise MalformedModelOutput('expected an object with a "qa_pairs" list')
    pairs = data["qa_pairs"]
    if not pairs:
        raise MalformedModelOutput('"qa_pairs" is empty')
    if len(pairs) > MAX_PAIRS:
        raise MalformedModelOutput(f'"qa_pairs" has {len(pairs)} items, at most {MAX_PAIRS} allowed')
    out = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, dict):
            raise MalformedModelOutput(f"qa_pairs[{i}] is not an object")
        question, answer = pair.get("question"), pair.get("answer")
        for key, value in (("question", question), ("answer", answer)):
            if not isinstance(value, str) or not value.strip():
                raise MalformedModelOutput(f"qa_pairs[{i}].{key} is missing or empty")
            if len(value) > MAX_CHARS:
                raise MalformedModelOutput(f"qa_pairs[{i}].{key} is longer than {MAX_CHARS} characters")
        out.append((question.strip(), answer.strip()))
    return out


def check_reply(output: dict, context: dict) -> None:
    """The ``llm`` stage's check (``engine.Stage.check``): ``output`` is ``{"text": reply}`` (the
    stage asks for free text); raises MalformedModelOutput unless ``parse_answer`` accepts it."""
    parse_answer(output.get("text", ""))
