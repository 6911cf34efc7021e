"""Active time (issue 20, section 5): counted from a person's activity beats, idle gaps removed.

A *beat* (``models.Beat``) is written when the verify page claims a unit, when its heartbeat renews
the lease (every ``QUEUE_HEARTBEAT_SECONDS``), when it autosaves and when it submits. The API's
views call ``beat`` for the first three; the submit is recorded by ``on_submit``, an
``annotator.qa.services.after_submit`` hook (inside the submit's transaction).

Active time is the sum, over a person's consecutive beats in a project (ordered by time), of the gaps
between them that are short enough to be work:

1. **Idle cut.** A gap counts only if shorter than ``idle_cut()`` = 2 heartbeat intervals + 15 s
   (75 s at the default 30 s): one late or lost heartbeat is forgiven, two are idle. A longer gap
   (a laptop asleep, a closed page, a night) adds nothing at all, not even the cut.
2. **Heartbeats alone are not work for long.** The page's heartbeat runs while the page is open, even
   hidden and untouched (``static/js/verify/``), so a page left open on an awake computer would
   otherwise count all night. A gap that ends in a heartbeat counts only while its start is within
   ``HEARTBEAT_ONLY_S`` (10 minutes) of the person's last claim, autosave or submit; the page
   autosaves on every decision and edit, and when it is hidden. A gap ending in a claim, autosave
   or submit always counts (under the cut): the person just did something.

Not wall time: a person who works 09:00-09:20, leaves the page open and comes back at 11:00 has
about 30 minutes (20 plus up to 10 of heartbeats), not 2 hours. Each counted gap is credited to the
unit (and its purpose and pass kind) of the beat that ends it, and clipped to the period asked for,
so a gap across midnight is split between the two days. Seconds throughout.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from annotator.qa.services import after_submit
from annotator.team.figures import Period
from annotator.team.models import Beat

CLAIM, HEARTBEAT, AUTOSAVE, SUBMIT = Beat.Kind.CLAIM, Beat.Kind.HEARTBEAT, Beat.Kind.AUTOSAVE, Beat.Kind.SUBMIT
CUT_SLACK_S = 15
HEARTBEAT_ONLY_S = 600


def idle_cut() -> timedelta:
    """The longest gap between two beats that is still work (exclusive): 2 heartbeat intervals + 15 s."""
    return timedelta(seconds=2 * settings.QUEUE_HEARTBEAT_SECONDS + CUT_SLACK_S)


def beat(project_id: int, user_id: int, item_id: int | None, kind: str, at=None) -> Beat:
    """Record that ``user_id`` worked on queue item ``item_id`` of project ``project_id`` at ``at``
    (now by default). ``kind``: claim, heartbeat, autosave or submit. One INSERT."""
    return Beat.objects.create(
        project_id=project_id, user_id=user_id, item_id=item_id, kind=kind, at=at or timezone.now()
    )


@after_submit
def on_submit(item, unit, user, result) -> None:
    """The submit's beat, at the item's completion time (runs inside the submit's transaction)."""
    beat(item.project_id, user.pk, item.pk, SUBMIT, at=item.completed_at)


@dataclass(frozen=True)
class Stretch:
    """Active seconds of one person on one unit (None: the queue item is gone), by the unit's
    ``purpose`` and the pass ``kind`` of the item."""

    user_id: int
    unit_id: int | None
    purpose: str | None
    kind: str | None
    seconds: float


# One statement: the person's beats in a window a little wider than the period (so the beat before a
# gap that crosses the period's start, and the last input before it, are seen), each with the beat
# before it (LAG) and the time of the last claim, autosave or submit strictly before it; then the
# gaps that count, clipped to the period, summed per queue item; then those sums (a few per unit)
# joined to their items and units. Served by ``team_beat_person_time``.
_ACTIVE_SQL = """
WITH b AS (
    SELECT b.user_id, b.kind, b.at, b.item_id,
           LAG(b.at) OVER w AS prev,
           MAX(CASE WHEN b.kind <> 'heartbeat' THEN b.at END)
               OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS last_input
    FROM team_beat b
    WHERE b.project_id = %(project)s AND b.user_id = ANY(%(users)s) {window}
    WINDOW w AS (PARTITION BY b.user_id ORDER BY b.at, b.id)
), g AS (
    SELECT user_id, item_id, SUM(EXTRACT(EPOCH FROM {upper} - {lower}))::float8 AS seconds
    FROM b
    WHERE prev IS NOT NULL AND at - prev < %(cut)s
      AND (kind <> 'heartbeat' OR prev - last_input <= %(heartbeat_only)s) {overlap}
    GROUP BY user_id, item_id
)
SELECT g.user_id, q.unit_id, u.purpose, q.kind, SUM(g.seconds)
FROM g
LEFT JOIN qa_queueitem q ON q.id = g.item_id
LEFT JOIN qa_workunit u ON u.id = q.unit_id
GROUP BY g.user_id, q.unit_id, u.purpose, q.kind
ORDER BY g.user_id, q.unit_id"""


def stretches(project, user_ids, period: Period) -> list[Stretch]:
    """Active seconds per person and unit over ``period`` (see the module's rules). One query."""
    users = sorted(set(user_ids))
    if not users:
        return []
    cut, heartbeat_only = idle_cut(), timedelta(seconds=HEARTBEAT_ONLY_S)
    params = {"project": project.pk, "users": users, "cut": cut, "heartbeat_only": heartbeat_only}
    window, overlap, upper, lower = [], [], "at", "prev"
    if period.start is not None:
        params["start"], params["lo"] = period.start, period.start - cut - heartbeat_only
        window.append("AND b.at >= %(lo)s")
        overlap.append("AND at > %(start)s")
        lower = "GREATEST(prev, %(start)s)"
    if period.end is not None:
        params["end"], params["hi"] = period.end, period.end + cut
        window.append("AND b.at < %(hi)s")
        overlap.append("AND prev < %(end)s")
        upper = "LEAST(at, %(end)s)"
    sql = _ACTIVE_SQL.format(window=" ".join(window), overlap=" ".join(overlap), upper=upper, lower=lower)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [Stretch(*row) for row in cursor.fetchall()]


def active_seconds(project, user_ids, period: Period) -> dict[int, float]:
    """Active seconds per person over ``period`` (every unit, every purpose); people with none are left out."""
    out: dict[int, float] = defaultdict(float)
    for s in stretches(project, user_ids, period):
        out[s.user_id] += s.seconds
    return dict(out)
