"""Claiming queue items: the one place leases are taken, renewed, released and checked.

Claim protocol (``claim_next``), one SQL statement:

1. If the person already holds an open item of the project (even with a lapsed lease nobody took
   over), renew and return it: a reload or a second tab gets the same unit, not a second one.
2. Otherwise select the first open item in serving order (priority, id) whose lease is empty or
   lapsed and that is assigned to the person (rework, an admin's assignment); failing that, the
   first such unassigned item that is not excluded for this person (the first annotator of a
   double-check), of a unit none of whose passes they skipped, and whose unit they have not
   already completed a pass of (so overlap gets k distinct people), ``FOR UPDATE SKIP LOCKED``:
   rows another transaction is claiming are skipped rather than waited on, and PostgreSQL re-checks the lease condition on rows committed
   meanwhile, so two claimers can never both get one item.
3. Write the lease (holder, expiry = now + ``QUEUE_LEASE_SECONDS``) and commit. A person holds at
   most one open item per project (unique partial index), so two tabs claiming at the same moment
   cannot both take one: the loser's statement fails and is retried, and then finds step 1's item.

Leases are short and renewed by the page's heartbeat (``renew``); a closed page stops renewing and
its item comes back by itself once the lease lapses, as step 2 sees it as free.

After a lapse (a laptop asleep), the holder keeps the item until someone else claims it: their
heartbeat, autosave and submit still work. Once someone else claimed it, they get NotHeld with a
message saying what became of their saved work (``item_of``): their autosave row is never deleted
by someone else; on a first pass or double-check it is carried over to the new holder
(``selectors.unit_payload``), on a blind overlap pass it is only shown to admins on the unit's
history; and its time stays credited to them (``selectors.progress``).

``claimed_at`` (set when a person takes a free item, kept when a holder comes back) bounds every
time the holder reports (``time_bound_ms``).

Before the statement, the claim policies other apps register (``before_claim``; issue 20: the
qualification gate and gold checks of ``annotator.gold``) run in order. A policy may make an item
assigned to the person (a gold or qualification copy: step 2 then serves it first), refuse the
claim with a domain error whose words the person reads (paused, out of tries), or answer a ``Gate``
that narrows step 2 to the items assigned to the person (while they qualify). This module imports
none of them: arrows point down (issue 23).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotator.errors import Conflict, NotHeld
from annotator.projects.models import Project
from annotator.qa.models import QueueItem


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.QUEUE_LEASE_SECONDS)


@dataclass(frozen=True)
class Gate:
    """What a claim policy asks of one claim: ``only_assigned`` serves the person only their
    qualification items (assigned to them; nothing from the shared queue, and no other item an admin
    assigned to them: that would open the real queue before they qualify, issue 20); ``then``, if
    given, is called with the item once the claim has taken a new one (not when it renewed the held
    item, nor when it found nothing): gold's ``premake_for`` message, issue 20."""

    only_assigned: bool = False
    then: Callable[[QueueItem], None] | None = None


# Policies run before every claim as ``policy(project, user) -> Gate | None``, in the order registered.
# A policy may write (a copy assigned to the person) and may raise a domain error (``Forbidden`` with
# the reason and whom to ask) to refuse the claim; it is never given the held item, and should be a
# single round trip when it has nothing to do (the claim is the hottest path of the platform).
CLAIM_POLICIES: list = []


def before_claim(policy):
    """Decorator: run ``policy(project, user) -> Gate | None`` before every claim. Returns ``policy``."""
    if policy not in CLAIM_POLICIES:
        CLAIM_POLICIES.append(policy)
    return policy


