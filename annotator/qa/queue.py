"""Claiming queue items: the one place leases are taken, renewed, released and checked.

Claim protocol (``claim_next``), one SQL statement:

1. If the person already holds an open item of the project (even with a lapsed lease nobody took
   over), renew and return it: a reload or a second tab gets the same unit, not a second one.
2. Otherwise select the first open item in serving order (priority, id) whose lease is empty or
   lapsed, that is not excluded for this person (the first annotator of a double-check), that
   they have not skipped, and whose unit they have not already completed a pass of (so overlap
   gets k distinct people), ``FOR UPDATE SKIP LOCKED``: rows another transaction is claiming are
   skipped rather than waited on, and PostgreSQL re-checks the lease condition on rows committed
   meanwhile, so two claimers can never both get one item.
3. Write the lease (holder, expiry = now + ``QUEUE_LEASE_SECONDS``) and commit. A person holds at
   most one open item per project (unique partial index), so two tabs claiming at the same moment
   cannot both take one: the loser's statement fails and is retried, and then finds step 1's item.

Leases are short and renewed by the page's heartbeat (``renew``); a closed page stops renewing and
its item comes back by itself once the lease lapses, as step 2 sees it as free.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotator.errors import Conflict, NotHeld
from annotator.projects.models import Project
from annotator.qa.models import QueueItem


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.QUEUE_LEASE_SECONDS)


# The claim is one SQL statement in autocommit: it is the hottest path of the platform, and one round
# trip with no ORM compiling keeps it flat from a thousand to a million queued items. Each part is
# served by a partial index (``queueitem_one_lease_per_person``, ``queueitem_open_order``).
# ``held`` renews the item the person already holds; only if there is none does ``free`` take the
# first claimable item, skipping rows that concurrent claimers have locked.
_CLAIM_SQL = """
WITH held AS (
    UPDATE qa_queueitem SET lease_expires_at = %(expires)s
    WHERE id = (SELECT id FROM qa_queueitem
                WHERE project_id = %(project)s AND status = 'open' AND leased_by_id = %(user)s
                FOR UPDATE)
    RETURNING *
), free AS (
    UPDATE qa_queueitem SET leased_by_id = %(user)s, lease_expires_at = %(expires)s, claimed_at = %(now)s
    WHERE NOT EXISTS (SELECT 1 FROM held) AND id = (
        SELECT i.id FROM qa_queueitem i
        WHERE i.project_id = %(project)s AND i.status = 'open'
          AND (i.lease_expires_at IS NULL OR i.lease_expires_at <= %(now)s)
          AND (i.exclude_user_id IS NULL OR i.exclude_user_id <> %(user)s)
          AND NOT EXISTS (SELECT 1 FROM qa_skip s WHERE s.item_id = i.id AND s.user_id = %(user)s)
          AND NOT EXISTS (SELECT 1 FROM qa_queueitem d WHERE d.unit_id = i.unit_id AND d.completed_by_id = %(user)s)
        ORDER BY i.priority, i.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
    RETURNING *
)
SELECT r.*, EXISTS (SELECT 1 FROM qa_autosave a WHERE a.item_id = r.id AND a.user_id = %(user)s) AS has_autosave
FROM (SELECT * FROM held UNION ALL SELECT * FROM free) r"""


def _item_from_row(cursor) -> QueueItem | None:
    row = cursor.fetchone()
    if row is None:
        return None
    values = dict(zip((d.name for d in cursor.description), row))
    fields = QueueItem._meta.concrete_fields
    item = QueueItem.from_db("default", [f.attname for f in fields], [values[f.column] for f in fields])
    item.has_autosave = values.get("has_autosave", True)  # lets the page payload skip a query
    return item


def claim_next(project: Project, user) -> QueueItem | None:
    """Lease the next queue item of ``project`` to ``user``; None when nothing is claimable for them.

    One person holds at most one open item per project (a unique partial index). When the same
    person claims from two tabs at once, both statements may pick a free item; the index lets only
    one of them commit, and the other is retried and then finds the held item.
    """
    for attempt in range(3):
        now = timezone.now()
        params = {"project": project.pk, "user": user.pk, "now": now, "expires": now + lease_duration()}
        try:
            if connection.in_atomic_block:  # inside a caller's transaction: a savepoint keeps it usable
                with transaction.atomic():
                    return _claim_once(project, params)
            return _claim_once(project, params)  # autocommit: one round trip
        except IntegrityError:
            if attempt == 2:
                raise
    return None


def _claim_once(project: Project, params: dict) -> QueueItem | None:
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM_SQL, params)
        item = _item_from_row(cursor)
    if item is not None:
        item.project = project  # already loaded by the caller: no query to read it again
    return item


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
    if QueueItem.objects.filter(unit_id=unit_id, status=QueueItem.Status.OPEN).exists():
        raise NotHeld("you do not hold this unit: its lease lapsed and it went to someone else, or you never claimed it")
    raise QueueItem.DoesNotExist


def renew(unit_id: int, user) -> QueueItem:
    """Extend the person's lease on their item of the unit (the page's heartbeat). Returns the item
    with its new ``lease_expires_at``; raises NotHeld if it is no longer theirs, and
    Conflict if the unit has no open item (it was submitted)."""
    with transaction.atomic():
        try:
            item = item_of(unit_id, user)
        except QueueItem.DoesNotExist:
            raise Conflict("this unit was already submitted") from None
        item.lease_expires_at = timezone.now() + lease_duration()
        item.save(update_fields=["lease_expires_at"])
    return item


def release(item: QueueItem) -> None:
    """Give the item back to the queue now (after a skip). Must run in the caller's transaction."""
    item.leased_by = None
    item.lease_expires_at = None
    item.save(update_fields=["leased_by", "lease_expires_at"])
