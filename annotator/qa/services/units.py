"""QA types, the units new drafts open (one per video, day-night pair, view set or life-log group),
and the queue policy (overlap, double-check shares)."""

from __future__ import annotations

import random

from django.db import transaction

from annotator.errors import Invalid
from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.media.selectors import group_window
from annotator.projects.models import Project
from annotator.qa.models import QAPair, QAType, QueueItem, Revision, WorkUnit

MAX_OVERLAP_K = 20  # distinct annotators per overlap unit, at most


def ensure_qa_type(
    project: Project,
    slug: str,
    *,
    name: str = "",
    clip_policy: str = QAType.ClipPolicy.WHOLE,
    paired: bool = False,
    window_s: float | None = None,
    description: str = "",
) -> QAType:
    """Return the project's QA type ``slug``, creating it with these fields if missing (an existing
    type is left as the admin set it). Raises Invalid for a window clip policy without a positive
    ``window_s`` (seconds)."""
    if clip_policy == QAType.ClipPolicy.WINDOW and not (window_s and window_s > 0):
        raise Invalid(
            f"QA type {slug!r}: a window clip policy needs window_s > 0 seconds", errors={"window_s": "required"}
        )
    qa_type, _ = QAType.objects.get_or_create(
        project=project,
        slug=slug,
        defaults={
            "name": name or slug.replace("_", " ").capitalize(),
            "clip_policy": clip_policy,
            "paired": paired,
            "window_s": window_s,
            "description": description,
        },
    )
    return qa_type


def chosen(project: Project, unit_id: int, what: str, share: float) -> bool:
    """Whether unit ``unit_id`` falls in the random ``share`` (0 to 1) for ``what`` (``double_check``
    or ``overlap``). Drawn from ``random.Random`` seeded by the project's ``queue_seed``, ``what``
    and the unit, so the choice is uniform over units, reproducible, and independent between kinds."""
    if share <= 0:
        return False
    return random.Random(f"{project.queue_seed}:{what}:{unit_id}").random() < share


def double_check_drawn(item: QueueItem, unit: WorkUnit) -> bool:
    """Whether the submit of pass ``item`` over ``unit`` opens a double-check: a first pass, of a unit
    in the project's ``double_check_share`` (``chosen``), that left a verified QA pair. Asked of gold
    copies too, which never get one (``submit_unit`` opens it on real units only) but answer as if
    they had (``review.services``).
    One query when drawn (the verified pairs), none otherwise."""
    return (
        item.kind == QueueItem.Kind.FIRST_PASS
        and chosen(unit.project, unit.pk, "double_check", unit.project.double_check_share)
        and unit.qa_pairs.filter(status=QAPair.Status.VERIFIED).exists()
    )


# ----------------------------------------------------------------------------- units from drafts


def groups_led_by(video: Video, kind: str, role: str) -> list[VideoGroup]:
    """Groups of ``kind`` in which ``video`` is the member with ``role`` at position 0 (the lead: day,
    ego, or a life log's first part)."""
    return list(
        VideoGroup.objects.filter(kind=kind, members__video=video, members__role=role, members__position=0).order_by(
            "id"
        )
    )


def day_night_groups_of(video: Video) -> list[VideoGroup]:
    """Day-night groups in which ``video`` is the day member."""
    return groups_led_by(video, VideoGroup.Kind.DAY_NIGHT, VideoGroupMember.Role.DAY)


def asked_of(qa_type: QAType) -> tuple[str, str] | None:
    """The group kind a QA type is asked of and the role its video leads it in: an ego-exo set
    (``set_kind`` ego_exo, EgoExoBench seed 001 Sec. 3) by its ego video, a day-night pair (``paired``,
    EgoNight seed 000 Sec. 3.2) by its day video, a life log (``set_kind`` life_log, X-LeBench seed
    002 Sec. 3) by its first part; None for one video."""
    if qa_type.set_kind == QAType.SetKind.EGO_EXO:
        return VideoGroup.Kind.EGO_EXO, VideoGroupMember.Role.EGO
    if qa_type.set_kind == QAType.SetKind.LIFE_LOG:
        return VideoGroup.Kind.LIFE_LOG, VideoGroupMember.Role.PART
    if qa_type.paired:
        return VideoGroup.Kind.DAY_NIGHT, VideoGroupMember.Role.DAY
    return None


def open_units_for_drafts(project: Project, video: Video, drafts: list, *, actor: str) -> list[WorkUnit]:
    """Create the units that serve ``drafts`` (``drafts.Draft`` rows) of ``video``, each with a QA pair
    and a ``draft`` revision per draft and its queue items.

    Drafts of QA types asked of a group (``asked_of``) go to one unit per group that ``video``
    leads: paired types on the day video of day-night pairs (the same question asked of both
    videos, EgoNight seed 000 Sec. 3.2), ego-exo types on the ego video of ego-exo sets (one unit
    shows every view, EgoExoBench seed 001 Sec. 3), life-log types on the first part of life logs
    (one unit over the whole log in virtual seconds, X-LeBench seed 002 Sec. 3: the drafts' clip
    times, and an interval answer in ``params["answer_start_s"/"answer_end_s"]``, are virtual
    seconds after the log's start). Drafts whose video leads no such group, and all
    others, go to one unit on the video alone. Must run inside the caller's transaction (the
    draft job's).
    """
    types = {t.slug: t for t in QAType.objects.filter(project=project, slug__in={d.qa_type for d in drafts})}
    by_set: dict[tuple[str, str], list] = {}
    for d in drafts:
        if (kind := asked_of(types[d.qa_type])) is not None:
            by_set.setdefault(kind, []).append(d)
    grouped, in_group = [], set()
    for (kind, role), set_drafts in by_set.items():
        for group in groups_led_by(video, kind, role):
            grouped.append((group, set_drafts))
            in_group.update(id(d) for d in set_drafts)
    single = [d for d in drafts if id(d) not in in_group]
    units = []
    if single:
        units.append(_open_unit(project, video, None, single, types, actor))
    for group, set_drafts in grouped:
        units.append(_open_unit(project, video, group, set_drafts, types, actor))
    return units


