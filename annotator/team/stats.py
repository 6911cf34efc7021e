"""Per-annotator figures of this app (issue 20, section 5), registered in ``annotator.team.figures``,
and the report that puts every registered figure in one row per person.

Figures over a ``Period`` (half-open; a pass counts in the period its submit falls in):

- ``units``: distinct real units (``WorkUnit.purpose == real``) of which the person submitted a
  pass (first pass, overlap, double-check, rework) in the period; ``passes``: those passes.
- ``qa_pairs``: the decisions in those passes (keep, modify, delete, and QA pairs added), real units only.
- ``active_s``: active seconds (``activity``: beats with idle gaps removed), on every unit, gold
  and qualification units included: it is the time the person worked.
- ``reported_s``: the time the verify page reported for those passes (``QueueItem.time_spent_ms``,
  hidden-page time left out by the page), beside active time as a cross-check.
- ``time_per_unit_s``: active seconds on real units / ``units``.
- ``override_rate``: of the person's first-pass decisions (keep, modify, add) in the period on real
  units whose pair was then decided in a double-check (any time), the share the double-check
  changed (modified or deleted; a double-check cannot "modify" without a change). ``override_n``:
  that denominator. EgoNight's random double-check (seed 000 Sec. 3.2) is what this measures against.
- ``agreement``: pairwise percent agreement with overlap peers: over the QA pairs of real units the
  person decided blind (first pass or overlap: keep, modify, delete) in the period, and every other
  person's blind decision on the same pair (any time), the share of (pair, peer) comparisons with the
  same decision. The agreement app measures the same decisions (scope ``verification``) for the
  whole team; its ``rater_pairs`` (``annotator.scoring.agreement``) gives each rater pair's percent
  agreement and shared items, and this pools the person's row over their peers (Fleiss 1971's
  pairwise agreement, pooled per rater). A later pass of the same person on a pair replaces their
  earlier one, as in the agreement app. ``agreement_n``: the comparisons.

``gold_accuracy`` (``annotator.gold``) and ``rework_rate`` (``annotator.review``) are registered by
their apps; ``annotators`` shows them as null when nobody registered them.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Callable
from contextvars import ContextVar

from django.contrib.auth import get_user_model
from django.db.models import Count, Q, Sum

from annotator.projects.models import Membership, Role
from annotator.qa.models import QueueItem, Verdict, WorkUnit
from annotator.team import activity, figures
from annotator.team.figures import Period
from annotator.team.models import Beat

REAL = WorkUnit.Purpose.REAL
BLIND = (QueueItem.Kind.FIRST_PASS, QueueItem.Kind.OVERLAP)
# The keys every row has, in the order of the JSON shape, then this app's extras.
SHAPE = ("user", "units", "qa_pairs", "active_s", "gold_accuracy", "override_rate", "agreement", "rework_rate")
EXTRAS = ("user_id", "passes", "reported_s", "time_per_unit_s", "override_n", "agreement_n")

# Figures computed together (active time for two figures and the pay report, a rate with its count)
# are computed once per report: ``shared()`` keeps results for the duration of one ``rows`` call, or
# of a page that also asks for the pay report. Nested, it reuses the outer one.
_memo: ContextVar[dict | None] = ContextVar("team_stats_memo", default=None)


@contextlib.contextmanager
def shared():
    if _memo.get() is not None:
        yield
        return
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def _once(name: str, project, users: list[int], period: Period, compute: Callable[[], object]):
    memo = _memo.get()
    if memo is None:
        return compute()
    key = (name, project.pk, tuple(users), period)
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def within(field: str, period: Period) -> Q:
    """``field`` in ``[period.start, period.end)`` (an open side is no condition)."""
    q = Q()
    if period.start is not None:
        q &= Q(**{f"{field}__gte": period.start})
    if period.end is not None:
        q &= Q(**{f"{field}__lt": period.end})
    return q


# ------------------------------------------------------------------------------ units and passes


def _passes(project, users, period):
    def compute():
        rows = (
            QueueItem.objects.filter(
                within("completed_at", period),
                project=project,
                status=QueueItem.Status.DONE,
                completed_by__in=users,
                unit__purpose=REAL,
            )
            .values("completed_by")
            .annotate(units=Count("unit", distinct=True), passes=Count("id"), reported_ms=Sum("time_spent_ms"))
        )
        return {r["completed_by"]: r for r in rows}

    return _once("passes", project, users, period, compute)


@figures.register("units")
def units(project, users, period) -> dict[int, int]:
    return {u: r["units"] for u, r in _passes(project, users, period).items()}


@figures.register("passes")
def passes(project, users, period) -> dict[int, int]:
    return {u: r["passes"] for u, r in _passes(project, users, period).items()}


@figures.register("reported_s")
def reported_s(project, users, period) -> dict[int, float]:
    return {u: round((r["reported_ms"] or 0) / 1000, 1) for u, r in _passes(project, users, period).items()}


@figures.register("qa_pairs")
def qa_pairs(project, users, period) -> dict[int, int]:
    rows = (
        Verdict.objects.filter(
            within("item__completed_at", period), item__project=project, user__in=users, item__unit__purpose=REAL
        )
        .values("user")
        .annotate(n=Count("id"))
    )
    return {r["user"]: r["n"] for r in rows}


# ------------------------------------------------------------------------------ time


def stretches(project, users, period) -> list[activity.Stretch]:
    """``activity.stretches``, computed once within ``shared()``."""
    users = sorted(set(users))
    return _once("stretches", project, users, period, lambda: activity.stretches(project, users, period))


@figures.register("active_s")
def active_s(project, users, period) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    for s in stretches(project, users, period):
        out[s.user_id] += s.seconds
    return {u: round(v, 1) for u, v in out.items()}


@figures.register("time_per_unit_s")
def time_per_unit_s(project, users, period) -> dict[int, float]:
    real: dict[int, float] = defaultdict(float)
    for s in stretches(project, users, period):
        if s.purpose == REAL:
            real[s.user_id] += s.seconds
    done = units(project, users, period)
    return {u: round(real[u] / n, 1) for u, n in done.items() if n}


# ------------------------------------------------------------------------------ quality


def _overrides(project, users, period) -> dict[int, tuple[int, int]]:
    """{user: (changed, decided)} (see the module's ``override_rate``). Two queries."""

    def compute():
        first = list(
            Verdict.objects.filter(
                within("item__completed_at", period),
                item__project=project,
                user__in=users,
                item__kind=QueueItem.Kind.FIRST_PASS,
                item__unit__purpose=REAL,
                action__in=("keep", "modify", "add"),
                qa_pair__isnull=False,
            ).values_list("user_id", "qa_pair_id")
        )
        checked: dict[int, bool] = {}
        for pair, action in Verdict.objects.filter(
            item__kind=QueueItem.Kind.DOUBLE_CHECK,
            item__status=QueueItem.Status.DONE,
            qa_pair_id__in={p for _, p in first},
        ).values_list("qa_pair_id", "action"):
            checked[pair] = checked.get(pair, False) or action in ("modify", "delete")
        out: dict[int, list[int]] = {}
        for user, pair in set(first):
            if pair in checked:
                counts = out.setdefault(user, [0, 0])
                counts[0] += checked[pair]
                counts[1] += 1
        return {u: (c, n) for u, (c, n) in out.items()}

    return _once("overrides", project, users, period, compute)


@figures.register("override_rate")
def override_rate(project, users, period) -> dict[int, float]:
    return {u: round(c / n, 4) for u, (c, n) in _overrides(project, users, period).items() if n}


@figures.register("override_n")
def override_n(project, users, period) -> dict[int, int]:
    return {u: n for u, (_, n) in _overrides(project, users, period).items()}


def _agreement(project, users, period) -> dict[int, tuple[int, int]]:
    """{user: (same, compared)} (see the module's ``agreement``). Two queries, and one
    ``rater_pairs`` per person with peers."""

    def compute():
        from annotator.scoring.agreement import Ratings, rater_pairs

        base = Verdict.objects.filter(
            item__project=project,
            item__kind__in=BLIND,
            item__unit__purpose=REAL,
            qa_pair__isnull=False,
            action__in=("keep", "modify", "delete"),
        )
        mine: dict[int, set[int]] = defaultdict(set)
        for user, pair in base.filter(within("item__completed_at", period), user__in=users).values_list(
            "user_id", "qa_pair_id"
        ):
            mine[user].add(pair)
        decided: dict[int, dict[str, str]] = defaultdict(dict)
        for pair, user, action in (
            base.filter(qa_pair_id__in=set().union(*mine.values()))
            .order_by("id")
            .values_list("qa_pair_id", "user_id", "action")
        ):
            decided[pair][str(user)] = action  # a later pass of the same person wins
        out = {}
        for user, pairs in mine.items():
            triples = [
                (str(p), rater, action)
                for p in sorted(pairs)
                if len(decided[p]) >= 2
                for rater, action in decided[p].items()
            ]
            if not triples:
                continue
            table = rater_pairs(Ratings.from_triples(triples, "nominal"))
            me = table["raters"].index(str(user))
            same = compared = 0
            for j, (share, n) in enumerate(zip(table["agreement"][me], table["shared"][me])):
                if j != me and n:
                    same += round(share * n)
                    compared += n
            out[user] = (same, compared)
        return out

    return _once("agreement", project, users, period, compute)


@figures.register("agreement")
def agreement(project, users, period) -> dict[int, float]:
    return {u: round(s / n, 4) for u, (s, n) in _agreement(project, users, period).items() if n}


@figures.register("agreement_n")
def agreement_n(project, users, period) -> dict[int, int]:
    return {u: n for u, (_, n) in _agreement(project, users, period).items()}


# ------------------------------------------------------------------------------ the report


def people(project, period: Period) -> list[tuple[int, str]]:
    """Who the report lists, as (user id, username) by username: the project's annotators, and
    anyone else who submitted a pass or was active (a beat) in it during ``period``. Three queries
    (once within ``shared()``)."""
    return _once("people", project, [], period, lambda: _people(project, period))


def _people(project, period: Period) -> list[tuple[int, str]]:
    ids = set(Membership.objects.filter(project=project, role=Role.ANNOTATOR).values_list("user_id", flat=True))
    ids |= set(
        QueueItem.objects.filter(within("completed_at", period), project=project, status=QueueItem.Status.DONE)
        .values_list("completed_by", flat=True)
        .distinct()
    )
    ids |= set(Beat.objects.filter(within("at", period), project=project).values_list("user_id", flat=True).distinct())
    ids.discard(None)
    return list(get_user_model().objects.filter(pk__in=ids).order_by("username").values_list("id", "username"))


def _gold(value) -> dict:
    """``gold_accuracy`` as the issue's ``{"value", "ci", "n"}`` whatever its provider returns (a
    number, or a mapping with ``value``, ``ci`` (two numbers, or a mapping with low/high) and ``n``);
    all null when there is none."""
    if value is None:
        return {"value": None, "ci": None, "n": None}
    if isinstance(value, (int, float)):
        return {"value": float(value), "ci": None, "n": None}
    ci = value.get("ci")
    if isinstance(ci, dict):
        ci = [ci.get("low", ci.get("lo")), ci.get("high", ci.get("hi"))]
    if not (isinstance(ci, (list, tuple)) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci)):
        ci = None
    n = value.get("n")
    v = value.get("value")
    return {
        "value": float(v) if isinstance(v, (int, float)) else None,
        "ci": [float(x) for x in ci] if ci else None,
        "n": int(n) if isinstance(n, int) else None,
    }


