"""Temporal localisation scores (X-LeBench, seed 002 App. C.1 "Evaluation Metrics"), and reading a
model's answer as intervals. Pure Python: no Django.

X-LeBench scores temporal localisation "following previous works on temporal localization
(Grauman et al., 2022 [Ego4D]; Zhang et al., 2021, 2020)" by top-x recall at a tIoU threshold,
"recall@x, tIoU", with x = 5 and t = 0.3: a query counts as found when at least one of the model's
first x intervals overlaps the truth with tIoU >= t, and recall is the share of queries found
(Ego4D's Natural Language Queries metric). R@1 at tIoU 0.3 is reported beside it, as Ego4D does.

Times are seconds (virtual seconds after a life log's start, for life logs).

The answer format a model is asked for (``ANSWER_FORMAT``), best first, at most ``MAX_INTERVALS``:

- one interval a line, ``HH:MM:SS - HH:MM:SS`` in the wall-clock time the prompt shows (``-``,
  ``–``, ``—`` or ``to`` between; seconds optional; ``+1d`` after a time for the next day; an end
  before its start is read as the next day), or
- JSON: ``{"intervals": [[start, end], ...]}`` or ``[[start, end], ...]`` (``[start, end]`` alone
  is one interval), each time a clock string as above or a number of seconds after the log's start.

Anything else is unparseable (``IntervalParseError`` with the reason; scored as not found).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from datetime import datetime, timedelta

TIOU_THRESHOLD = 0.3  # seed 002 App. C.1: "we set x to 5 and t to 0.3"
RECALL_KS = (1, 5)  # R@5 is the paper's; R@1 is Ego4D's other figure
MAX_INTERVALS = 5
DAY_S = 86400.0

ANSWER_FORMAT = (
    "Answer with the time interval(s) when it happens, most likely first, at most {k}, one per line as "
    "HH:MM:SS - HH:MM:SS in the recording times given above (e.g. 08:31:05 - 08:33:40). "
    "Do not include any other content."
)

Interval = tuple[float, float]


def tiou(a: Interval, b: Interval) -> float:
    """Temporal intersection over union of intervals ``a`` and ``b`` (start, end seconds):
    ``|a ∩ b| / |a ∪ b|``, with ``|a ∪ b| = |a| + |b| - |a ∩ b|`` (seed 002 App. C.1, after Ego4D
    NLQ). 0.0 when they do not overlap or the union is empty. Raises ValueError for an interval
    whose end is before its start or a time that is not finite."""
    for s, e in (a, b):
        if not (math.isfinite(s) and math.isfinite(e)) or e < s:
            raise ValueError(f"not an interval: ({s}, {e})")
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


def hit_rank(predicted: Sequence[Interval], truth: Interval, threshold: float = TIOU_THRESHOLD) -> int | None:
    """The 1-based rank of the first predicted interval with tIoU >= ``threshold`` against
    ``truth``, or None when none reaches it. ``predicted`` is best first."""
    for rank, interval in enumerate(predicted, start=1):
        if tiou(interval, truth) >= threshold:
            return rank
    return None


def recall_at_k(
    ranked: Sequence[Sequence[Interval]], truths: Sequence[Interval], k: int, threshold: float = TIOU_THRESHOLD
) -> float | None:
    """Recall@k at tIoU ``threshold`` (seed 002 App. C.1, "recall@x, tIoU" with x = ``k``): the
    share of queries whose first ``k`` predicted intervals include one with tIoU >= ``threshold``
    against the query's truth. ``ranked[i]`` are query i's predictions, best first (an empty list:
    not found); ``truths[i]`` its true interval. None for no queries. Raises ValueError when the
    lengths differ or k < 1."""
    if len(ranked) != len(truths):
        raise ValueError("one list of predictions per truth")
    if k < 1:
        raise ValueError("k must be at least 1")
    if not truths:
        return None
    found = sum(
        1
        for preds, truth in zip(ranked, truths, strict=True)
        if hit_rank(list(preds)[:k], truth, threshold) is not None
    )
    return found / len(truths)


# ------------------------------------------------------------------------------ reading answers


class IntervalParseError(ValueError):
    """A model's answer that names no interval; the message says why, in plain words."""


# Days past the first are at most 3 digits (a log spans at most 7 days): a longer count is no time.
_TIME = r"(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?(?:\s*\+(\d{1,3})\s*d)?"
_LINE = re.compile(_TIME + r"\s*(?:-|–|—|to)\s*" + _TIME, re.IGNORECASE)
_CLOCK = re.compile(r"^\s*" + _TIME + r"\s*$", re.IGNORECASE)


