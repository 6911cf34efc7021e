"""One person's pass over a unit: ``submit_unit`` applies every decision and addition in one
transaction or nothing, and a retried submit with the same idempotency key replays the first
response without writing again. Changes name the version they saw; a QA pair changed by someone
else since is a conflict (409), never a silent overwrite (checked in ``validation``). Also the
rework helpers and the hooks other apps run after a submit or a skip."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotator.errors import Conflict, Invalid, NotHeld
from annotator.qa import queue
from annotator.qa.models import Autosave, QAPair, QAType, QueueItem, Revision, Submission, Verdict, WorkUnit
from annotator.qa.selectors import drafted_states, pairs_for_pass
from annotator.qa.services.units import double_check_drawn
from annotator.qa.services.validation import (
    Addition,
    Decision,
    SubmitResult,
    _content,
    _proposed,
    _validate,
    interval_answer_text,
    time_errors,
)

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