# The claim is one SQL statement in autocommit: it is the hottest path of the platform, and one round
# trip with no ORM compiling keeps it flat from a thousand to a million queued items. Each part is
# served by a partial index (``queueitem_one_lease_per_person``, ``queueitem_open_assigned``,
# ``queueitem_open_order``). ``held`` renews the item the person already holds; only if there is
# none does ``free`` take the first claimable item assigned to them (rework, an admin's assignment;
# COALESCE evaluates its second argument only when the first is NULL), else the first claimable
# unassigned item (not when a claim policy's ``Gate`` says ``only_assigned``: someone qualifying),
# skipping rows that concurrent claimers have locked. A skip keeps every pass of the skipped unit
# from the person (issue 20: a skip is never followed by the unit's other pass), and a blind overlap
# pass is not served to someone who reviewed the unit (their ledger's ``review`` rows: they saw the
# first pass's work, issue 20).
#
# ``_STUDY_PENDING_SQL``: a unit about footage (a video, its day-night partners, the video a night
# rendition came from) of an item the person still has to answer in a human-baseline study is not
# served to them: its page would show the pair's answer, or the events in order (issue 8,
# Integrity). Every item about a QA pair names the pair's footage, so this also covers the pair's
# own unit.
_STUDY_PENDING_SQL = """
    EXISTS (SELECT 1 FROM studies_trial t
            JOIN studies_participant p ON p.id = t.participant_id
            JOIN studies_item si ON si.id = t.item_id
            JOIN qa_workunit u ON u.id = i.unit_id
            JOIN media_video v ON v.id = u.video_id
                 OR v.id IN (SELECT m.video_id FROM media_videogroupmember m WHERE m.group_id = u.group_id)
            WHERE p.user_id = %(user)s AND t.answered_at IS NULL
              AND si.footage_id = COALESCE(v.derived_from_id, v.id))"""

# An unassigned item ``i`` of the shared queue that the person may claim now (parameters project,
# user, person, now). The gold pick asks for one with the same words (``gold.claims``: a gold unit
# followed by "nothing left" would give itself away).
SHARED_CLAIMABLE_SQL = (
    """i.project_id = %(project)s AND i.status = 'open' AND i.assigned_to_id IS NULL
           AND (i.lease_expires_at IS NULL OR i.lease_expires_at <= %(now)s)
           AND (i.exclude_user_id IS NULL OR i.exclude_user_id <> %(user)s)
           AND NOT EXISTS (SELECT 1 FROM qa_skip s JOIN qa_queueitem k ON k.id = s.item_id
                           WHERE s.user_id = %(user)s AND k.unit_id = i.unit_id)
           AND NOT EXISTS (SELECT 1 FROM qa_queueitem d WHERE d.unit_id = i.unit_id AND d.completed_by_id = %(user)s)
           AND (i.kind <> 'overlap' OR NOT EXISTS (
                SELECT 1 FROM exposure_exposure e WHERE e.project_id = %(project)s AND e.person = %(person)s
                  AND e.source = 'review' AND e.ref = 'unit:' || i.unit_id))
           AND NOT """
    + _STUDY_PENDING_SQL
)

