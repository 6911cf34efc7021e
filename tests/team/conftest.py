"""A small scripted team with every time known, for checking annotator_stats and pay_report by hand.

Five units, each on its own video made by ``make_unit`` (one open QA pair ``q`` and one multiple-choice
pair ``m``), except U4, a gold copy put on U1's video:

    U1 real  v1   A first pass (q modify, m keep); B overlap (q delete, m keep); C double-check (q delete, m keep)
    U2 real  v2   A first pass (q keep, m keep);                               C double-check (q keep, m keep)
    U3 real  v3   B first pass (q keep, m keep); later sent back to B for rework (an open rework item)
    U4 gold  v1   A first pass (keep, keep)
    U5 qual. v5   C qualification (keep, keep)

Real passes go through the real submit service (leases written directly, so the claim's queue
policy, owned by another app, plays no part); the gold and qualification passes are written as rows,
so hooks of the apps that own those purposes play no part either. Then every pass's completion
time is set and the activity beats are written at these times (UTC; day 1 = 2026-03-02, day 2 = 2026-03-03):

    A day 1: 09:00:00 claim U1, 09:00:30 hb, 09:01:00 hb, 09:01:20 autosave, 09:01:40 submit U1
             09:01:50 claim U2, 09:02:20 submit U2
             12:00:00 claim U4 (after 3 h idle), 12:00:45 submit U4
    B day 1: 10:00:00 claim U1 overlap, 10:00:30 hb, 10:01:00 autosave, 10:01:10 submit
             10:03:00 claim U3 (110 s later: idle), 10:03:30 hb, 10:04:00 hb, 10:04:05 submit U3
    C day 2: 14:00:00 claim DC U1, 14:00:40 submit; 14:00:50 claim DC U2, 14:01:10 submit
             14:02:00 claim U5 (qualification), 14:02:30 submit U5
"""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from annotator.projects.services import ensure_member
from annotator.qa.models import QAPair, QueueItem, Verdict, WorkUnit
from annotator.qa.services import Decision, submit_unit
from annotator.team import activity
from annotator.team.models import Beat

DAY1 = datetime(2026, 3, 2, tzinfo=UTC)
DAY2 = datetime(2026, 3, 3, tzinfo=UTC)


def at(day, clock: str) -> datetime:
    h, m, s = map(int, clock.split(":"))
    return day + timedelta(hours=h, minutes=m, seconds=s)


def _lease(item: QueueItem, user) -> None:
    now = timezone.now()
    QueueItem.objects.filter(pk=item.pk).update(
        leased_by=user, lease_expires_at=now + timedelta(hours=1), claimed_at=now - timedelta(hours=1)
    )


def _submit(item, user, decisions, key, time_spent_ms=None):
    _lease(item, user)
    submit_unit(item.unit_id, user, idempotency_key=key, decisions=decisions, additions=[], time_spent_ms=time_spent_ms)


def _done_by_rows(item, user, pairs):
    """A pass written as rows: the item done by ``user``, a keep verdict per pair."""
    QueueItem.objects.filter(pk=item.pk).update(
        status=QueueItem.Status.DONE, completed_by=user, completed_at=timezone.now()
    )
    Verdict.objects.bulk_create(
        [Verdict(item=item, qa_pair=p, user=user, action="keep", after=p.snapshot()) for p in pairs]
    )


