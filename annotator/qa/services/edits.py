"""Outside the submit: skip, autosave, edits of one QA pair, model flags and model revisions (options
replaced, drafts dropped), and QA type presets."""

from __future__ import annotations

import json

from django.db import connection, transaction
from django.utils import timezone

from annotator.errors import Conflict, Invalid
from annotator.projects.models import Project
from annotator.qa import queue
from annotator.qa.models import Autosave, QAPair, QAType, QueueItem, Revision, Skip
from annotator.qa.services.submit import AFTER_SKIP
from annotator.qa.services.validation import (
    Decision,
    _content,
    _proposed,
    _text_error,
    check_options,
    time_errors,
)

MAX_AUTOSAVE_BYTES = 256 * 1024
FLAGGED_PRIORITY = -10  # model-flagged units are served before everything else (SPEC part 3)

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


# The person's open item of the unit, with the claim under which they first saved work on it
# (``queue.time_bound_ms``'s two claims).
_AUTOSAVE_ITEM_SQL = """
SELECT i.id, i.claimed_at, a.claimed_at FROM qa_queueitem i
LEFT JOIN qa_autosave a ON a.item_id = i.id AND a.user_id = i.leased_by_id
WHERE i.unit_id = %(unit)s AND i.status = 'open' AND i.leased_by_id = %(user)s"""

# The save, only while the item is still open and theirs: made with the item's claim, or updated when
# the client's clock is not older than the kept save's. Returns whether the item was still theirs.
# ``FOR SHARE``: a submit, skip or take-over still running (it locks the item, then deletes the save)
# is waited for and its outcome read, so it leaves no save behind on an item that is no longer theirs
# (the same lock order as theirs: the item, then the save; found by this stop's review).
_AUTOSAVE_SQL = """
WITH held AS (
    SELECT id, claimed_at FROM qa_queueitem WHERE id = %(item)s AND status = 'open' AND leased_by_id = %(user)s
    FOR SHARE
), saved AS (
    INSERT INTO qa_autosave (item_id, user_id, state, client_saved_at_ms, time_spent_ms, claimed_at, updated_at)
    SELECT id, %(user)s, %(state)s::jsonb, %(client)s, %(spent)s, claimed_at, %(now)s FROM held
    ON CONFLICT (item_id, user_id) DO UPDATE SET state = EXCLUDED.state,
        client_saved_at_ms = EXCLUDED.client_saved_at_ms, time_spent_ms = EXCLUDED.time_spent_ms,
        updated_at = EXCLUDED.updated_at
    WHERE qa_autosave.client_saved_at_ms <= EXCLUDED.client_saved_at_ms
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM held)"""


def autosave(unit_id: int, user, state: dict, client_saved_at_ms: int, time_spent_ms: int = 0) -> int:
    """Keep the person's in-progress work on their item of the unit, with the time (ms) they have
    spent on it so far, so both survive a reload (newest write wins by the client's clock, so a late
    retry of an older save does not undo a newer one). The time is bounded like a submit's
    (``queue.time_bound_ms``). Two statements, no transaction: the item and its claims read, then
    the save written only if the item is still theirs. Returns the queue item's id. Raises Invalid
    (too large, time out of bounds; nothing saved), NotHeld (not theirs), Conflict (already
    submitted), each as ``queue.refuse_unless_held`` says."""
    text = json.dumps(state)
    if len(text) > MAX_AUTOSAVE_BYTES:
        raise Invalid(f"autosave state is larger than {MAX_AUTOSAVE_BYTES // 1024} KiB")
    for _ in range(2):
        with connection.cursor() as cursor:
            cursor.execute(_AUTOSAVE_ITEM_SQL, {"unit": unit_id, "user": user.pk})
            row = cursor.fetchone()
            if row is not None:
                item_id, claimed_at, earlier = row
                errors = time_errors(queue.time_bound_from(claimed_at, earlier), {"time_spent_ms": time_spent_ms})
                if errors:
                    raise Invalid("the autosave has errors; nothing was saved", errors=errors)
                params = {"item": item_id, "user": user.pk, "state": text, "client": client_saved_at_ms}
                cursor.execute(_AUTOSAVE_SQL, {**params, "spent": time_spent_ms, "now": timezone.now()})
                if cursor.fetchone()[0]:
                    return item_id
        queue.refuse_unless_held(unit_id, user)  # not theirs (any more): why, in words
        # Theirs after all: it changed hands between the statements (taken back, say). Once more.
    raise Conflict("this unit changed while you saved; reload the page")


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