_CLAIM_SQL = (
    """
WITH held AS (
    UPDATE qa_queueitem SET lease_expires_at = %(expires)s
    WHERE id = (SELECT id FROM qa_queueitem
                WHERE project_id = %(project)s AND status = 'open' AND leased_by_id = %(user)s
                FOR UPDATE)
    RETURNING *
), free AS (
    UPDATE qa_queueitem SET leased_by_id = %(user)s, lease_expires_at = %(expires)s, claimed_at = %(now)s
    WHERE NOT EXISTS (SELECT 1 FROM held) AND id = COALESCE(
        (SELECT i.id FROM qa_queueitem i
         WHERE i.assigned_to_id = %(user)s AND i.project_id = %(project)s AND i.status = 'open'
           AND (NOT %(only_assigned)s OR i.kind = 'qualification')
           AND (i.lease_expires_at IS NULL OR i.lease_expires_at <= %(now)s)
           AND NOT EXISTS (SELECT 1 FROM qa_skip s WHERE s.item_id = i.id AND s.user_id = %(user)s)
           -- A gold copy made ahead (gold.claims.premake) only while the shared queue has a unit
           -- for the person: gold, then "nothing left", would give it away.
           AND (NOT EXISTS (SELECT 1 FROM qa_workunit g WHERE g.id = i.unit_id AND g.purpose = 'gold')
                OR EXISTS (SELECT 1 FROM qa_queueitem i WHERE """
    + SHARED_CLAIMABLE_SQL
    + """))
           AND NOT """
    + _STUDY_PENDING_SQL
    + """
         ORDER BY i.priority, i.id
         LIMIT 1
         FOR UPDATE SKIP LOCKED),
        (SELECT i.id FROM qa_queueitem i
         WHERE NOT %(only_assigned)s AND """
    + SHARED_CLAIMABLE_SQL
    + """
         ORDER BY i.priority, i.id
         LIMIT 1
         FOR UPDATE SKIP LOCKED))
    RETURNING *
)
SELECT r.*, EXISTS (SELECT 1 FROM qa_autosave a WHERE a.item_id = r.id) AS has_autosave
FROM (SELECT * FROM held UNION ALL SELECT * FROM free) r"""
)


def _item_from_row(cursor) -> QueueItem | None:
    row = cursor.fetchone()
    if row is None:
        return None
    values = dict(zip((d.name for d in cursor.description), row))
    fields = QueueItem._meta.concrete_fields
    item = QueueItem.from_db("default", [f.attname for f in fields], [values[f.column] for f in fields])
    # Anyone's autosave: the person's own, or work carried over from an earlier holder. Lets the page
    # payload skip a query when there is none.
    item.has_autosave = values.get("has_autosave", True)
    return item


def claim_next(project: Project, user) -> QueueItem | None:
    """Lease the next queue item of ``project`` to ``user``; None when nothing is claimable for them.

    One person holds at most one open item per project (a unique partial index). When the same
    person claims from two tabs at once, both statements may pick a free item; the index lets only
    one of them commit, and the other is retried and then finds the held item. A claim that finds
    nothing looks once more, for the same reason (a tab that took the last free item meanwhile).

    The claim policies (``before_claim``) run first, once; one may raise a domain error (Forbidden:
    the person may not take units now, with the reason in words), which this raises unchanged. The
    steps their gates name (``Gate.then``) run after a new item was taken.
    """
    only_assigned, then = False, []
    for policy in CLAIM_POLICIES:
        gate = policy(project, user)
        only_assigned = only_assigned or bool(gate is not None and gate.only_assigned)
        if gate is not None and gate.then is not None:
            then.append(gate.then)
    for attempt in range(3):
        now = timezone.now()
        params = {
            "project": project.pk,
            "user": user.pk,
            "now": now,
            "expires": now + lease_duration(),
            "only_assigned": only_assigned,
            "person": f"user:{user.pk}",
        }  # exposure.ledger.person_key
        try:
            if connection.in_atomic_block:  # inside a caller's transaction: a savepoint keeps it usable
                with transaction.atomic():
                    item = _claim_once(project, params)
            else:
                item = _claim_once(project, params)  # autocommit: one round trip
        except IntegrityError:
            if attempt == 2:
                raise
            continue
        if item is not None and item.claimed_at == params["now"]:  # a new item taken, not the held one renewed
            for step in then:
                step(item)
        if item is not None or attempt > 0:
            return item
        # Nothing, once: another tab of this person may have just taken the last free item (its lease
        # committed after this statement's snapshot, the other free items locked by more tabs). A
        # second look finds it held; an empty queue costs one more statement.
    return None


def _claim_once(project: Project, params: dict) -> QueueItem | None:
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM_SQL, params)
        item = _item_from_row(cursor)
    if item is not None:
        item.project = project  # already loaded by the caller: no query to read it again
        if item.claimed_at == params["now"]:  # taken now, not the held item renewed
            record_exposure(item, params["user"])
    return item


