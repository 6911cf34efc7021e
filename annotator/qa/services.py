"""Writes for QA: QA types, units for new drafts, queue policy, and everything an annotator does to
a unit (submit, skip, autosave), plus edits, model flags and model revisions (options replaced,
drafts dropped) outside the queue.

``submit_unit`` is one person's whole pass over a unit in one transaction: it applies every
decision and addition or nothing, and a retried submit with the same idempotency key replays the
first response without writing again. Changes name the version they saw; a QA pair changed by
someone else since is a conflict (409), never a silent overwrite.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from annotator.errors import Conflict, Invalid, NotHeld
from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.media.selectors import group_window
from annotator.projects.models import Project
from annotator.qa import queue
from annotator.qa.models import Autosave, QAPair, QAType, QueueItem, Revision, Skip, Submission, Verdict, WorkUnit
from annotator.qa.selectors import DRAFTED_KEYS, drafted_states, pairs_for_pass

MAX_TEXT = 4000
MAX_AUTOSAVE_BYTES = 256 * 1024
MAX_OVERLAP_K = 20  # distinct annotators per overlap unit, at most
FLAGGED_PRIORITY = -10  # model-flagged units are served before everything else (SPEC part 3)


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


# ----------------------------------------------------------------------------------- the submit


@dataclass(frozen=True)
class Decision:
    """One verdict on a QA pair: keep, modify or delete. ``version`` is the QA pair's version the
    person saw (None skips the conflict check). Times in milliseconds."""

    qa_id: int
    action: str
    question: str | None = None
    answer: str | None = None
    options: list[str] | None = None
    answer_index: int | None = None
    reason: str = ""
    version: int | None = None
    time_spent_ms: int | None = None
    answer_start_s: float | None = None
    answer_end_s: float | None = None


@dataclass(frozen=True)
class Addition:
    """A new QA pair written by the annotator; clip defaults to the unit's range (seconds). For a QA
    type whose ``answer_kind`` is ``interval`` the answer is ``answer_start_s``..``answer_end_s``
    (seconds in the unit's time base, X-LeBench temporal localisation, seed 002 App. C.1); its
    answer text may then be empty and is stored as the interval written out."""

    qa_type: str
    question: str
    answer: str
    clip_start_s: float | None = None
    clip_end_s: float | None = None
    time_spent_ms: int | None = None
    options: list[str] | None = None
    answer_index: int | None = None
    answer_start_s: float | None = None
    answer_end_s: float | None = None


@dataclass
class SubmitResult:
    """The response stored with the submission and replayed for a retry."""

    unit_id: int
    item_id: int
    kind: str
    counts: dict = field(default_factory=dict)
    replayed: bool = False

    def as_dict(self) -> dict:
        return {
            "unit_id": self.unit_id,
            "item_id": self.item_id,
            "kind": self.kind,
            "status": "done",
            "counts": self.counts,
            "replayed": self.replayed,
        }


def check_options(options, answer_index, where: str, errors: dict) -> None:
    """Multiple-choice rules: at least 2 non-empty options, no two alike (case and spaces ignored),
    exactly one correct, named by ``answer_index``. Adds messages to ``errors``."""
    if options is None and answer_index is None:
        return
    if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) and o.strip() for o in options):
        errors[f"{where}.options"] = "options must be a list of at least 2 non-empty strings"
        return
    if len({" ".join(o.lower().split()) for o in options}) != len(options):
        errors[f"{where}.options"] = "options must all differ"
    if not isinstance(answer_index, int) or not 0 <= answer_index < len(options):
        errors[f"{where}.answer_index"] = f"answer_index must be an integer from 0 to {len(options) - 1}"


def _text_error(value, label: str) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return f"{label} must not be empty"
    if len(value) > MAX_TEXT:
        return f"{label} is longer than {MAX_TEXT} characters"
    return None


def _content(pair: QAPair, *, as_drafted: dict | None = None) -> dict:
    """What the person was shown of ``pair``: its current content, or ``as_drafted``, the content
    before any person touched it (``selectors.drafted_states``), which is what an overlap pass is
    shown: it is blind to the first pass, its text and its answer interval alike."""
    source = as_drafted if as_drafted is not None else pair.snapshot()
    return {k: source.get(k) for k in DRAFTED_KEYS}


def interval_answer_text(start_s: float, end_s: float) -> str:
    """An interval answer written out (``"12.00-15.50 s"``), the answer text of an interval QA pair
    added without one."""
    return f"{start_s:.2f}-{end_s:.2f} s"


def _interval_errors(start, end, interval: bool, unit, where: str, errors: dict) -> None:
    """An answer interval (seconds) is given exactly for QA types whose answer is one, and then lies
    within the unit's range with end > start. Adds messages to ``errors``."""
    if not interval:
        if start is not None or end is not None:
            errors[f"{where}.answer_start_s"] = (
                "only QA types whose answer is a time interval take answer start and end"
            )
        return
    if start is None or end is None:
        errors[f"{where}.answer_start_s"] = (
            "set the answer's start and end (the answer of this QA type is a time interval)"
        )
    elif not unit.start_s <= start < end <= unit.end_s:
        errors[f"{where}.answer_start_s"] = (
            f"the answer interval must lie within {unit.start_s:.2f}-{unit.end_s:.2f} s and end after it starts"
        )


def _proposed(base: dict, d: Decision) -> dict:
    """The content a modify decision asks for: each field given, else what was shown."""
    options = base["options"] if d.options is None else [o.strip() for o in d.options]
    index = base["answer_index"] if d.answer_index is None else d.answer_index
    answer = base["answer"] if d.answer is None else d.answer.strip()
    if options is not None and isinstance(index, int) and 0 <= index < len(options):
        answer = options[index]  # a multiple-choice answer is the text of its correct option
    return {
        "question": base["question"] if d.question is None else d.question.strip(),
        "answer": answer,
        "options": options,
        "answer_index": index,
        "answer_start_s": base.get("answer_start_s") if d.answer_start_s is None else d.answer_start_s,
        "answer_end_s": base.get("answer_end_s") if d.answer_end_s is None else d.answer_end_s,
    }


def _validate(
    decisions, additions, shown: dict[int, dict], types, unit, interval_ids=frozenset(), optional=frozenset()
) -> dict[str, str]:
    """Per-field errors of a submit (``{"decisions[0].answer": "..."}``); ``interval_ids`` are the QA
    pairs whose type's answer is a time interval, ``optional`` those that may go without a decision
    (a rework's deleted pairs)."""
    errors: dict[str, str] = {}
    seen: set[int] = set()
    for i, d in enumerate(decisions):
        where = f"decisions[{i}]"
        base = shown.get(d.qa_id)
        if base is None:
            errors[f"{where}.qa_id"] = f"QA pair {d.qa_id} is not an item of this pass"
            continue
        if d.qa_id in seen:
            errors[f"{where}.qa_id"] = f"QA pair {d.qa_id} has two decisions"
        seen.add(d.qa_id)
        if d.action == "delete":
            if d.reason not in QAPair.DeleteReason.values:
                errors[f"{where}.reason"] = "choose a reason: " + ", ".join(QAPair.DeleteReason.values)
            elif d.reason == QAPair.DeleteReason.INCONSISTENT and (
                unit.group_id is None or unit.group.kind != VideoGroup.Kind.DAY_NIGHT
            ):
                errors[f"{where}.reason"] = "inconsistent across day and night applies only to a day-night pair"
        elif d.action == "modify":
            new = _proposed(base, d)
            for label in ("question", "answer"):
                if (message := _text_error(new[label], label)) is not None:
                    errors[f"{where}.{label}"] = message
            check_options(new["options"], new["answer_index"], where, errors)
            if (d.answer_start_s, d.answer_end_s) != (None, None) or d.qa_id in interval_ids:
                _interval_errors(
                    new["answer_start_s"], new["answer_end_s"], d.qa_id in interval_ids, unit, where, errors
                )
            if new == base:
                errors[where] = "modify without a change: use keep"
        elif d.action != "keep":
            errors[f"{where}.action"] = "action must be keep, modify or delete"
    for qa_id in shown.keys() - seen - set(optional):
        errors[f"qa[{qa_id}]"] = f"QA pair {qa_id} has no decision"
    for i, a in enumerate(additions):
        where = f"added[{i}]"
        qa_type = types.get(a.qa_type)
        if not a.qa_type:
            errors[f"{where}.qa_type"] = "choose the QA type of the added QA pair"
        elif qa_type is None:
            errors[f"{where}.qa_type"] = f"unknown QA type {a.qa_type!r}"
        interval = qa_type is not None and qa_type.answer_kind == QAType.AnswerKind.INTERVAL
        for label, value in (("question", a.question), ("answer", a.answer)):
            if interval and label == "answer" and not (value or "").strip():
                continue  # the interval is the answer; its text is written out on save
            if (message := _text_error(value, label)) is not None:
                errors[f"{where}.{label}"] = message
        if qa_type is not None:
            _interval_errors(a.answer_start_s, a.answer_end_s, interval, unit, where, errors)
        check_options(a.options, a.answer_index, where, errors)
        start = unit.start_s if a.clip_start_s is None else a.clip_start_s
        end = unit.end_s if a.clip_end_s is None else a.clip_end_s
        if not unit.start_s <= start < end <= unit.end_s:
            errors[f"{where}.clip"] = f"clip must lie within {unit.start_s:.2f}-{unit.end_s:.2f} s"
    return errors


def time_errors(bound_ms: int, times: dict[str, int | None]) -> dict[str, str]:
    """Per-field errors for client-reported times (ms, ``{field path: value}``, None = not given)
    that are negative, not integers, or above ``bound_ms`` (``queue.time_bound_ms``: the wall
    time since the person's claim plus slack). A page cannot have spent more than that."""
    errors = {}
    for path, value in times.items():
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            errors[path] = "a time must be a whole number of milliseconds, 0 or more"
        elif value > bound_ms:
            errors[path] = (
                f"{value / 1000:,.0f} s is more time than has passed since you took this unit "
                f"(at most {bound_ms / 1000:,.0f} s)"
            )
    return errors


# ------------------------------------------------------------------------------------- rework

# The passes whose decisions change a unit's QA pairs (an overlap pass only records verdicts; a
# qualification unit is a copy). Issue 20: reviews look at the last of these.
DECIDING_KINDS = (QueueItem.Kind.FIRST_PASS, QueueItem.Kind.DOUBLE_CHECK, QueueItem.Kind.REWORK)


def last_deciding_pass(unit_id: int, *, before=None) -> QueueItem | None:
    """The unit's last completed pass that decided its QA pairs (``DECIDING_KINDS``), completed at or
    before ``before`` (a datetime) if given; None if there is none."""
    qs = QueueItem.objects.filter(unit_id=unit_id, kind__in=DECIDING_KINDS, status=QueueItem.Status.DONE)
    if before is not None:
        qs = qs.filter(completed_at__lte=before)
    return qs.order_by("-completed_at", "-id").first()


def restorable_pairs(unit_id: int, reworked: QueueItem | None):
    """The QA pairs a rework of the pass ``reworked`` may restore: those that pass deleted and that
    are still deleted, and when ``reworked`` is itself a rework, those it could have restored and
    left deleted (back along the chain of reworks to the first pass or double-check before them).
    A pair a model dropped, or a pass before that chain deleted, is not among them. A rework goes
    over the unit's verified pairs (``PASS_FILTER``) and these: a reviewer who thinks a deletion
    was wrong comments on the deleted pair, and its annotator keeps it (restored), modifies it, or
    leaves it deleted. One query per pass of the chain, plus the returned one."""
    passes = []
    while reworked is not None and len(passes) < 1000:
        passes.append(reworked.pk)
        reworked = reworked_pass(reworked) if reworked.kind == QueueItem.Kind.REWORK else None
    if not passes:
        return QAPair.objects.none()
    deleted = Verdict.objects.filter(item_id__in=passes, action="delete").values("qa_pair_id")
    return QAPair.objects.filter(unit_id=unit_id, status=QAPair.Status.DELETED, pk__in=deleted)


def reworked_pass(item: QueueItem) -> QueueItem | None:
    """The pass a rework item goes back over: the unit's last deciding pass completed before the
    rework was opened (the reviewed one, or the one its annotator reopened)."""
    return last_deciding_pass(item.unit_id, before=item.created_at)


# Called at the end of every submit, inside its transaction, as ``hook(item, unit, user, result)``
# (issue 20: gold and qualification units are scored, reviews learn of resubmitted rework). Apps
# register with ``after_submit``; this module imports none of them. A hook that raises rolls the
# submit back.
AFTER_SUBMIT: list = []


def after_submit(hook):
    """Decorator: run ``hook(item: QueueItem, unit: WorkUnit, user, result: SubmitResult)`` at the end
    of every (not replayed) submit, in its transaction. Returns ``hook``."""
    if hook not in AFTER_SUBMIT:
        AFTER_SUBMIT.append(hook)
    return hook


# Called after every skip, inside its transaction, as ``hook(item, unit_id, user, reason)`` (issue 20:
# a skipped gold copy is scored as a miss). Apps register with ``after_skip``.
AFTER_SKIP: list = []


def after_skip(hook):
    """Decorator: run ``hook(item: QueueItem, unit_id: int, user, reason: str)`` after every skip, in
    its transaction. Returns ``hook``."""
    if hook not in AFTER_SKIP:
        AFTER_SKIP.append(hook)
    return hook


def submit_unit(
    unit_id: int,
    user,
    *,
    idempotency_key: str,
    decisions: list[Decision],
    additions: list[Addition],
    time_spent_ms: int | None,
) -> SubmitResult:
    """Apply one person's pass over a unit (the queue item they hold on it).

    Steps, in one transaction: if a submission with ``idempotency_key`` exists, return its stored
    response (``replayed=True``) when it is the same person and unit, else refuse (409); lock the
    person's open item on the unit (409 if they do not hold it: their lease lapsed and someone else
    took it, or they never claimed it); validate that every QA pair of the pass has exactly one
    decision, every text is usable and every time (``time_spent_ms``, per decision and addition)
    is within ``queue.time_bound_ms`` (400, per-field errors); refuse decisions on QA pairs changed
    since the version the person saw (409, with the current content); then write.

    What is written depends on the pass. First pass and double-check: the QA pairs change, one
    append-only revision each, plus a verdict each; a first pass may queue a double-check of the
    unit (project's ``double_check_share``, never served to this person). Rework (issue 20: a unit
    a reviewer sent back, or its annotator reopened): as a double-check, over the verified pairs and
    the pairs the reworked pass deleted (``restorable_pairs``; a decision on these is optional: keep
    restores one, modify restores it changed, none or delete leaves it deleted). Overlap: verdicts
    only, the QA pairs stay as the first pass leaves them. The item is marked done with the time spent.
    Only the submitter's own autosave is deleted: an earlier holder's is their kept work.
    Raises Invalid (bad input, per-field errors), Conflict (already submitted, a version conflict),
    NotHeld (the person does not hold the unit); WorkUnit.DoesNotExist for an unknown unit.
    """
    if not idempotency_key or len(idempotency_key) > 100:
        raise Invalid("idempotency_key is required (at most 100 characters)")
    now = timezone.now()

    def replay() -> SubmitResult | None:
        previous = Submission.objects.select_related("item").filter(idempotency_key=idempotency_key).first()
        if previous is None:
            return None
        if previous.user_id != user.pk or previous.item.unit_id != unit_id:
            raise Conflict("this idempotency key was used for another submit")
        r = previous.response
        return SubmitResult(r["unit_id"], r["item_id"], r["kind"], r["counts"], replayed=True)

    with transaction.atomic():
        if (replayed := replay()) is not None:
            return replayed
        try:
            item = queue.item_of(unit_id, user)
        except (QueueItem.DoesNotExist, NotHeld) as exc:
            # A submit with the same key may have held the item's lock and committed while this one
            # waited for it (a retried request racing the first, issue 19): its result is this one's.
            # Read committed: the query sees its submission now.
            if (replayed := replay()) is not None:
                return replayed
            if isinstance(exc, NotHeld):
                raise
            WorkUnit.objects.get(pk=unit_id)  # DoesNotExist for an unknown unit
            raise Conflict("this unit was already submitted") from None
        unit = WorkUnit.objects.select_related("project").get(pk=unit_id)

        blind = item.kind == QueueItem.Kind.OVERLAP
        of_pass = pairs_for_pass(unit, item.kind)
        optional: set[int] = set()
        if item.kind == QueueItem.Kind.REWORK:
            # Issue 20: a rework also shows the pairs the reworked pass deleted; a decision on them is
            # optional (none: they stay deleted), so a client that ignores them loses nothing.
            restorable = restorable_pairs(unit.pk, reworked_pass(item))
            optional = set(restorable.values_list("pk", flat=True))
            of_pass = unit.qa_pairs.filter(Q(status=QAPair.Status.VERIFIED) | Q(pk__in=optional))
        pairs = {p.pk: p for p in of_pass.select_for_update(of=("self",)).select_related("draft", "qa_type")}
        drafted = drafted_states(pairs.values()) if blind else {}
        shown = {pk: _content(p, as_drafted=drafted[pk][0] if blind else None) for pk, p in pairs.items()}
        interval_ids = {pk for pk, p in pairs.items() if p.qa_type.answer_kind == QAType.AnswerKind.INTERVAL}
        types = {t.slug: t for t in QAType.objects.filter(project_id=unit.project_id)} if additions else {}
        errors = _validate(decisions, additions, shown, types, unit, interval_ids, optional=optional)
        errors |= time_errors(
            queue.time_bound_ms(item, now),
            {
                "time_spent_ms": time_spent_ms,
                **{f"decisions[{i}].time_spent_ms": d.time_spent_ms for i, d in enumerate(decisions)},
                **{f"added[{i}].time_spent_ms": a.time_spent_ms for i, a in enumerate(additions)},
            },
        )
        if errors:
            raise Invalid("the submit has errors; nothing was saved", errors=errors)
        if not blind:
            conflicts = [
                {
                    "qa_id": d.qa_id,
                    "your_version": d.version,
                    "version": pairs[d.qa_id].version,
                    "current": pairs[d.qa_id].snapshot(),
                }
                for d in decisions
                if d.version is not None and d.version != pairs[d.qa_id].version
            ]
            if conflicts:
                raise Conflict(
                    "someone else changed these QA pairs since you loaded them; nothing was saved", conflicts=conflicts
                )

        verb = {"keep": "kept", "modify": "modified", "delete": "deleted"}
        counts = {"kept": 0, "modified": 0, "deleted": 0, "added": len(additions)}
        for d in decisions:
            counts[verb[d.action]] += 1
        result = SubmitResult(unit.pk, item.pk, item.kind, counts)
        submission = Submission.objects.create(
            idempotency_key=idempotency_key, item=item, user=user, response=result.as_dict()
        )
        revisions, verdicts, changed = [], [], []
        for d in decisions:
            pair, base = pairs[d.qa_id], shown[d.qa_id]
            new = _proposed(base, d) if d.action == "modify" else base
            verdicts.append(
                Verdict(
                    item=item,
                    qa_pair=pair,
                    user=user,
                    action=d.action,
                    after=new,
                    reason=d.reason if d.action == "delete" else "",
                    time_spent_ms=d.time_spent_ms,
                )
            )
            if blind:
                continue
            before = pair.snapshot()
            if d.action == "keep":
                if pair.status == QAPair.Status.DRAFT:
                    pair.status, pair.provenance, pair.version = (
                        QAPair.Status.VERIFIED,
                        QAPair.Provenance.MACHINE_KEPT,
                        pair.version + 1,
                    )
                elif pair.status == QAPair.Status.DELETED:  # a rework restores a pair its pass deleted
                    pair.status, pair.delete_reason, pair.version = QAPair.Status.VERIFIED, "", pair.version + 1
                    pair.provenance = pair.provenance or (
                        QAPair.Provenance.HUMAN_ADDED
                        if pair.origin == QAPair.Origin.HUMAN
                        else QAPair.Provenance.MACHINE_KEPT
                    )
                pair.verified_at = now
            elif d.action == "modify":
                pair.question, pair.answer, pair.options, pair.answer_index = (
                    new["question"],
                    new["answer"],
                    new["options"],
                    new["answer_index"],
                )
                pair.answer_start_s, pair.answer_end_s = new["answer_start_s"], new["answer_end_s"]
                if pair.provenance != QAPair.Provenance.HUMAN_ADDED:
                    pair.provenance = QAPair.Provenance.MACHINE_MODIFIED
                pair.status, pair.verified_at, pair.version = QAPair.Status.VERIFIED, now, pair.version + 1
                pair.delete_reason = ""  # a rework may modify a pair its pass deleted
            elif pair.status == QAPair.Status.DELETED and pair.delete_reason == d.reason:
                pass  # a rework leaves a deleted pair deleted, for the same reason: nothing changes
            else:
                pair.status, pair.delete_reason, pair.version = QAPair.Status.DELETED, d.reason, pair.version + 1
            pair.updated_at = now
            changed.append(pair)
            revisions.append(
                Revision(
                    qa_pair=pair,
                    actor_user=user,
                    action=d.action,
                    before=before,
                    after=pair.snapshot(),
                    version=pair.version,
                    time_spent_ms=d.time_spent_ms,
                    submission=submission,
                )
            )
        QAPair.objects.bulk_update(
            changed,
            [
                "question",
                "answer",
                "options",
                "answer_index",
                "answer_start_s",
                "answer_end_s",
                "status",
                "provenance",
                "delete_reason",
                "version",
                "verified_at",
                "updated_at",
            ],
        )
        for a in additions:
            content = {
                "question": a.question.strip(),
                "answer": a.answer.strip(),
                "options": a.options,
                "answer_index": a.answer_index,
                "answer_start_s": a.answer_start_s,
                "answer_end_s": a.answer_end_s,
            }
            if a.answer_start_s is not None and not content["answer"]:
                content["answer"] = interval_answer_text(a.answer_start_s, a.answer_end_s)
            if a.options is not None:
                content["options"] = [o.strip() for o in a.options]
                content["answer"] = content["options"][a.answer_index]
            clip = (
                unit.start_s if a.clip_start_s is None else a.clip_start_s,
                unit.end_s if a.clip_end_s is None else a.clip_end_s,
            )
            if blind:
                verdicts.append(
                    Verdict(
                        item=item,
                        qa_pair=None,
                        user=user,
                        action="add",
                        time_spent_ms=a.time_spent_ms,
                        after={**content, "qa_type": a.qa_type, "clip_start_s": clip[0], "clip_end_s": clip[1]},
                    )
                )
                continue
            pair = QAPair.objects.create(
                project_id=unit.project_id,
                unit=unit,
                video_id=unit.video_id,
                qa_type=types[a.qa_type],
                origin=QAPair.Origin.HUMAN,
                **content,
                clip_start_s=clip[0],
                clip_end_s=clip[1],
                status=QAPair.Status.VERIFIED,
                provenance=QAPair.Provenance.HUMAN_ADDED,
                verified_at=now,
            )
            verdicts.append(
                Verdict(item=item, qa_pair=pair, user=user, action="add", after=content, time_spent_ms=a.time_spent_ms)
            )
            revisions.append(
                Revision(
                    qa_pair=pair,
                    actor_user=user,
                    action=Revision.Action.ADD,
                    before=None,
                    after=pair.snapshot(),
                    version=1,
                    time_spent_ms=a.time_spent_ms,
                    submission=submission,
                )
            )
        Revision.objects.bulk_create(revisions)
        Verdict.objects.bulk_create(verdicts)

        item.status, item.completed_by, item.completed_at = QueueItem.Status.DONE, user, now
        item.leased_by, item.lease_expires_at, item.time_spent_ms = None, None, time_spent_ms
        item.save(
            update_fields=["status", "completed_by", "completed_at", "leased_by", "lease_expires_at", "time_spent_ms"]
        )
        # Only the submitter's own: an earlier holder's autosave is their kept work and time.
        Autosave.objects.filter(item=item, user=user).delete()
        # Real units only: a gold or qualification copy is for its person alone, never for the shared
        # queue (issue 20; the review state answers as if drawn, ``review.services``).
        if unit.purpose == WorkUnit.Purpose.REAL and double_check_drawn(item, unit):
            QueueItem.objects.create(
                project_id=unit.project_id,
                unit=unit,
                kind=QueueItem.Kind.DOUBLE_CHECK,
                exclude_user=user,
                priority=item.priority,
            )
        for hook in AFTER_SUBMIT:
            hook(item, unit, user, result)
    return result


# ------------------------------------------------------------------------ skip, autosave, edits

_SKIP_RELEASE_SQL = """
UPDATE qa_queueitem i SET leased_by_id = NULL, lease_expires_at = NULL,
       assigned_to_id = CASE WHEN i.assigned_to_id = %(user)s AND EXISTS (
                                  SELECT 1 FROM qa_workunit w WHERE w.id = i.unit_id AND w.purpose = 'real')
                             THEN NULL ELSE i.assigned_to_id END
WHERE i.id = %(item)s
RETURNING i.assigned_to_id"""


def skip_unit(unit_id: int, user, reason: str) -> QueueItem:
    """Pass on the unit with a reason: the item goes back to the queue for others and is never
    served to this person again. Raises Invalid (no reason; a rework or qualification item, which is
    assigned to this person alone), NotHeld (not theirs), Conflict (already submitted)."""
    reason = (reason or "").strip()
    if not reason or len(reason) > 500:
        raise Invalid("give a reason for skipping (at most 500 characters)", errors={"reason": "required"})
    with transaction.atomic():
        try:
            item = queue.item_of(unit_id, user)
        except QueueItem.DoesNotExist:
            raise Conflict("this unit was already submitted") from None
        if item.kind == QueueItem.Kind.REWORK:
            # Assigned to this person alone: a skipped rework would be served straight back to them.
            raise Invalid(
                "a unit sent back to you for rework cannot be skipped: submit it (keep what you stand by); "
                "an admin can give it to someone else"
            )
        if item.kind == QueueItem.Kind.QUALIFICATION:
            # Also assigned to this person alone, and part of their attempt: it would come straight back.
            raise Invalid(
                "a qualification unit cannot be skipped: decide each QA pair as the guidelines say "
                "(delete one you cannot answer, with its reason) and submit"
            )
        Skip.objects.create(item=item, user=user, reason=reason)
        Autosave.objects.filter(item=item, user=user).delete()
        # Released, and an admin's assignment they skipped goes back to everyone (the claim never
        # serves a skipped item to its skipper); a gold copy stays theirs, unserved: it is nobody
        # else's. One statement for every kind of unit, or a skip's cost would tell a gold copy apart.
        with connection.cursor() as cursor:
            cursor.execute(_SKIP_RELEASE_SQL, {"item": item.pk, "user": user.pk})
            item.assigned_to_id = cursor.fetchone()[0]
        item.leased_by, item.lease_expires_at = None, None
        for hook in AFTER_SKIP:
            hook(item, item.unit_id, user, reason)
    return item


def autosave(unit_id: int, user, state: dict, client_saved_at_ms: int, time_spent_ms: int = 0) -> Autosave:
    """Keep the person's in-progress work on their item of the unit, with the time (ms) they have
    spent on it so far, so both survive a reload (newest write wins by the client's clock, so a late
    retry of an older save does not undo a newer one). The time is bounded like a submit's
    (``queue.time_bound_ms``). Raises Invalid (too large, time out of bounds; nothing saved),
    NotHeld (not theirs), Conflict (already submitted)."""
    if len(json.dumps(state)) > MAX_AUTOSAVE_BYTES:
        raise Invalid(f"autosave state is larger than {MAX_AUTOSAVE_BYTES // 1024} KiB")
    with transaction.atomic():
        try:
            item = queue.item_of(unit_id, user, lock=False)
        except QueueItem.DoesNotExist:
            raise Conflict("this unit was already submitted") from None
        errors = time_errors(queue.time_bound_ms(item), {"time_spent_ms": time_spent_ms})
        if errors:
            raise Invalid("the autosave has errors; nothing was saved", errors=errors)
        fields = {"state": state, "client_saved_at_ms": client_saved_at_ms, "time_spent_ms": time_spent_ms}
        saved, created = Autosave.objects.select_for_update().get_or_create(
            item=item, user=user, defaults={**fields, "claimed_at": item.claimed_at}
        )
        if not created and client_saved_at_ms >= saved.client_saved_at_ms:
            for name, value in fields.items():
                setattr(saved, name, value)
            saved.save(update_fields=[*fields, "updated_at"])
    return saved


def edit_qa_pair(
    qa_id: int,
    user,
    *,
    version: int,
    question: str | None = None,
    answer: str | None = None,
    options: list[str] | None = None,
    answer_index: int | None = None,
) -> QAPair:
    """An edit outside the queue (admin or reviewer on the QA pair's page or the API).

    ``version`` is the version the editor saw; if the QA pair changed since, Conflict with
    the current content (never a silent overwrite). Bad text or options: Invalid.
    """
    with transaction.atomic():
        pair = QAPair.objects.select_for_update().get(pk=qa_id)
        if version != pair.version:
            raise Conflict(
                "someone else changed this QA pair since you loaded it; nothing was saved",
                conflicts=[
                    {"qa_id": pair.pk, "your_version": version, "version": pair.version, "current": pair.snapshot()}
                ],
            )
        new = _proposed(
            _content(pair),
            Decision(qa_id, "modify", question=question, answer=answer, options=options, answer_index=answer_index),
        )
        errors: dict[str, str] = {}
        for label in ("question", "answer"):
            if (message := _text_error(new[label], label)) is not None:
                errors[label] = message
        check_options(new["options"], new["answer_index"], "qa", errors)
        if errors:
            raise Invalid("the edit has errors; nothing was saved", errors=errors)
        before = pair.snapshot()
        pair.question, pair.answer, pair.options, pair.answer_index = (
            new["question"],
            new["answer"],
            new["options"],
            new["answer_index"],
        )
        if pair.status == QAPair.Status.VERIFIED and pair.provenance == QAPair.Provenance.MACHINE_KEPT:
            pair.provenance = QAPair.Provenance.MACHINE_MODIFIED
        pair.version += 1
        pair.save()
        Revision.objects.create(
            qa_pair=pair,
            actor_user=user,
            action=Revision.Action.EDIT,
            before=before,
            after=pair.snapshot(),
            version=pair.version,
        )
    return pair


def flag_qa_pair(qa_id: int, *, reason: str, source: str = "", user=None) -> QAPair:
    """Flag a QA pair for human attention (e.g. VUDG's review labels fixable / invalid, seed 004
    Sec. 3.2): the reason is shown with the item, and the unit's open queue items move to the front
    of the queue. The flag records who set it: the model (``source``), the person (``user``, e.g. an
    admin posting a model's verdict through the API), or both; the revision names them too.
    Raises Invalid for an empty reason, or neither a model nor a person."""
    reason, source = (reason or "").strip(), (source or "").strip()
    if not reason or not (source or user is not None):
        raise Invalid(
            "a flag needs a reason and the model or person that set it",
            errors={"reason" if not reason else "source": "required"},
        )
    with transaction.atomic():
        pair = QAPair.objects.select_for_update().get(pk=qa_id)
        before = pair.snapshot()
        pair.flag_reason, pair.flag_source, pair.flag_user = reason, source, user
        pair.save(update_fields=["flag_reason", "flag_source", "flag_user", "updated_at"])
        Revision.objects.create(
            qa_pair=pair,
            actor_model=source,
            actor_user=user,
            action=Revision.Action.FLAG,
            before=before,
            after={**pair.snapshot(), "flag_reason": pair.flag_reason},
            version=pair.version,
        )
        QueueItem.objects.filter(unit_id=pair.unit_id, status=QueueItem.Status.OPEN).update(priority=FLAGGED_PRIORITY)
    return pair


def _draft_for_model(qa_id: int, version: int, source: str) -> QAPair:
    """The QA pair, locked, if a model may still change it: a draft at ``version``. A model never
    overrides a person's decision, nor a change it did not see (Conflict, naming what changed)."""
    if not (source or "").strip():
        raise Invalid("a model revision needs the model that made it", errors={"source": "required"})
    pair = QAPair.objects.select_for_update().get(pk=qa_id)
    if pair.status != QAPair.Status.DRAFT or pair.version != version:
        raise Conflict(
            f"QA pair {qa_id} changed since the model checked it (version {version}, now {pair.version}, "
            f"{pair.status}); nothing was saved",
            conflicts=[{"qa_id": qa_id, "your_version": version, "version": pair.version, "current": pair.snapshot()}],
        )
    return pair


def set_options_by_model(
    qa_id: int, *, source: str, version: int, options: list[str], answer_index: int, note: dict | None = None
) -> QAPair:
    """A model replaces the options of a draft multiple-choice pair (e.g. EgoExoBench's hard-negative
    distractors, seed 001 Sec. 3.2): ``options[answer_index]`` becomes the answer, the version goes
    up, and a ``modify`` revision names the model (``source``) with ``note`` (e.g. the shuffle seed)
    beside the content. Raises Invalid for bad options, Conflict if the pair is no longer a draft at
    ``version``."""
    errors: dict[str, str] = {}
    check_options(options, answer_index, "qa", errors)
    if errors or options is None:
        raise Invalid("the options have errors; nothing was saved", errors=errors or {"qa.options": "required"})
    with transaction.atomic():
        pair = _draft_for_model(qa_id, version, source)
        before = pair.snapshot()
        pair.options, pair.answer_index, pair.answer = list(options), answer_index, options[answer_index]
        pair.version += 1
        pair.save(update_fields=["options", "answer_index", "answer", "version", "updated_at"])
        Revision.objects.create(
            qa_pair=pair,
            actor_model=source.strip()[:200],
            action=Revision.Action.MODIFY,
            before=before,
            after={**pair.snapshot(), **(note or {})},
            version=pair.version,
        )
    return pair


def drop_by_model(qa_id: int, *, source: str, version: int, reason: str) -> QAPair:
    """A model's filter drops a draft (e.g. EgoExoBench's text-only filter, seed 001 Sec. 3.2): the
    pair becomes ``deleted`` and is no longer served; the reason is kept as its flag and on a
    ``delete`` revision naming the model (``source``). Raises Invalid for an empty reason,
    Conflict if the pair is no longer a draft at ``version``."""
    reason = (reason or "").strip()
    if not reason:
        raise Invalid("a drop needs a reason", errors={"reason": "required"})
    with transaction.atomic():
        pair = _draft_for_model(qa_id, version, source)
        before = pair.snapshot()
        pair.status, pair.version = QAPair.Status.DELETED, pair.version + 1
        pair.flag_reason, pair.flag_source, pair.flag_user = reason, source.strip()[:200], None
        pair.save(update_fields=["status", "version", "flag_reason", "flag_source", "flag_user", "updated_at"])
        Revision.objects.create(
            qa_pair=pair,
            actor_model=pair.flag_source,
            action=Revision.Action.DELETE,
            before=before,
            after={**pair.snapshot(), "flag_reason": reason},
            version=pair.version,
        )
    return pair


def apply_preset(project: Project, name: str) -> int:
    """Create the QA types of preset ``name`` (``egonight``) the project does not have yet; returns
    how many were created. Existing types of the same slug are left as they are. Raises KeyError."""
    from annotator.qa.presets import PRESETS

    specs = PRESETS[name]
    have = set(QAType.objects.filter(project=project).values_list("slug", flat=True))
    created = [
        QAType(
            project=project,
            slug=s.slug,
            name=s.name,
            paired=s.paired,
            clip_policy=s.clip_policy,
            window_s=s.window_s,
            description=s.description,
        )
        for s in specs
        if s.slug not in have
    ]
    QAType.objects.bulk_create(created)
    return len(created)
