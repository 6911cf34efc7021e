"""The units list for admins (issue 20, section 7): queue items (one pass over a unit each) with
filters, keyset paging that stays flat at a million units, and the admin's actions on them.

Every filter is a column or an indexed ``EXISTS``; the page is ``id < before ORDER BY id DESC
LIMIT PAGE + 1`` (the extra row says whether an older page exists), so no page counts or sorts
the whole queue.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import BigIntegerField, Exists, ExpressionWrapper, F, OuterRef, Q

from annotator import access
from annotator.errors import Conflict, Invalid, NotFound
from annotator.media.models import Video
from annotator.projects.models import Membership, Project
from annotator.qa.models import QAPair, QAType, QueueItem, WorkUnit
from annotator.review import services as review_services
from annotator.review.models import ReviewState

PAGE = 50
MAX_ID = 2**63 - 1


@dataclass(frozen=True)
class UnitFilters:
    """The list's filters, as the page's query string gives them ('' for none)."""

    status: str = ""
    kind: str = ""
    annotator: str = ""
    qa_type: str = ""
    video: str = ""
    flagged: str = ""
    review: str = ""
    purpose: str = WorkUnit.Purpose.REAL

    def query(self) -> dict[str, str]:
        """The non-empty filters, for links that keep them."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}


def parse_filters(params) -> tuple[UnitFilters, dict[str, str]]:
    """Filters from a query string (``request.GET``): unknown choices are refused in plain words
    (``errors``: field -> message) and left out. Text is bounded to 200 characters."""
    errors: dict[str, str] = {}
    values: dict[str, str] = {}
    choices = {
        "status": QueueItem.Status.values,
        "kind": QueueItem.Kind.values,
        "flagged": ["yes", "no"],
        "review": [*ReviewState.State.values, "none"],
        "purpose": [*WorkUnit.Purpose.values, "any"],
    }
    for f in fields(UnitFilters):
        raw = (params.get(f.name) or "").strip()
        if f.name == "purpose" and not raw:
            continue  # the default: the benchmark's own units
        if len(raw) > 200:
            errors[f.name] = "at most 200 characters"
            continue
        if raw and f.name in choices and raw not in choices[f.name]:
            errors[f.name] = f"one of {', '.join(choices[f.name])}"
            continue
        values[f.name] = raw
    return UnitFilters(**values), errors


def whole_id(raw, name: str, field: str) -> int:
    """``raw`` as an id from 1 to 2^63 - 1; Invalid naming ``name`` (and ``field`` in its errors)."""
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise Invalid(f"{name} must be a whole number", errors={field: "not a number"}) from None
    if not 1 <= value <= MAX_ID:
        raise Invalid(f"{name} is out of range", errors={field: "out of range"})
    return value


def parse_before(raw) -> int | None:
    """The keyset cursor: list items with ids below it. None for the first page; Invalid when it
    is not a whole number from 1 to 2^63 - 1."""
    return None if raw in (None, "") else whole_id(raw, "the page cursor", "before")


def items_page(project: Project, filters: UnitFilters, before: int | None = None) -> tuple[list[QueueItem], int | None]:
    """One page of the project's queue items matching ``filters``, newest first, and the cursor of
    the next (older) page (None on the last). Each item has ``unit.video``, its holder, completer
    and assignee loaded, and the unit's review state (``unit.review_state``, when it was submitted)."""
    qs = QueueItem.objects.filter(project=project)
    if filters.purpose != "any":
        qs = qs.filter(unit__purpose=filters.purpose or WorkUnit.Purpose.REAL)
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.kind:
        qs = qs.filter(kind=filters.kind)
    if filters.annotator:
        # The person's id first: an OR of three indexed columns, not three joins on usernames.
        uid = get_user_model().objects.filter(username=filters.annotator).values_list("id", flat=True).first()
        qs = qs.filter(Q(leased_by_id=uid) | Q(completed_by_id=uid) | Q(assigned_to_id=uid)) if uid else qs.none()
    if filters.qa_type:
        qs = qs.filter(Exists(QAPair.objects.filter(unit_id=OuterRef("unit_id"), qa_type__slug=filters.qa_type)))
    if filters.video:
        videos = Video.objects.filter(project=project, filename__icontains=filters.video).values("id")
        qs = qs.filter(unit__video_id__in=videos)
    if filters.flagged:
        flagged = Exists(QAPair.objects.filter(unit_id=OuterRef("unit_id")).exclude(flag_reason=""))
        qs = qs.filter(flagged) if filters.flagged == "yes" else qs.exclude(flagged)
    if filters.review == "none":
        qs = qs.filter(unit__review_state__isnull=True)
    elif filters.review:
        qs = qs.filter(unit__review_state__state=filters.review)
    if before is not None:
        qs = qs.filter(id__lt=before)
    order = "-id"
    if filters.annotator:
        # One person's passes are few and may all be old: read them through the person's indexes
        # and sort them, rather than walk the queue from its newest row (``id + 0`` keeps the
        # planner off the primary key's order; 0.7 s -> ms at a million units, bench/units_page.py).
        qs, order = qs.annotate(newest=ExpressionWrapper(F("id") + 0, output_field=BigIntegerField())), "-newest"
    rows = list(
        qs.select_related("unit__video", "unit__review_state", "leased_by", "completed_by", "assigned_to").order_by(
            order
        )[: PAGE + 1]
    )
    more = len(rows) > PAGE
    rows = rows[:PAGE]
    return rows, (rows[-1].pk if more else None)


