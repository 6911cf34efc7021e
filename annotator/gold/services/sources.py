"""Sources: verified real units whose known decisions come from the verified outcome (kept -> keep,
modified -> modify, deleted -> delete with its reason)."""

from __future__ import annotations

import random

from django.db import transaction
from django.db.models import Exists, OuterRef

from annotator.errors import Invalid
from annotator.exposure import ledger
from annotator.gold.models import (
    Known,
    Policy,
    Source,
)
from annotator.gold.services.policy import policy_of
from annotator.media.models import VideoGroupMember
from annotator.projects.models import Project
from annotator.qa.models import QAPair, QueueItem, Revision, WorkUnit
from annotator.qa.selectors import drafted_states

SOURCES_MAX = 500  # units one command or request may turn into sources


# ------------------------------------------------------------------------------------ sources


def known_decision(pair: QAPair, touched: bool) -> tuple[str, str] | None:
    """The verified outcome of a machine QA pair as a decision (action, reason): kept -> keep,
    modified -> modify, deleted by a person -> delete with its reason. None for a pair a person never
    decided (``touched``: it has a revision by a person), one a model dropped, or one a person added."""
    if pair.origin != QAPair.Origin.MACHINE or not touched:
        return None
    if pair.status == QAPair.Status.VERIFIED:
        return ("keep", "") if pair.provenance == QAPair.Provenance.MACHINE_KEPT else ("modify", "")
    if pair.status == QAPair.Status.DELETED and pair.delete_reason:
        return "delete", pair.delete_reason
    return None


def verified_units(project: Project):
    """The project's real units whose verification is over: a first pass done, no open pass, no QA
    pair still a draft, and not a source already. A queryset of ``WorkUnit``."""
    open_items = QueueItem.objects.filter(unit=OuterRef("pk"), status=QueueItem.Status.OPEN)
    done = QueueItem.objects.filter(unit=OuterRef("pk"), kind=QueueItem.Kind.FIRST_PASS, status=QueueItem.Status.DONE)
    drafts = QAPair.objects.filter(unit=OuterRef("pk"), status=QAPair.Status.DRAFT)
    sources = Source.objects.filter(unit=OuterRef("pk"))
    return (
        WorkUnit.objects.filter(project=project, purpose=WorkUnit.Purpose.REAL)
        .filter(Exists(done))
        .exclude(Exists(open_items))
        .exclude(Exists(drafts))
        .exclude(Exists(sources))
    )


def footage_of(unit: WorkUnit) -> list[int]:
    """Source footage ids (``ledger.roots``) of every video ``unit`` shows: its video, its group's
    members, and the labelled videos of its QA pairs."""
    videos = {unit.video_id}
    if unit.group_id:
        videos |= set(VideoGroupMember.objects.filter(group_id=unit.group_id).values_list("video_id", flat=True))
    for labelled in QAPair.objects.filter(unit=unit).exclude(videos=[]).values_list("videos", flat=True):
        videos |= {v["video_id"] for v in labelled or [] if isinstance(v, dict) and isinstance(v.get("video_id"), int)}
    root = ledger.roots(videos)
    return sorted({root.get(v, v) for v in videos})


def _source_from(project: Project, unit: WorkUnit, role: str, position: int, user) -> Source | None:
    """A source of ``role`` made from verified ``unit`` with its known decisions; None when no
    machine QA pair of it was decided by a person."""
    pairs = list(unit.qa_pairs.filter(origin=QAPair.Origin.MACHINE).select_related("draft").order_by("id"))
    touched = set(
        Revision.objects.filter(qa_pair__in=pairs, actor_user__isnull=False).values_list("qa_pair_id", flat=True)
    )
    decided = [(p, d) for p in pairs if (d := known_decision(p, p.pk in touched)) is not None]
    if not decided:
        return None
    states = drafted_states([p for p, _ in decided])
    actors = dict(
        Revision.objects.filter(qa_pair__in=[p for p, _ in decided], action=Revision.Action.DRAFT).values_list(
            "qa_pair_id", "actor_model"
        )
    )
    source = Source.objects.create(
        project=project, unit=unit, role=role, footage=footage_of(unit), position=position, created_by=user
    )
    Known.objects.bulk_create(
        [
            Known(
                source=source,
                qa_pair=p,
                action=action,
                reason=reason,
                shown={**states[p.pk][0], "version": states[p.pk][1], "actor": actors.get(p.pk, "")},
                expected={k: v for k, v in p.snapshot().items() if k not in ("status",)},
            )
            for p, (action, reason) in decided
        ]
    )
    return source


def make_sources(project: Project, role: str, n: int, *, user=None, unit_ids: list[int] | None = None) -> list[Source]:
    """Turn ``n`` verified units of ``project`` (``verified_units``) into sources of ``role``, chosen at
    random with the policy's seed (or the units ``unit_ids``, in that order), preferring footage no
    other source shows (a person who saw a qualification or tutorial unit could never get a gold copy
    of its footage). Returns the sources made, possibly fewer than ``n`` when fewer units qualify.
    Raises Invalid for an unknown role, ``n`` outside 1..``SOURCES_MAX``, or a named unit that is not a
    verified real unit of the project (nothing made)."""
    if role not in Source.Role.values:
        raise Invalid(f"role must be one of {', '.join(Source.Role.values)}", errors={"role": "unknown"})
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= SOURCES_MAX:
        raise Invalid(f"choose from 1 to {SOURCES_MAX} units", errors={"n": f"from 1 to {SOURCES_MAX}"})
    candidates = verified_units(project)
    with transaction.atomic():
        Policy.objects.get_or_create(project=project)
        Project.objects.select_for_update().filter(pk=project.pk).first()  # one maker at a time per project
        if unit_ids is not None:
            found = {u.pk: u for u in candidates.filter(pk__in=unit_ids)}
            missing = [u for u in unit_ids if u not in found]
            if missing:
                raise Invalid(
                    f"unit {missing[0]} is not a verified unit of this project (a real unit whose passes are "
                    "all done, none of its QA pairs a draft, not already a gold, qualification or example unit)",
                    errors={"unit": "not a verified unit"},
                )
            chosen = [found[u] for u in unit_ids]
        else:
            ids = sorted(candidates.values_list("id", flat=True))
            random.Random(f"sources:{policy_of(project).seed}:{role}:{len(ids)}").shuffle(ids)
            taken = set()
            for footage in Source.objects.filter(project=project).values_list("footage", flat=True):
                taken |= set(footage)
            units = WorkUnit.objects.in_bulk(ids[: max(n * 4, n + 20)])
            ordered = [units[i] for i in ids[: max(n * 4, n + 20)]]
            fresh = [u for u in ordered if not set(footage_of(u)) & taken]
            chosen = fresh + [u for u in ordered if u not in fresh]
        start = (
            Source.objects.filter(project=project, role=role)
            .order_by("-position")
            .values_list("position", flat=True)
            .first()
            or 0
        ) + 1
        made = []
        for unit in chosen:
            if len(made) == n:
                break
            source = _source_from(project, unit, role, start + len(made), user)
            if source is not None:
                made.append(source)
        if unit_ids is not None and len(made) < len(unit_ids):
            raise Invalid(
                "a unit named has no QA pair a person decided; nothing was made", errors={"unit": "no decisions"}
            )
    return made