# What a unit shows (``record_exposure``): its video, its group's members and the labelled videos of
# its QA pairs (``videos``: a list of objects; a ``video_id`` that is a whole JSON number counts),
# each once and by id, then each QA pair with its answer, by id. No rows when the unit is gone.
_UNIT_SHOWN_SQL = """
SELECT kind, video_id, NULL::float8, NULL::float8, qa_pair_id, row_number() OVER (ORDER BY k, key) FROM (
    SELECT 0 AS k, 'footage'::varchar AS kind, f.video_id, NULL::bigint AS qa_pair_id, f.video_id AS key
    FROM (SELECT u.video_id FROM qa_workunit u WHERE u.id = %(rows_unit)s
          UNION
          SELECT m.video_id FROM qa_workunit u JOIN media_videogroupmember m ON m.group_id = u.group_id
          WHERE u.id = %(rows_unit)s
          UNION
          SELECT (e ->> 'video_id')::bigint FROM qa_qapair q,
                 jsonb_array_elements(CASE jsonb_typeof(q.videos) WHEN 'array' THEN q.videos ELSE '[]' END) e
          WHERE q.unit_id = %(rows_unit)s AND jsonb_typeof(e -> 'video_id') = 'number'
            AND e ->> 'video_id' ~ '^-?[0-9]+$') f
    UNION ALL
    SELECT 1, 'answer', NULL, q.id, q.id FROM qa_qapair q WHERE q.unit_id = %(rows_unit)s) x"""


def record_exposure(item: QueueItem, user_id: int, source: str = "queue") -> int:
    """Append to the exposure ledger (issue 19) what the unit of ``item`` shows the person who just
    claimed it: every video the verify page may play (the unit's, its group's members, the labelled
    videos of its QA pairs; ``media.file_access.may_see_video``), whole, and each of its QA pairs with
    its answer. Kept through skip, lapse and release: the page had it all. ``source``: ``queue`` (a
    claim) or ``review`` (the review page, ``review.views``). Reads and writes in one statement
    (``_UNIT_SHOWN_SQL``). Returns rows written (0 when the unit is gone)."""
    from annotator.exposure import ledger

    return ledger.record_rows(
        ledger.person_key(user_id=user_id),
        item.project_id,
        _UNIT_SHOWN_SQL,
        {"rows_unit": item.unit_id},
        source=source,
        ref=f"unit:{item.unit_id}",
    )


def item_of(unit_id: int, user, *, lock: bool = True) -> QueueItem:
    """The open item of unit ``unit_id`` that ``user`` holds (lease live, or lapsed and not taken over).

    Raises NotHeld when someone else took it over or the person never claimed it, and
    QueueItem.DoesNotExist when the unit has no open item at all. Call inside a transaction when
    ``lock`` is true (the row is locked ``FOR UPDATE``).
    """
    qs = QueueItem.objects.select_for_update() if lock else QueueItem.objects
    item = qs.filter(unit_id=unit_id, status=QueueItem.Status.OPEN, leased_by=user).first()
    if item is not None:
        return item
    open_items = list(QueueItem.objects.filter(unit_id=unit_id, status=QueueItem.Status.OPEN))
    if open_items:
        raise NotHeld(_not_held_message(open_items, user))
    raise QueueItem.DoesNotExist


def refuse_unless_held(unit_id: int, user) -> None:
    """Return if ``user`` holds an open item of the unit (``item_of``, unlocked); else raise why not:
    NotHeld with what became of their work, or Conflict when the unit has no open item (it was
    submitted). For a statement that found nothing to write and must say why in words."""
    try:
        item_of(unit_id, user, lock=False)
    except QueueItem.DoesNotExist:
        raise Conflict("this unit was already submitted") from None


