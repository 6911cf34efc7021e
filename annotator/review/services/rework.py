"""Reopening one's own unit before it is reviewed, and sending a unit back to a person as rework."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max

from annotator.errors import Conflict, Forbidden
from annotator.qa.models import QueueItem, WorkUnit
from annotator.qa.services import DECIDING_KINDS
from annotator.review.models import ReviewState
from annotator.review.services.common import REWORK_PRIORITY, _open_rework, _refuse_unless_awaiting

# ------------------------------------------------------------------------------------ reopening


def reopen_unit(unit_id: int, user) -> ReviewState:
    """Reopen ``user``'s own submitted unit before it is reviewed: a rework item assigned to them
    (served to them first) goes back over the unit, and its state becomes ``reopened`` until they
    submit it again (then ``resubmitted``, awaiting review; a unit of an open round stays in it).

    Raises Conflict (nothing submitted yet; already reviewed; already reopened; a deciding pass
    open), Forbidden (someone else submitted the unit's last pass), WorkUnit.DoesNotExist."""
    with transaction.atomic():
        state = ReviewState.objects.select_for_update().filter(unit_id=unit_id).first()
        if state is None:
            unit = WorkUnit.objects.get(pk=unit_id)
            if (
                unit.purpose == WorkUnit.Purpose.GOLD
                and QueueItem.objects.filter(unit_id=unit_id, completed_by=user).exists()
            ):
                # A gold copy whose state went as a double-checked unit's moves on (``settle_gold``):
                # the refusal a real unit's first annotator gets then (issue 20).
                raise Forbidden("only the person who submitted this unit's last pass may reopen it")
            raise Conflict("this unit has not been submitted yet: there is nothing to reopen")
        if state.annotator_id != user.pk:
            raise Forbidden("only the person who submitted this unit's last pass may reopen it")
        _refuse_unless_awaiting(state, "reopened")
        state.rework_item = _open_rework(state)
        state.state = ReviewState.State.REOPENED
        state.save(update_fields=["state", "rework_item", "updated_at"])
    return state


def send_back(unit_id: int, to_user, *, priority: int = REWORK_PRIORITY) -> QueueItem:
    """An admin's reopening of a unit (any review state, accepted included): a rework item over it,
    assigned to ``to_user``, served to them first. Goes through the unit's review-state lock, so it
    cannot race a review into two open reworks; a unit in review becomes ``reopened`` until the
    rework is submitted (then ``resubmitted``, with its submitter as the unit's annotator). The
    rework's payload has no comments (``reopened`` true). Returns the item.

    Raises Conflict (a deciding pass of the unit, a rework included, is open), WorkUnit.DoesNotExist."""
    with transaction.atomic():
        state = ReviewState.objects.select_for_update().filter(unit_id=unit_id).first()
        unit = WorkUnit.objects.get(pk=unit_id)
        open_pass = (
            QueueItem.objects.select_for_update()
            .filter(unit_id=unit_id, kind__in=DECIDING_KINDS, status=QueueItem.Status.OPEN)
            .first()
        )
        if open_pass is not None:
            raise Conflict(f"a {open_pass.get_kind_display()} of this unit is open already")
        seq = QueueItem.objects.filter(unit_id=unit_id, kind=QueueItem.Kind.REWORK).aggregate(n=Max("seq"))["n"]
        item = QueueItem.objects.create(
            project_id=unit.project_id,
            unit_id=unit_id,
            kind=QueueItem.Kind.REWORK,
            seq=0 if seq is None else seq + 1,
            priority=priority,
            assigned_to=to_user,
        )
        if state is not None:
            state.state, state.rework_item = ReviewState.State.REOPENED, item
            state.save(update_fields=["state", "rework_item", "updated_at"])
    return item
