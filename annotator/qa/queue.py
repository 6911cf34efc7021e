"""Claiming work units: the one place leases are taken, renewed and checked.

Claim protocol (``claim_next``), in one transaction:

1. If the annotator already holds a live lease on an open unit of the project, renew and return
   it: a reload or a second tab gets the same unit, not a second one.
2. Otherwise select the first open unit in serving order (priority, id) whose lease is empty or
   lapsed, ``FOR UPDATE SKIP LOCKED``: rows another transaction is claiming are skipped rather
   than waited on, and PostgreSQL re-checks the lease condition on rows committed meanwhile, so
   two claimers can never both get one unit.
3. Write the lease (holder, expiry = now + ``QUEUE_LEASE_SECONDS``) and commit.

An abandoned unit comes back by itself: once its lease lapses, step 2 sees it as free.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotator.projects.models import Project
from annotator.qa.models import WorkUnit


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.QUEUE_LEASE_SECONDS)


def claim_next(project: Project, user) -> WorkUnit | None:
    """Lease the next unit of ``project`` to ``user``; None when nothing is claimable."""
    now = timezone.now()
    with transaction.atomic():
        unit = (
            WorkUnit.objects.select_for_update(skip_locked=True)
            .filter(project=project, status=WorkUnit.Status.OPEN, leased_by=user, lease_expires_at__gt=now)
            .order_by("priority", "id")
            .first()
        )
        if unit is None:
            unit = (
                WorkUnit.objects.select_for_update(skip_locked=True)
                .filter(project=project, status=WorkUnit.Status.OPEN)
                .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now))
                .order_by("priority", "id")
                .first()
            )
        if unit is None:
            return None
        unit.leased_by = user
        unit.lease_expires_at = now + lease_duration()
        unit.save(update_fields=["leased_by", "lease_expires_at"])
    return unit


def held_by_other(unit: WorkUnit, user, now=None) -> bool:
    """True if someone other than ``user`` holds a live lease on ``unit``."""
    now = now or timezone.now()
    return (
        unit.leased_by_id is not None
        and unit.leased_by_id != user.pk
        and unit.lease_expires_at is not None
        and unit.lease_expires_at > now
    )