def _not_held_message(open_items: list[QueueItem], user) -> str:
    """Plain words for someone whose item of a unit went to someone else: what became of their work."""
    from annotator.qa.models import Autosave

    saved = (
        Autosave.objects.filter(item__in=open_items, user=user).select_related("item").order_by("-updated_at").first()
    )
    if saved is None:
        return (
            "You no longer hold this unit: your lease lapsed (no heartbeat for a while) and another annotator "
            "took it, or you never claimed it. Nothing of yours was saved on it."
        )
    minutes = f"{saved.time_spent_ms / 60000:.1f} min"
    when = timezone.localtime(saved.updated_at).strftime("%H:%M %Z")
    if saved.item.kind == QueueItem.Kind.OVERLAP:
        fate = (
            "This is a blind overlap pass, so your work was not passed on: it is kept, and the project's "
            "admins can see it on the unit's history."
        )
    else:
        fate = "Your work was passed on to them, so they continue from where you left off."
    return (
        f"Your lease on this unit lapsed (no heartbeat for a while) and another annotator took it. "
        f"Your work saved at {when} is kept. {fate} Your {minutes} on it stay credited to you."
    )


def time_bound_ms(item: QueueItem, now=None) -> int:
    """The most time (ms) the holder of ``item`` can have spent on it: the wall time since their
    claim (``claimed_at``) plus ``QUEUE_TIME_SLACK_S``. If they held the item before, lost it and
    claimed it again, their time counts from the claim under which they first saved work on it
    (``Autosave.claimed_at``), since the page restores that time. An item claimed before
    ``claimed_at`` existed is bounded by one day, which still refuses absurd values (a 32-bit
    overflow, a clock gone wrong)."""
    from annotator.qa.models import Autosave

    earlier = (
        (
            Autosave.objects.filter(item_id=item.pk, user_id=item.leased_by_id)
            .values_list("claimed_at", flat=True)
            .first()
        )
        if item.leased_by_id
        else None
    )
    return time_bound_from(item.claimed_at, earlier, now)


def time_bound_from(claimed_at, earlier, now=None) -> int:
    """``time_bound_ms`` from the two claims (datetimes, None when absent) read by the caller: the
    item's ``claimed_at`` and the ``Autosave.claimed_at`` of the holder's saved work on it."""
    now = now or timezone.now()
    slack_ms = settings.QUEUE_TIME_SLACK_S * 1000
    starts = [t for t in (claimed_at, earlier) if t is not None]
    if not starts:
        return 24 * 3600 * 1000 + slack_ms
    return max(0, int((now - min(starts)).total_seconds() * 1000)) + slack_ms


# The heartbeat: the person's open item of the unit (``item_of``'s; at most one, as a person holds at
# most one open item per project), its lease extended.
_RENEW_SQL = """
UPDATE qa_queueitem SET lease_expires_at = %(expires)s
WHERE unit_id = %(unit)s AND status = 'open' AND leased_by_id = %(user)s
RETURNING *"""


def renew(unit_id: int, user) -> QueueItem:
    """Extend the person's lease on their item of the unit (the page's heartbeat), in one statement.
    Returns the item with its new ``lease_expires_at``; raises NotHeld if it is no longer theirs,
    and Conflict if the unit has no open item (it was submitted), both from ``refuse_unless_held``."""
    for _ in range(2):
        with connection.cursor() as cursor:
            cursor.execute(_RENEW_SQL, {"unit": unit_id, "user": user.pk, "expires": timezone.now() + lease_duration()})
            item = _item_from_row(cursor)
        if item is not None:
            return item
        refuse_unless_held(unit_id, user)
        # Held after all: it changed hands between the two statements (taken back, say). Once more.
    raise Conflict("this unit changed while you renewed your lease; reload the page")


def release(item: QueueItem) -> None:
    """Give the item back to the queue now (after a skip). Must run in the caller's transaction."""
    item.leased_by = None
    item.lease_expires_at = None
    item.save(update_fields=["leased_by", "lease_expires_at"])
