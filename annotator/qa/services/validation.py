"""What a submit is made of (``Decision``, ``Addition``, ``SubmitResult``) and how it is checked
before anything is written: texts, options, intervals and the time a person says they spent."""

from __future__ import annotations

from dataclasses import dataclass, field

from annotator.media.models import VideoGroup
from annotator.qa.models import QAPair, QAType
from annotator.qa.selectors import DRAFTED_KEYS

MAX_TEXT = 4000

# ----------------------------------------------------------------------------------- the submit


@dataclass(frozen=True)
class Decision:
    """One verdict on a QA pair: keep, modify or delete. ``version`` is the QA pair's version the
    person saw (None skips the conflict check). Times in milliseconds."""

    qa_id: int
    action: str
    question: str | None = None
    answer: str | None = None
    options: list[str] | None = None
    answer_index: int | None = None
    reason: str = ""
    version: int | None = None
    time_spent_ms: int | None = None
    answer_start_s: float | None = None
    answer_end_s: float | None = None


@dataclass(frozen=True)
class Addition:
    """A new QA pair written by the annotator; clip defaults to the unit's range (seconds). For a QA
    type whose ``answer_kind`` is ``interval`` the answer is ``answer_start_s``..``answer_end_s``
    (seconds in the unit's time base, X-LeBench temporal localisation, seed 002 App. C.1); its
    answer text may then be empty and is stored as the interval written out."""

    qa_type: str
    question: str
    answer: str
    clip_start_s: float | None = None
    clip_end_s: float | None = None
    time_spent_ms: int | None = None
    options: list[str] | None = None
    answer_index: int | None = None
    answer_start_s: float | None = None
    answer_end_s: float | None = None


@dataclass
class SubmitResult:
    """The response stored with the submission and replayed for a retry."""

    unit_id: int
    item_id: int
    kind: str
    counts: dict = field(default_factory=dict)
    replayed: bool = False

    def as_dict(self) -> dict:
        return {
            "unit_id": self.unit_id,
            "item_id": self.item_id,
            "kind": self.kind,
            "status": "done",
            "counts": self.counts,
            "replayed": self.replayed,
        }


def check_options(options, answer_index, where: str, errors: dict) -> None:
    """Multiple-choice rules: at least 2 non-empty options, no two alike (case and spaces ignored),
    exactly one correct, named by ``answer_index``. Adds messages to ``errors``."""
    if options is None and answer_index is None:
        return
    if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) and o.strip() for o in options):
        errors[f"{where}.options"] = "options must be a list of at least 2 non-empty strings"
        return
    if len({" ".join(o.lower().split()) for o in options}) != len(options):
        errors[f"{where}.options"] = "options must all differ"
    if not isinstance(answer_index, int) or not 0 <= answer_index < len(options):
        errors[f"{where}.answer_index"] = f"answer_index must be an integer from 0 to {len(options) - 1}"


def _text_error(value, label: str) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return f"{label} must not be empty"
    if len(value) > MAX_TEXT:
        return f"{label} is longer than {MAX_TEXT} characters"
    return None


def _content(pair: QAPair, *, as_drafted: dict | None = None) -> dict:
    """What the person was shown of ``pair``: its current content, or ``as_drafted``, the content
    before any person touched it (``selectors.drafted_states``), which is what an overlap pass is
    shown: it is blind to the first pass, its text and its answer interval alike."""
    source = as_drafted if as_drafted is not None else pair.snapshot()
    return {k: source.get(k) for k in DRAFTED_KEYS}


def interval_answer_text(start_s: float, end_s: float) -> str:
    """An interval answer written out (``"12.00-15.50 s"``), the answer text of an interval QA pair
    added without one."""
    return f"{start_s:.2f}-{end_s:.2f} s"


def _interval_errors(start, end, interval: bool, unit, where: str, errors: dict) -> None:
    """An answer interval (seconds) is given exactly for QA types whose answer is one, and then lies
    within the unit's range with end > start. Adds messages to ``errors``."""
    if not interval:
        if start is not None or end is not None:
            errors[f"{where}.answer_start_s"] = (
                "only QA types whose answer is a time interval take answer start and end"
            )
        return
    if start is None or end is None:
        errors[f"{where}.answer_start_s"] = (
            "set the answer's start and end (the answer of this QA type is a time interval)"
        )
    elif not unit.start_s <= start < end <= unit.end_s:
        errors[f"{where}.answer_start_s"] = (
            f"the answer interval must lie within {unit.start_s:.2f}-{unit.end_s:.2f} s and end after it starts"
        )