def qa_types(project: Project) -> list[str]:
    """The project's QA type slugs, for the filter's choices."""
    return list(QAType.objects.filter(project=project).order_by("slug").values_list("slug", flat=True))


def _person(project: Project, username: str):
    """An annotating member of ``project`` by username; Invalid otherwise."""
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None or not (
        user.is_superuser
        or Membership.objects.filter(project=project, user=user, role__in=access.ANNOTATE_ROLES).exists()
    ):
        raise Invalid(
            f"{username!r} is not an annotator, reviewer or admin of this project", errors={"username": "not a member"}
        )
    return user


def _refuse_copies(item: QueueItem) -> None:
    """Conflict for a pass over a gold, qualification or tutorial copy: it belongs to the one person
    it was made for (moving it would put a known answer in someone else's queue, issue 20)."""
    if WorkUnit.objects.filter(pk=item.unit_id).exclude(purpose=WorkUnit.Purpose.REAL).exists():
        raise Conflict("this is a copy made for one person's checks: it cannot be assigned, released or reopened")


def assign(project: Project, item_id: int, username: str) -> QueueItem:
    """Serve open item ``item_id`` to ``username`` only, before their other items (or to anyone again
    when ``username`` is ''). Raises NotFound, Conflict (done, or held by someone else now: release
    it first) or Invalid (not a member who annotates)."""
    with transaction.atomic():
        item = QueueItem.objects.select_for_update().filter(pk=item_id, project=project).first()
        if item is None:
            raise NotFound("no such queue item in this project")
        if item.status != QueueItem.Status.OPEN:
            raise Conflict("this pass is done: reopen the unit instead")
        _refuse_copies(item)
        user = _person(project, username) if username else None
        if item.leased_by_id and user is not None and item.leased_by_id != user.pk:
            raise Conflict("someone is working on this pass now: release it first")
        if user is not None and item.exclude_user_id == user.pk:
            raise Conflict(f"{user.username} did the first pass of this unit: a double-check must be someone else's")
        if user is not None and QueueItem.objects.filter(unit_id=item.unit_id, completed_by=user).exists():
            raise Conflict(
                f"{user.username} already did a pass of this unit: overlap and double-check need another person"
            )
        item.assigned_to = user
        item.save(update_fields=["assigned_to"])
    return item


def release(project: Project, item_id: int) -> QueueItem:
    """Take open item ``item_id`` back from its holder now (their autosaved work is kept and carried
    to the next holder as after a lapsed lease). Raises NotFound, or Conflict when it is done or
    nobody holds it."""
    with transaction.atomic():
        item = QueueItem.objects.select_for_update().filter(pk=item_id, project=project).first()
        if item is None:
            raise NotFound("no such queue item in this project")
        if item.status != QueueItem.Status.OPEN or item.leased_by_id is None:
            raise Conflict("nobody holds this pass")
        _refuse_copies(item)
        item.leased_by, item.lease_expires_at = None, None
        item.save(update_fields=["leased_by", "lease_expires_at"])
    return item


def reopen(project: Project, item_id: int, username: str = "") -> QueueItem:
    """Reopen the unit of done item ``item_id``: a ``rework`` pass over it, served first to
    ``username`` (default: whoever completed the item), through the review app
    (``review.services.send_back``: the unit's review state becomes ``reopened``). Returns the new
    item. Raises NotFound, Conflict (the item is not done, or a deciding pass of the unit, a rework
    included, is open) or Invalid."""
    item = QueueItem.objects.select_related("completed_by").filter(pk=item_id, project=project).first()
    if item is None:
        raise NotFound("no such queue item in this project")
    if item.status != QueueItem.Status.DONE:
        raise Conflict("this pass is not done yet: nothing to reopen")
    _refuse_copies(item)
    user = _person(project, username) if username else item.completed_by
    if user is None:
        raise Invalid("nobody to send it to: name a person", errors={"username": "required"})
    return review_services.send_back(item.unit_id, user)
