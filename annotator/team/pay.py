"""The pay report (issue 20, section 6): per person, the units, videos and active hours a project's
rate pays for over a period, and the amount.

Which units count (``PayRate``): real units always; gold units if ``count_gold`` (default yes: the
annotator cannot tell them apart, and did the work); qualification units if ``count_qualification``
(default no); tutorial examples never. A unit sent back to the person for rework (a rework queue item
assigned to them: a reviewer rejected it, or they reopened it) counts only if ``count_rework``
(default yes), and then once: rework adds no unit. With no rate set, the report counts as the
defaults say and has no amount.

- **units**: counted units of which the person submitted a pass (any kind), counted in the period of
  their *first* submit on the unit, so a unit is paid once even if reworked in a later period.
- **videos**: distinct videos of those units, counted in the period of the person's first submit on
  any counted unit of the video. Two people who split one video's units are each paid for it: set
  the rate per unit when videos are split.
- **active hours**: active time (``activity``) in the period on counted units, skipped and unfinished
  ones included (the person worked), whatever the basis.

Money is Decimal, never float. Per video or per unit: rate x count, exact. Per active hour: active
time is first rounded to whole seconds (half up), then amount = rate x seconds / 3600, rounded once,
half up, to 0.01; ``active_hours`` shown is seconds / 3600 rounded half up to 0.01 (the amount is
not computed from the rounded hours). Every currency is shown with 2 decimals. JSON carries money
and hours as strings ("40.00") so no reader turns them into floats.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal

from django.contrib.auth import get_user_model

from annotator.core.cells import guard_cell
from annotator.qa.models import QueueItem, WorkUnit
from annotator.team import stats
from annotator.team.figures import Period
from annotator.team.models import PayRate

CENT = Decimal("0.01")
CSV_COLUMNS = ("user", "units", "videos", "active_hours", "amount", "currency")


def rate_of(project) -> PayRate | None:
    return PayRate.objects.filter(project=project).first()


def rate_dict(rate: PayRate | None) -> dict | None:
    if rate is None:
        return None
    return {
        "basis": rate.basis,
        "basis_label": rate.get_basis_display(),
        "amount": str(rate.amount),
        "currency": rate.currency,
        "count_gold": rate.count_gold,
        "count_qualification": rate.count_qualification,
        "count_rework": rate.count_rework,
    }


def counted_purposes(rate: PayRate) -> set[str]:
    purposes = {WorkUnit.Purpose.REAL}
    if rate.count_gold:
        purposes.add(WorkUnit.Purpose.GOLD)
    if rate.count_qualification:
        purposes.add(WorkUnit.Purpose.QUALIFICATION)
    return purposes


def _in(period: Period, t) -> bool:
    return (period.start is None or t >= period.start) and (period.end is None or t < period.end)


def whole_seconds(seconds: float) -> int:
    return int(Decimal(repr(seconds)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def hours(seconds: int) -> Decimal:
    return (Decimal(seconds) / 3600).quantize(CENT, rounding=ROUND_HALF_UP)


def amount_for(rate: PayRate, units: int, videos: int, seconds: int) -> Decimal:
    """What ``rate`` pays for ``units`` units, ``videos`` videos and ``seconds`` active seconds (its
    basis picks one), rounded as the module says."""
    if rate.basis == PayRate.Basis.UNIT:
        return (rate.amount * units).quantize(CENT)
    if rate.basis == PayRate.Basis.VIDEO:
        return (rate.amount * videos).quantize(CENT)
    return (rate.amount * seconds / 3600).quantize(CENT, rounding=ROUND_HALF_UP)


def report(project, period: Period, only: list[int] | None = None) -> dict:
    """``{"rate": rate_dict | None, "people": [...], "total": {"amount", "currency"} | None}``; one
    row per person (``stats.people``, or the ids in ``only``) with ``user``, ``user_id``, ``units``,
    ``videos``, ``active_s`` (whole seconds on counted units), ``active_hours``, ``amount`` and
    ``currency`` (amount and currency null with no rate). Four queries, fewer within ``stats.shared()``
    after ``stats.rows`` of the same period."""
    rate = rate_of(project)
    rules = rate or PayRate(project=project)  # the defaults, for counting
    purposes = counted_purposes(rules)
    if only is None:
        listed = stats.people(project, period)
    else:
        listed = list(get_user_model().objects.filter(pk__in=only).order_by("username").values_list("id", "username"))
    ids = [u for u, _ in listed]
    sent_back = set(
        QueueItem.objects.filter(project=project, kind=QueueItem.Kind.REWORK, assigned_to__in=ids).values_list(
            "assigned_to", "unit_id"
        )
    )

    def counted(user_id: int, unit_id: int | None, purpose: str | None) -> bool:
        return (
            unit_id is not None and purpose in purposes and (rules.count_rework or (user_id, unit_id) not in sent_back)
        )

    first: dict[int, dict[int, tuple]] = defaultdict(dict)  # user -> unit -> (first submit, video)
    for user_id, unit_id, purpose, video_id, at in QueueItem.objects.filter(
        project=project, status=QueueItem.Status.DONE, completed_by__in=ids
    ).values_list("completed_by", "unit_id", "unit__purpose", "unit__video_id", "completed_at"):
        if counted(user_id, unit_id, purpose):
            seen = first[user_id].get(unit_id)
            if seen is None or at < seen[0]:
                first[user_id][unit_id] = (at, video_id)
    seconds: dict[int, float] = defaultdict(float)
    for s in stats.stretches(project, ids, period):
        if counted(s.user_id, s.unit_id, s.purpose):
            seconds[s.user_id] += s.seconds

    people, total = [], Decimal("0.00")
    for user_id, username in listed:
        mine = first.get(user_id, {})
        units = sum(1 for at, _ in mine.values() if _in(period, at))
        video_first: dict[int, object] = {}
        for at, video in mine.values():
            if video not in video_first or at < video_first[video]:
                video_first[video] = at
        videos = sum(1 for at in video_first.values() if _in(period, at))
        secs = whole_seconds(seconds.get(user_id, 0.0))
        amount = amount_for(rate, units, videos, secs) if rate else None
        if amount is not None:
            total += amount
        people.append(
            {
                "user": username,
                "user_id": user_id,
                "units": units,
                "videos": videos,
                "active_s": secs,
                "active_hours": str(hours(secs)),
                "amount": str(amount) if amount is not None else None,
                "currency": rate.currency if rate else None,
            }
        )
    return {
        "rate": rate_dict(rate),
        "people": people,
        "total": {"amount": str(total), "currency": rate.currency} if rate else None,
    }


def csv_lines(data: dict) -> Iterator[str]:
    """The report's people as CSV (``CSV_COLUMNS``), a header first; every cell guarded against
    spreadsheet formulas (``core.cells.guard_cell``: a username may start with + - or @)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(CSV_COLUMNS)
    for row in data["people"]:
        writer.writerow([guard_cell("" if row[k] is None else row[k]) for k in CSV_COLUMNS])
    yield buf.getvalue()
