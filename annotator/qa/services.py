"""Writes for QA: QA types, units for new drafts, and the verification submit.

``submit_unit`` is the annotator's whole verification of a unit in one transaction: it either
applies every decision and addition or nothing, and a retried submit with the same idempotency
key replays the first response without writing again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from annotator.drafts.models import Draft
from annotator.media.models import Video
from annotator.projects.models import Project
from annotator.qa.models import QAPair, QAType, Revision, Submission, WorkUnit
from annotator.qa.queue import held_by_other

MAX_TEXT = 4000


def ensure_qa_type(project: Project, slug: str, *, name: str = "", clip_policy: str = QAType.ClipPolicy.WHOLE) -> QAType:
    """Return the project's QA type ``slug``, creating it (name from the slug if not given)."""
    qa_type, _ = QAType.objects.get_or_create(
        project=project, slug=slug,
        defaults={"name": name or slug.replace("_", " ").capitalize(), "clip_policy": clip_policy},
    )
    return qa_type


def open_unit_for_drafts(project: Project, video: Video, drafts: list[Draft], *, actor: str) -> WorkUnit:
    """Create one open unit covering ``video`` with a draft QA pair (and a ``draft`` revision) per draft.

    Must run inside the caller's transaction (the draft job's).
    """
    types = {t.slug: t for t in QAType.objects.filter(project=project, slug__in={d.qa_type for d in drafts})}
    unit = WorkUnit.objects.create(project=project, video=video, start_s=0.0, end_s=video.duration_s)
    pairs = QAPair.objects.bulk_create([
        QAPair(project=project, unit=unit, video=video, qa_type=types[d.qa_type], draft=d,
               origin=QAPair.Origin.MACHINE, question=d.question, answer=d.answer, options=d.options,
               answer_index=d.answer_index, clip_start_s=d.clip_start_s, clip_end_s=d.clip_end_s)
        for d in drafts
    ])
    Revision.objects.bulk_create([
        Revision(qa_pair=p, actor_model=actor, action=Revision.Action.DRAFT, after=p.snapshot()) for p in pairs
    ])
    return unit


class SubmitError(Exception):
    """A submit that cannot be applied. ``status`` is the HTTP status to answer with (400 or 409);
    ``errors`` maps a field path (``decisions[2].reason``) to a message. Nothing was written."""

    def __init__(self, message: str, *, status: int = 400, errors: dict | None = None):
        super().__init__(message)
        self.status = status
        self.errors = errors or {}


@dataclass(frozen=True)
class Decision:
    """One verdict on a draft: action keep, modify or delete. Times in milliseconds."""

    qa_id: int
    action: str
    question: str | None = None
    answer: str | None = None
    options: list[str] | None = None
    answer_index: int | None = None
    reason: str = ""
    time_spent_ms: int | None = None


@dataclass(frozen=True)
class Addition:
    """A new QA pair written by the annotator; clip defaults to the unit's range (seconds)."""

    qa_type: str
    question: str
    answer: str
    clip_start_s: float | None = None
    clip_end_s: float | None = None
    time_spent_ms: int | None = None


@dataclass
class SubmitResult:
    """The response stored with the submission and replayed for a retry."""

    unit_id: int
    counts: dict = field(default_factory=dict)
    replayed: bool = False

    def as_dict(self) -> dict:
        return {"unit_id": self.unit_id, "status": WorkUnit.Status.DONE, "counts": self.counts, "replayed": self.replayed}


def _check_options(options, answer_index, where: str, errors: dict) -> None:
    if options is None and answer_index is None:
        return
    if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) and o.strip() for o in options):
        errors[f"{where}.options"] = "options must be a list of at least 2 non-empty strings"
        return
    if len({o.strip().lower() for o in options}) != len(options):
        errors[f"{where}.options"] = "options must all differ"
    if not isinstance(answer_index, int) or not 0 <= answer_index < len(options):
        errors[f"{where}.answer_index"] = f"answer_index must be an integer from 0 to {len(options) - 1}"


def _text_error(value, label: str) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return f"{label} must not be empty"
    if len(value) > MAX_TEXT:
        return f"{label} is longer than {MAX_TEXT} characters"
    return None