def rows(project, period: Period, only: list[int] | None = None) -> list[dict]:
    """One row per person (``people``, or just the ids in ``only``): the issue's keys (``SHAPE``),
    this app's extras (``EXTRAS``) and any other registered figure. Counts default to 0; a figure
    with nothing to measure is null (``gold_accuracy`` an object of nulls)."""
    if only is None:
        listed = people(project, period)
    else:
        listed = list(get_user_model().objects.filter(pk__in=only).order_by("username").values_list("id", "username"))
    ids = [u for u, _ in listed]
    with shared():
        values = figures.compute(project, ids, period) if ids else {}
    zero = {"units", "qa_pairs", "passes", "active_s", "reported_s"}
    out = []
    for user_id, username in listed:
        row = {"user": username, "user_id": user_id}
        for name in (*SHAPE[1:], *EXTRAS[1:], *sorted(values)):
            if name in row:
                continue
            value = values.get(name, {}).get(user_id)
            row[name] = 0 if value is None and name in zero else value
        row["gold_accuracy"] = _gold(values.get("gold_accuracy", {}).get(user_id))
        out.append(row)
    return out


def annotators(project, period: Period) -> dict:
    """The issue's JSON: ``{"annotators": [row, ...]}`` (``rows``)."""
    return {"annotators": rows(project, period)}