def _proposed(base: dict, d: Decision) -> dict:
    """The content a modify decision asks for: each field given, else what was shown."""
    options = base["options"] if d.options is None else [o.strip() for o in d.options]
    index = base["answer_index"] if d.answer_index is None else d.answer_index
    answer = base["answer"] if d.answer is None else d.answer.strip()
    if options is not None and isinstance(index, int) and 0 <= index < len(options):
        answer = options[index]  # a multiple-choice answer is the text of its correct option
    return {
        "question": base["question"] if d.question is None else d.question.strip(),
        "answer": answer,
        "options": options,
        "answer_index": index,
        "answer_start_s": base.get("answer_start_s") if d.answer_start_s is None else d.answer_start_s,
        "answer_end_s": base.get("answer_end_s") if d.answer_end_s is None else d.answer_end_s,
    }


def _validate(
    decisions, additions, shown: dict[int, dict], types, unit, interval_ids=frozenset(), optional=frozenset()
) -> dict[str, str]:
    """Per-field errors of a submit (``{"decisions[0].answer": "..."}``); ``interval_ids`` are the QA
    pairs whose type's answer is a time interval, ``optional`` those that may go without a decision
    (a rework's deleted pairs)."""
    errors: dict[str, str] = {}
    seen: set[int] = set()
    for i, d in enumerate(decisions):
        where = f"decisions[{i}]"
        base = shown.get(d.qa_id)
        if base is None:
            errors[f"{where}.qa_id"] = f"QA pair {d.qa_id} is not an item of this pass"
            continue
        if d.qa_id in seen:
            errors[f"{where}.qa_id"] = f"QA pair {d.qa_id} has two decisions"
        seen.add(d.qa_id)
        if d.action == "delete":
            if d.reason not in QAPair.DeleteReason.values:
                errors[f"{where}.reason"] = "choose a reason: " + ", ".join(QAPair.DeleteReason.values)
            elif d.reason == QAPair.DeleteReason.INCONSISTENT and (
                unit.group_id is None or unit.group.kind != VideoGroup.Kind.DAY_NIGHT
            ):
                errors[f"{where}.reason"] = "inconsistent across day and night applies only to a day-night pair"
        elif d.action == "modify":
            new = _proposed(base, d)
            for label in ("question", "answer"):
                if (message := _text_error(new[label], label)) is not None:
                    errors[f"{where}.{label}"] = message
            check_options(new["options"], new["answer_index"], where, errors)
            if (d.answer_start_s, d.answer_end_s) != (None, None) or d.qa_id in interval_ids:
                _interval_errors(
                    new["answer_start_s"], new["answer_end_s"], d.qa_id in interval_ids, unit, where, errors
                )
            if new == base:
                errors[where] = "modify without a change: use keep"
        elif d.action != "keep":
            errors[f"{where}.action"] = "action must be keep, modify or delete"
    for qa_id in shown.keys() - seen - set(optional):
        errors[f"qa[{qa_id}]"] = f"QA pair {qa_id} has no decision"
    for i, a in enumerate(additions):
        where = f"added[{i}]"
        qa_type = types.get(a.qa_type)
        if not a.qa_type:
            errors[f"{where}.qa_type"] = "choose the QA type of the added QA pair"
        elif qa_type is None:
            errors[f"{where}.qa_type"] = f"unknown QA type {a.qa_type!r}"
        interval = qa_type is not None and qa_type.answer_kind == QAType.AnswerKind.INTERVAL
        for label, value in (("question", a.question), ("answer", a.answer)):
            if interval and label == "answer" and not (value or "").strip():
                continue  # the interval is the answer; its text is written out on save
            if (message := _text_error(value, label)) is not None:
                errors[f"{where}.{label}"] = message
        if qa_type is not None:
            _interval_errors(a.answer_start_s, a.answer_end_s, interval, unit, where, errors)
        check_options(a.options, a.answer_index, where, errors)
        start = unit.start_s if a.clip_start_s is None else a.clip_start_s
        end = unit.end_s if a.clip_end_s is None else a.clip_end_s
        if not unit.start_s <= start < end <= unit.end_s:
            errors[f"{where}.clip"] = f"clip must lie within {unit.start_s:.2f}-{unit.end_s:.2f} s"
    return errors


def time_errors(bound_ms: int, times: dict[str, int | None]) -> dict[str, str]:
    """Per-field errors for client-reported times (ms, ``{field path: value}``, None = not given)
    that are negative, not integers, or above ``bound_ms`` (``queue.time_bound_ms``: the wall
    time since the person's claim plus slack). A page cannot have spent more than that."""
    errors = {}
    for path, value in times.items():
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            errors[path] = "a time must be a whole number of milliseconds, 0 or more"
        elif value > bound_ms:
            errors[path] = (
                f"{value / 1000:,.0f} s is more time than has passed since you took this unit "
                f"(at most {bound_ms / 1000:,.0f} s)"
            )
    return errors