def submit_unit(unit_id: int, user, *, idempotency_key: str, decisions: list[Decision],
                additions: list[Addition], time_spent_ms: int | None) -> SubmitResult:
    """Apply an annotator's verification of a unit.

    Steps, in one transaction: lock the unit row; if a submission with ``idempotency_key`` exists,
    return its stored response (``replayed=True``) when it is the same user and unit, else refuse
    (409); refuse a unit already done or leased live to someone else (409); validate that every
    draft of the unit has exactly one decision and every text is usable (400, with per-field
    errors); then write the changes, one append-only revision per QA pair, mark the unit done and
    store the submission. Raises SubmitError; WorkUnit.DoesNotExist for an unknown unit.
    """
    if not idempotency_key or len(idempotency_key) > 100:
        raise SubmitError("idempotency_key is required (at most 100 characters)")
    now = timezone.now()
    with transaction.atomic():
        unit = WorkUnit.objects.select_for_update().get(pk=unit_id)
        previous = Submission.objects.filter(idempotency_key=idempotency_key).first()
        if previous is not None:
            if previous.user_id != user.pk or previous.unit_id != unit.pk:
                raise SubmitError("this idempotency key was used for another submit", status=409)
            return SubmitResult(unit.pk, previous.response["counts"], replayed=True)
        if unit.status == WorkUnit.Status.DONE:
            raise SubmitError("this unit was already submitted", status=409)
        if held_by_other(unit, user, now):
            raise SubmitError("this unit is leased to another annotator", status=409)

        pairs = {p.pk: p for p in unit.qa_pairs.select_for_update().filter(status=QAPair.Status.DRAFT)}
        types = {t.slug: t for t in QAType.objects.filter(project_id=unit.project_id)}
        errors: dict[str, str] = {}
        seen: set[int] = set()
        for i, d in enumerate(decisions):
            where = f"decisions[{i}]"
            pair = pairs.get(d.qa_id)
            if pair is None:
                errors[f"{where}.qa_id"] = f"QA pair {d.qa_id} is not a draft of this unit"
                continue
            if d.qa_id in seen:
                errors[f"{where}.qa_id"] = f"QA pair {d.qa_id} has two decisions"
            seen.add(d.qa_id)
            if d.action == "delete":
                if d.reason not in QAPair.DeleteReason.values:
                    errors[f"{where}.reason"] = "choose a reason: " + ", ".join(QAPair.DeleteReason.values)
            elif d.action == "modify":
                question = pair.question if d.question is None else d.question
                answer = pair.answer if d.answer is None else d.answer
                for label, value in (("question", question), ("answer", answer)):
                    if (message := _text_error(value, label)) is not None:
                        errors[f"{where}.{label}"] = message
                options = pair.options if d.options is None else d.options
                index = pair.answer_index if d.answer_index is None else d.answer_index
                _check_options(options, index, where, errors)
                if (question, answer, options, index) == (pair.question, pair.answer, pair.options, pair.answer_index):
                    errors[where] = "modify without a change: use keep"
            elif d.action != "keep":
                errors[f"{where}.action"] = "action must be keep, modify or delete"
        for qa_id in pairs.keys() - seen:
            errors[f"qa[{qa_id}]"] = f"QA pair {qa_id} has no decision"
        for i, a in enumerate(additions):
            where = f"added[{i}]"
            if a.qa_type not in types:
                errors[f"{where}.qa_type"] = f"unknown QA type {a.qa_type!r}"
            for label, value in (("question", a.question), ("answer", a.answer)):
                if (message := _text_error(value, label)) is not None:
                    errors[f"{where}.{label}"] = message
            start = unit.start_s if a.clip_start_s is None else a.clip_start_s
            end = unit.end_s if a.clip_end_s is None else a.clip_end_s
            if not unit.start_s <= start < end <= unit.end_s:
                errors[f"{where}.clip"] = f"clip must lie within {unit.start_s:.2f}-{unit.end_s:.2f} s"
        if errors:
            raise SubmitError("the submit has errors; nothing was saved", errors=errors)

        counts = {"kept": 0, "modified": 0, "deleted": 0, "added": 0}
        submission = Submission.objects.create(idempotency_key=idempotency_key, unit=unit, user=user, response={})
        revisions = []
        for d in decisions:
            pair = pairs[d.qa_id]
            before = pair.snapshot()
            if d.action == "keep":
                pair.status, pair.provenance, pair.verified_at = QAPair.Status.VERIFIED, QAPair.Provenance.MACHINE_KEPT, now
                counts["kept"] += 1
            elif d.action == "modify":
                if d.question is not None:
                    pair.question = d.question.strip()
                if d.answer is not None:
                    pair.answer = d.answer.strip()
                if d.options is not None:
                    pair.options = [o.strip() for o in d.options]
                if d.answer_index is not None:
                    pair.answer_index = d.answer_index
                pair.status, pair.provenance, pair.verified_at = QAPair.Status.VERIFIED, QAPair.Provenance.MACHINE_MODIFIED, now
                counts["modified"] += 1
            else:
                pair.status, pair.delete_reason = QAPair.Status.DELETED, d.reason
                counts["deleted"] += 1
            pair.version += 1
            pair.save()
            revisions.append(Revision(qa_pair=pair, actor_user=user, action=d.action, before=before,
                                      after=pair.snapshot(), time_spent_ms=d.time_spent_ms, submission=submission))
        for a in additions:
            pair = QAPair.objects.create(
                project_id=unit.project_id, unit=unit, video_id=unit.video_id, qa_type=types[a.qa_type],
                origin=QAPair.Origin.HUMAN, question=a.question.strip(), answer=a.answer.strip(),
                clip_start_s=unit.start_s if a.clip_start_s is None else a.clip_start_s,
                clip_end_s=unit.end_s if a.clip_end_s is None else a.clip_end_s,
                status=QAPair.Status.VERIFIED, provenance=QAPair.Provenance.HUMAN_ADDED, verified_at=now,
            )
            counts["added"] += 1
            revisions.append(Revision(qa_pair=pair, actor_user=user, action=Revision.Action.ADD, before=None,
                                      after=pair.snapshot(), time_spent_ms=a.time_spent_ms, submission=submission))
        Revision.objects.bulk_create(revisions)

        unit.status, unit.completed_by, unit.completed_at = WorkUnit.Status.DONE, user, now
        unit.leased_by, unit.lease_expires_at, unit.time_spent_ms = None, None, time_spent_ms
        unit.save(update_fields=["status", "completed_by", "completed_at", "leased_by", "lease_expires_at", "time_spent_ms"])
        result = SubmitResult(unit.pk, counts)
        submission.response = result.as_dict()
        submission.save(update_fields=["response"])
    return result