@pytest.fixture
def team(project, make_unit):
    project.double_check_share = 0.0
    project.save()
    a = ensure_member("ann", role="annotator", project=project, password="pw-ann-123")[0]
    b = ensure_member("ann2", role="annotator", project=project, password="pw-ann2-123")[0]
    c = ensure_member("ann3", role="annotator", project=project, password="pw-ann3-123")[0]
    admin = ensure_member("boss", role="admin", project=project, password="pw-boss-123")[0]
    reviewer = ensure_member("rev", role="reviewer", project=project, password="pw-rev-123")[0]
    units = {name: make_unit(n_open=1) for name in ("U1", "U2", "U3", "U4", "U5")}
    u1, u4, u5 = units["U1"], units["U4"], units["U5"]
    # U4: a gold copy on U1's video; U5: a qualification unit.
    WorkUnit.objects.filter(pk=u4.pk).update(purpose=WorkUnit.Purpose.GOLD, video=u1.video)
    QAPair.objects.filter(unit=u4).update(video=u1.video)
    WorkUnit.objects.filter(pk=u5.pk).update(purpose=WorkUnit.Purpose.QUALIFICATION)
    QueueItem.objects.filter(unit=u5).update(kind=QueueItem.Kind.QUALIFICATION)

    def pairs(unit):
        q, m = unit.qa_pairs.order_by("id")
        return q, m

    first = {name: u.queue_items.get() for name, u in units.items()}
    q1, m1 = pairs(u1)
    _submit(
        first["U1"],
        a,
        [Decision(q1.pk, "modify", answer="a better answer"), Decision(m1.pk, "keep")],
        "a-u1",
        time_spent_ms=95_000,
    )
    q2, m2 = pairs(units["U2"])
    _submit(first["U2"], a, [Decision(q2.pk, "keep"), Decision(m2.pk, "keep")], "a-u2", time_spent_ms=38_000)
    _done_by_rows(first["U4"], a, pairs(u4))
    overlap = QueueItem.objects.create(project=project, unit=u1, kind=QueueItem.Kind.OVERLAP, seq=1)
    _submit(overlap, b, [Decision(q1.pk, "delete", reason="vague"), Decision(m1.pk, "keep")], "b-u1")
    q3, m3 = pairs(units["U3"])
    _submit(first["U3"], b, [Decision(q3.pk, "keep"), Decision(m3.pk, "keep")], "b-u3")
    dc1 = QueueItem.objects.create(project=project, unit=u1, kind=QueueItem.Kind.DOUBLE_CHECK, exclude_user=a)
    dc2 = QueueItem.objects.create(project=project, unit=units["U2"], kind=QueueItem.Kind.DOUBLE_CHECK, exclude_user=a)
    _submit(dc1, c, [Decision(q1.pk, "delete", reason="vague"), Decision(m1.pk, "keep")], "c-u1")
    _submit(dc2, c, [Decision(q2.pk, "keep"), Decision(m2.pk, "keep")], "c-u2")
    _done_by_rows(first["U5"], c, pairs(u5))
    rework = QueueItem.objects.create(project=project, unit=units["U3"], kind=QueueItem.Kind.REWORK, assigned_to=b)

    # The submit hook wrote one submit beat per real submit, at its real time; replace them by the script.
    hooked = list(Beat.objects.order_by("id").values_list("user__username", "kind", "item_id"))
    Beat.objects.all().delete()
    done_at = {
        first["U1"]: at(DAY1, "09:01:40"),
        first["U2"]: at(DAY1, "09:02:20"),
        first["U4"]: at(DAY1, "12:00:45"),
        overlap: at(DAY1, "10:01:10"),
        first["U3"]: at(DAY1, "10:04:05"),
        dc1: at(DAY2, "14:00:40"),
        dc2: at(DAY2, "14:01:10"),
        first["U5"]: at(DAY2, "14:02:30"),
    }
    for item, when in done_at.items():
        QueueItem.objects.filter(pk=item.pk).update(completed_at=when)
    script = [
        (
            a,
            first["U1"],
            DAY1,
            [
                ("09:00:00", "claim"),
                ("09:00:30", "heartbeat"),
                ("09:01:00", "heartbeat"),
                ("09:01:20", "autosave"),
                ("09:01:40", "submit"),
            ],
        ),
        (a, first["U2"], DAY1, [("09:01:50", "claim"), ("09:02:20", "submit")]),
        (a, first["U4"], DAY1, [("12:00:00", "claim"), ("12:00:45", "submit")]),
        (
            b,
            overlap,
            DAY1,
            [("10:00:00", "claim"), ("10:00:30", "heartbeat"), ("10:01:00", "autosave"), ("10:01:10", "submit")],
        ),
        (
            b,
            first["U3"],
            DAY1,
            [("10:03:00", "claim"), ("10:03:30", "heartbeat"), ("10:04:00", "heartbeat"), ("10:04:05", "submit")],
        ),
        (c, dc1, DAY2, [("14:00:00", "claim"), ("14:00:40", "submit")]),
        (c, dc2, DAY2, [("14:00:50", "claim"), ("14:01:10", "submit")]),
        (c, first["U5"], DAY2, [("14:02:00", "claim"), ("14:02:30", "submit")]),
    ]
    for user, item, day, beats in script:
        for clock, kind in beats:
            activity.beat(project.pk, user.pk, item.pk, kind, at=at(day, clock))
    return {
        "project": project,
        "A": a,
        "B": b,
        "C": c,
        "admin": admin,
        "reviewer": reviewer,
        "units": units,
        "hooked": hooked,
        "rework": rework,
        "items": {"A-U1": first["U1"], "B-U1": overlap},
    }