def _open_unit(project, video, group, drafts, types, actor) -> WorkUnit:
    start_s, end_s = 0.0, video.duration_s
    if group is not None and group.kind == VideoGroup.Kind.LIFE_LOG:  # the whole log, in virtual seconds
        start_s, end_s = 0.0, life_log_span(group)
    elif group is not None:  # the time every member has footage, in the lead video's time
        start_s, end_s = group_window(group.members.select_related("video"))
    unit = WorkUnit.objects.create(project=project, video=video, group=group, start_s=start_s, end_s=end_s)

    def clamp(t: float) -> float:
        return min(max(t, start_s), end_s)

    pairs = QAPair.objects.bulk_create(
        [
            QAPair(
                project=project,
                unit=unit,
                video=video,
                qa_type=types[d.qa_type],
                draft=d,
                origin=QAPair.Origin.MACHINE,
                question=d.question,
                answer=d.answer,
                options=d.options,
                answer_index=d.answer_index,
                clip_start_s=clamp(d.clip_start_s),
                clip_end_s=clamp(d.clip_end_s),
                videos=(d.params or {}).get("videos") or [],
                **_draft_interval(d, types[d.qa_type], clamp),
            )
            for d in drafts
            if clamp(d.clip_start_s) < clamp(d.clip_end_s)
        ]
    )
    Revision.objects.bulk_create(
        [
            Revision(qa_pair=p, actor_model=actor, action=Revision.Action.DRAFT, after=p.snapshot(), version=1)
            for p in pairs
        ]
    )
    items = [QueueItem(project=project, unit=unit, kind=QueueItem.Kind.FIRST_PASS)]
    if chosen(project, unit.pk, "overlap", project.overlap_share):
        items += [
            QueueItem(project=project, unit=unit, kind=QueueItem.Kind.OVERLAP, seq=i)
            for i in range(1, project.overlap_k)
        ]
    QueueItem.objects.bulk_create(items)
    return unit


def life_log_span(group: VideoGroup) -> float:
    """Virtual seconds from a life log's start to the end of its last part (0 when it has none)."""
    from annotator.media.lifelogs import parts_of

    parts = parts_of(group)
    return parts[-1].end_s if parts else 0.0


def _draft_interval(draft, qa_type: QAType, clamp) -> dict:
    """The interval answer a draft of an interval QA type carries (``params["answer_start_s"]`` and
    ``["answer_end_s"]``, seconds in the unit's time base), clamped to the unit; none when missing,
    not numbers, or empty after clamping."""
    params = draft.params or {}
    a, b = params.get("answer_start_s"), params.get("answer_end_s")
    if (
        qa_type.answer_kind != QAType.AnswerKind.INTERVAL
        or isinstance(a, bool)
        or isinstance(b, bool)
        or not isinstance(a, (int, float))
        or not isinstance(b, (int, float))
        or not clamp(a) < clamp(b)
    ):
        return {}
    return {"answer_start_s": clamp(float(a)), "answer_end_s": clamp(float(b))}


@transaction.atomic
def set_queue_policy(
    project: Project,
    *,
    double_check_share: float | None = None,
    overlap_share: float | None = None,
    overlap_k: int | None = None,
) -> int:
    """Change the project's queue policy; the overlap policy also applies to units whose first pass
    is still open and that have no overlap items yet. Returns how many overlap items were added.
    Raises Invalid for a share outside 0..1 or k outside 2..``MAX_OVERLAP_K``."""
    for name, value in (("double_check_share", double_check_share), ("overlap_share", overlap_share)):
        if value is not None and not 0 <= value <= 1:
            raise Invalid(f"{name} must be between 0 and 1", errors={name: "between 0 and 1"})
    if overlap_k is not None and not 2 <= overlap_k <= MAX_OVERLAP_K:
        # Each unit gets k - 1 overlap items: an unbounded k is an unbounded write.
        raise Invalid(
            f"overlap_k must be from 2 to {MAX_OVERLAP_K}", errors={"overlap_k": f"from 2 to {MAX_OVERLAP_K}"}
        )
    project = Project.objects.select_for_update().get(pk=project.pk)
    if double_check_share is not None:
        project.double_check_share = double_check_share
    if overlap_share is not None:
        project.overlap_share = overlap_share
    if overlap_k is not None:
        project.overlap_k = overlap_k
    project.save()
    added = []
    # Real units only: a gold copy someone holds is theirs alone, never a shared overlap (issue 20).
    open_units = (
        QueueItem.objects.filter(
            project=project,
            kind=QueueItem.Kind.FIRST_PASS,
            status=QueueItem.Status.OPEN,
            unit__purpose=WorkUnit.Purpose.REAL,
        )
        .exclude(unit__queue_items__kind=QueueItem.Kind.OVERLAP)
        .values_list("unit_id", "priority")
    )
    for unit_id, priority in open_units:
        if chosen(project, unit_id, "overlap", project.overlap_share):
            added += [
                QueueItem(project=project, unit_id=unit_id, kind=QueueItem.Kind.OVERLAP, seq=i, priority=priority)
                for i in range(1, project.overlap_k)
            ]
    QueueItem.objects.bulk_create(added)
    return len(added)