def _clock_seconds(h, m, s, days) -> float:
    h, m = int(h), int(m)
    sec = float(s) if s else 0.0
    if h > 23 or m > 59 or sec >= 60:
        raise IntervalParseError(f"{h:02d}:{m:02d}:{sec:02.0f} is not a time of day")
    return int(days or 0) * DAY_S + h * 3600 + m * 60 + sec


def _virtual(clock_s: float, explicit_day: bool, start: datetime | None) -> float:
    """Virtual seconds of a clock time (seconds after midnight, plus days when given) in a log
    starting at ``start``: the first such moment at or after the start (the next day when the time
    is earlier than the start's, unless a day was given)."""
    base = 0.0
    if start is not None:
        base = (start - start.replace(hour=0, minute=0, second=0, microsecond=0)).total_seconds()
    t = clock_s - base
    if t < 0 and not explicit_day:
        t += DAY_S
    return t


def _pair(a: float, b: float) -> Interval:
    if b <= a:
        b += DAY_S  # 23:50 - 00:10 crosses midnight
    return a, b


def _from_json(value, start: datetime | None) -> list[Interval]:
    if isinstance(value, dict):
        value = value.get("intervals", value.get("interval"))
    if isinstance(value, list) and len(value) == 2 and all(isinstance(x, (int, float, str)) for x in value):
        value = [value]
    if not isinstance(value, list):
        raise IntervalParseError('JSON answer without "intervals": [[start, end], ...]')
    out = []
    for item in value:
        if isinstance(item, dict):
            item = [item.get("start"), item.get("end")]
        if not (isinstance(item, list) and len(item) == 2):
            raise IntervalParseError("each interval must be [start, end]")
        times = []
        for x in item:
            if isinstance(x, bool) or x is None:
                raise IntervalParseError("a time must be a number of seconds or HH:MM:SS")
            if isinstance(x, (int, float)):
                if not math.isfinite(x) or x < 0:
                    raise IntervalParseError("a time in seconds must be a number from 0")
                times.append(("s", float(x)))
            else:
                m = _CLOCK.match(str(x))
                if not m:
                    raise IntervalParseError(f"{str(x)[:20]!r} is not HH:MM:SS")
                times.append(("c", _virtual(_clock_seconds(*m.groups()), bool(m[4]), start)))
        (ka, a), (kb, b) = times
        out.append(_pair(a, b) if "c" in (ka, kb) else (a, b))
    return out


def parse_intervals(text: str, start: datetime | None = None, *, limit: int = MAX_INTERVALS) -> list[Interval]:
    """The intervals (virtual seconds after ``start``, best first, at most ``limit``) a model's
    free-text answer names, in the format of this module's docstring. Clock times are wall-clock
    times of a log starting at ``start`` (None: clock times are seconds after midnight). Raises
    IntervalParseError saying why when it names none, or an interval ends before it starts."""
    body = (text or "").strip()
    if not body:
        raise IntervalParseError("empty answer")
    fenced = re.sub(r"^```(?:json)?\s*|\s*```$", "", body)
    if fenced[:1] in "[{":
        try:
            value = json.loads(fenced)
        except (json.JSONDecodeError, RecursionError):  # RecursionError: arrays nested thousands deep
            value = None
        if value is not None:
            intervals = _from_json(value, start)
            if not intervals:
                raise IntervalParseError("no interval in the answer")
            return _checked(intervals)[:limit]
    intervals = []
    for m in _LINE.finditer(body):
        a = _virtual(_clock_seconds(*m.groups()[:4]), bool(m[4]), start)
        b = _virtual(_clock_seconds(*m.groups()[4:]), bool(m[8]), start)
        intervals.append(_pair(a, b))
    if not intervals:
        raise IntervalParseError("no interval found (expected lines of HH:MM:SS - HH:MM:SS, or JSON)")
    return _checked(intervals)[:limit]


def _checked(intervals: list[Interval]) -> list[Interval]:
    for s, e in intervals:
        if e <= s:
            raise IntervalParseError(f"an interval ends before it starts ({s:g} s to {e:g} s)")
    return intervals


def format_clock(start: datetime | None, t: float) -> str:
    """``HH:MM:SS`` wall-clock of virtual second ``t`` in a log starting at ``start`` (``+Nd`` past
    its first day), the form ``parse_intervals`` reads back."""
    base = start or datetime(2000, 1, 1)
    at = base + timedelta(seconds=round(t))
    days = (at.date() - base.date()).days
    return at.strftime("%H:%M:%S") + (f" +{days}d" if days else "")
