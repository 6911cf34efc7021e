"""Reads of annotator.team that pages, the API and the commands share: periods from dates, and one
person's own figures and pay (for the "My work" page)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.utils import timezone

from annotator.errors import Invalid
from annotator.team import pay, stats
from annotator.team.figures import Period

FIRST_DAY = date(2000, 1, 1)
LAST_DAY = date(2100, 12, 31)
PRESETS = {
    "all": "all time",
    "today": "today",
    "7d": "the last 7 days",
    "month": "this month",
    "last_month": "last month",
    "custom": "the dates chosen",
}


def parse_day(text, field: str) -> date | None:
    """``text`` (YYYY-MM-DD) as a date; None for an empty value. Raises Invalid naming ``field``."""
    if text is None or text == "":
        return None
    bad = Invalid("the period has errors", errors={field: "a date written YYYY-MM-DD"})
    if not isinstance(text, str) or len(text) != 10:
        raise bad
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise bad from None


def period_of(first: date | None, last: date | None, *, required: bool = False) -> Period:
    """The days ``first`` to ``last``, both included, as a half-open Period in the server's time zone
    (``TIME_ZONE``, UTC here): [first 00:00, last + 1 day 00:00). A missing side is open, unless
    ``required``. Raises Invalid: a missing date that is required, a date before 2000-01-01 or after
    2100-12-31, or ``last`` before ``first``."""
    errors = {}
    for field, day in (("from", first), ("to", last)):
        if day is None and required:
            errors[field] = "required (a date written YYYY-MM-DD)"
        elif day is not None and not FIRST_DAY <= day <= LAST_DAY:
            errors[field] = f"a date from {FIRST_DAY} to {LAST_DAY}"
    if not errors and first is not None and last is not None and last < first:
        errors["to"] = "must not be before from"
    if errors:
        raise Invalid("the period has errors", errors=errors)
    zone = timezone.get_current_timezone()
    return Period(
        start=datetime.combine(first, time.min, zone) if first else None,
        end=datetime.combine(last + timedelta(days=1), time.min, zone) if last else None,
    )


def preset_dates(name: str, today: date | None = None) -> tuple[date | None, date | None]:
    """The first and last day of a named period (``PRESETS``, not ``custom``); raises Invalid."""
    today = today or timezone.localdate()
    if name == "all":
        return None, None
    if name == "today":
        return today, today
    if name == "7d":
        return today - timedelta(days=6), today
    if name == "month":
        return today.replace(day=1), today
    if name == "last_month":
        last = today.replace(day=1) - timedelta(days=1)
        return last.replace(day=1), last
    raise Invalid("unknown period", errors={"period": "one of: " + ", ".join(PRESETS)})


def own_figures(project, user, period: Period) -> dict:
    """One person's own figures and pay over ``period`` (the "My work" page):
    ``{"figures": row, "pay": row, "rate": rate | None}``, with the rows of ``stats.rows`` and
    ``pay.report`` for this person alone (listed even with nothing done: zeros and nulls). Reveals
    nothing of anyone else."""
    report = pay.report(project, period, only=[user.pk])
    return {
        "figures": stats.rows(project, period, only=[user.pk])[0],
        "pay": report["people"][0],
        "rate": report["rate"],
    }
