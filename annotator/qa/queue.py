"""Claiming queue items: the one place leases are taken, renewed, released and checked.

Claim protocol (``claim_next``), in one transaction:

1. Take a transaction-scoped advisory lock on (project, person), so one person's concurrent claims
   (two tabs loading at once) run one after the other; other people are not blocked.
2. If the person already holds an open item of the project (even with a lapsed lease nobody took
   over), renew and return it: a reload or a second tab gets the same unit, not a second one.
3. Otherwise select the first open item in serving order (priority, id) whose lease is empty or
   lapsed, that is not excluded for this person (the first annotator of a double-check), that
   they have not skipped, and whose unit they have not already completed a pass of (so overlap
   gets k distinct people), ``FOR UPDATE SKIP LOCKED``: rows another transaction is claiming are
   skipped rather than waited on, and PostgreSQL re-checks the lease condition on rows committed
   meanwhile, so two claimers can never both get one item.
4. Write the lease (holder, expiry = now + ``QUEUE_LEASE_SECONDS``) and commit.

Leases are short and renewed by the page's heartbeat (``renew``); a closed page stops renewing and
its item comes back by itself once the lease lapses, as step 3 sees it as free.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotator.projects.models import Project
from annotator.qa.models import QueueItem, Skip

_CLAIM_LOCK_NAMESPACE = 0x5141  # "QA": first key of the advisory lock, the second is the person


class LeaseError(Exception):
    """The person does not hold the item (any more). ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 409):
        super().__init__(message)
        self.status = status


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.QUEUE_LEASE_SECONDS)


def _lock_person(project: Project, user) -> None:
    with connection.cursor() as cursor:
        key = (project.pk * 1_000_003 + user.pk) & 0x7FFFFFFF  # fits int4; a rare collision only serialises two people
        cursor.execute("SELECT pg_advisory_xact_lock(%s::int, %s::int)", [_CLAIM_LOCK_NAMESPACE, key])


def claim_next(project: Project, user) -> QueueItem | None:
    """Lease the next queue item of ``project`` to ``user``; None when nothing is claimable for them."""
    now = timezone.now()
    with transaction.atomic():
        _lock_person(project, user)
        item = (
            QueueItem.objects.select_for_update()
            .filter(project=project, status=QueueItem.Status.OPEN, leased_by=user)
            .order_by("priority", "id")
            .first()
        )
        if item is None:
            skipped = Skip.objects.filter(item=OuterRef("pk"), user=user)
            done_unit = QueueItem.objects.filter(unit=OuterRef("unit"), completed_by=user)
            item = (
                QueueItem.objects.select_for_update(skip_locked=True)
                .filter(project=project, status=QueueItem.Status.OPEN)
                .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now))
                .filter(Q(exclude_user__isnull=True) | ~Q(exclude_user=user))
                .filter(~Exists(skipped), ~Exists(done_unit))
                .order_by("priority", "id")
                .first()
            )
        if item is None:
            return None
        item.leased_by = user
        item.lease_expires_at = now + lease_duration()
        item.save(update_fields=["leased_by", "lease_expires_at"])
    return item


def held_by_other(item: QueueItem, user, now: datetime | None = None) -> bool:
    """True if someone other than ``user`` holds a live lease on ``item``."""
    now = now or timezone.now()
    return (
        item.leased_by_id is not None
        and item.leased_by_id != user.pk
        and item.lease_expires_at is not None
        and item.lease_expires_at > now
    )


def item_of(unit_id: int, user, *, lock: bool = True) -> QueueItem:
    """The open item of unit ``unit_id`` that ``user`` holds (lease live, or lapsed and not taken over).

    Raises LeaseError (409) when someone else took it over or the person never claimed it, and
    QueueItem.DoesNotExist when the unit has no open item at all. Call inside a transaction when
    ``lock`` is true (the row is locked ``FOR UPDATE``).
    """
    qs = QueueItem.objects.select_for_update() if lock else QueueItem.objects
    item = qs.filter(unit_id=unit_id, status=QueueItem.Status.OPEN, leased_by=user).first()
    if item is not None:
        return item
    if QueueItem.objects.filter(unit_id=unit_id, status=QueueItem.Status.OPEN).exists():
        raise LeaseError("you do not hold this unit: its lease lapsed and it went to someone else, or you never claimed it")
    raise QueueItem.DoesNotExist


def renew(unit_id: int, user) -> QueueItem:
    """Extend the person's lease on their item of the unit (the page's heartbeat). Returns the item
    with its new ``lease_expires_at``; raises LeaseError (409) if it is no longer theirs, and
    QueueItem.DoesNotExist if the unit has no open item (it was submitted)."""
    with transaction.atomic():
        item = item_of(unit_id, user)
        item.lease_expires_at = timezone.now() + lease_duration()
        item.save(update_fields=["lease_expires_at"])
    return item


def release(item: QueueItem) -> None:
    """Give the item back to the queue now (after a skip). Must run in the caller's transaction."""
    item.leased_by = None
    item.lease_expires_at = None
    item.save(update_fields=["leased_by", "lease_expires_at"])
