"""One clock format for times within a video (issue 21): ``h:mm:ss.f``, tenths of a second, hours
always shown, as ``static/js/clock.js``'s ``hms`` writes it for the pages' scripts."""

from __future__ import annotations

import math


def hms(seconds: float | int | None) -> str:
    """``seconds`` (of a video, a float) as ``h:mm:ss.f``: ``hms(1081.2) == "0:18:01.2"``. Rounded to
    tenths first, so 59.96 s reads ``0:01:00.0``. None, a negative, NaN or infinite value reads as 0,
    as in the script; a value that is not a number raises TypeError."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        seconds = 0.0
    tenths = math.floor(seconds * 10 + 0.5)  # half up, as the script's Math.round (not half to even)
    hours, rest = divmod(tenths, 36000)
    minutes, rest = divmod(rest, 600)
    return f"{hours}:{minutes:02d}:{rest // 10:02d}.{rest % 10}"


def span(start: float | None, end: float | None) -> str:
    """Two times as ``h:mm:ss.f – h:mm:ss.f`` (an en dash between), as ``clock.js``'s ``span``."""
    return f"{hms(start)} – {hms(end)}"
