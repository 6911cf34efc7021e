"""Writes for review with rework (issue 20, section 3): a reviewer's accept or reject with comments,
reopening one's own unit, quality rounds, and the review state a submit leaves.

Each write owns its transaction and locks the unit's ``ReviewState`` row first, so a review, a
reopen and a submit of the same unit are applied one after the other. Errors are the domain's
(``annotator.errors``); whatever raised one wrote nothing.

Every review is recorded in the revision history of the QA pairs it looked at: one append-only
``Revision`` per pair (action ``review``, the pair's content unchanged, ``after["review"]`` naming
the review, its decision and the pair's comment and tags), so a pair's history reads: the first
pass's keep, the reviewer's rejection with its comment, the rework's modify (a revision of the
rework's submission), the next review's acceptance.
"""

from __future__ import annotations

import random
import re
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Exists, Max, OuterRef, Q
from django.utils import timezone

from annotator import jobs
from annotator.errors import Conflict, Forbidden, Invalid
from annotator.projects.models import Membership, Project, Role
from annotator.qa.models import QAPair, QueueItem, Revision, WorkUnit
from annotator.qa.services import DECIDING_KINDS, double_check_drawn, restorable_pairs
from annotator.review.models import Review, ReviewComment, ReviewRound, ReviewState, RoundSummary, RoundUnit

MAX_COMMENT_TEXT = 2000  # characters of one comment
MAX_COMMENTS = 500  # comments of one review (one per QA pair; a unit has at most this many decisions)
MAX_TAGS = 8  # issue tags on one comment
MAX_ROUND_TAGS = 30  # tags in a round's vocabulary
MAX_SAMPLE = 1_000_000  # units a round may sample
TAG_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
TAG_RULE = "a tag is 1 to 40 lowercase letters, digits, - or _ (e.g. wrong_answer)"
# Rework comes before everything else its annotator is served (model-flagged units get -10).
REWORK_PRIORITY = -20
# The revision action that records a review in a QA pair's history (see the module docstring).
REVIEW_ACTION = "review"
# Tags the reviewer page offers outside a round (a round brings its own vocabulary). Reviewers may
# use others outside a round.
SUGGESTED_TAGS = ("wrong_answer", "vague_question", "not_visible", "wrong_clip", "wrong_delete", "language")
EXAMPLES_PER_TAG = 3


@dataclass(frozen=True)
class Comment:
    """A reviewer's comment on QA pair ``qa_id``: text (at most ``MAX_COMMENT_TEXT`` characters) and
    issue tags (at most ``MAX_TAGS``, each matching ``TAG_RE``). Text or a tag, or both."""

    qa_id: int
    text: str = ""
    tags: tuple[str, ...] | list[str] = ()


@dataclass
class ReviewResult:
    """The response stored with a review and replayed for a retry with its idempotency key."""

    review_id: int
    unit_id: int
    decision: str
    state: str
    rework_item_id: int | None
    round_id: int | None
    round_closed: bool
    comments: int
    replayed: bool = False

    def as_dict(self) -> dict:
        return {
            "review_id": self.review_id,
            "unit_id": self.unit_id,
            "decision": self.decision,
            "state": self.state,
            "rework_item_id": self.rework_item_id,
            "round_id": self.round_id,
            "round_closed": self.round_closed,
            "comments": self.comments,
            "replayed": self.replayed,
        }


# ------------------------------------------------------------------------------- the submit hook


def note_submission(item: QueueItem, unit: WorkUnit, user, result) -> None:
    """``qa.services.after_submit`` hook: a submitted pass that decides a real unit's QA pairs (first
    pass, double-check, rework) puts the unit in review: ``submitted``, or ``resubmitted`` after a
    rework, with this pass as the one to review and its submitter as the unit's annotator. Runs in
    the submit's transaction."""
    # A gold copy is put in review as a real unit is (its annotator's "My work" must not tell it
    # apart, issue 20 section 2), but never reaches a reviewer (``awaiting_states``): it is settled
    # as the real units around it are (``settle_gold``).
    if item.kind not in DECIDING_KINDS or unit.purpose not in (WorkUnit.Purpose.REAL, WorkUnit.Purpose.GOLD):
        return
    state = ReviewState.objects.select_for_update().filter(unit_id=unit.pk).first()
    new = ReviewState.State.RESUBMITTED if item.kind == QueueItem.Kind.REWORK else ReviewState.State.SUBMITTED
    now = item.completed_at or timezone.now()
    if state is None:
        ReviewState.objects.create(
            unit_id=unit.pk,
            project_id=unit.project_id,
            state=new,
            item=item,
            annotator=user,
            submitted_at=now,
            check_drawn=unit.purpose == WorkUnit.Purpose.GOLD and double_check_drawn(item, unit),
        )
        return
    if item.kind == QueueItem.Kind.DOUBLE_CHECK and unit.purpose == WorkUnit.Purpose.REAL:
        settle_gold_later(unit.project_id, CHECKED, state.submitted_at.isoformat(), event=f"item-{item.pk}")
    state.state, state.item, state.annotator, state.rework_item, state.submitted_at = new, item, user, None, now
    state.save(update_fields=["state", "item", "annotator", "rework_item", "submitted_at", "updated_at"])


# ------------------------------------------------------------------------------------ checking


def tag_errors(tags, where: str, errors: dict, vocabulary=None, *, limit: int = MAX_TAGS) -> None:
    """Add to ``errors`` what is wrong with ``tags``: not a list of strings, more than ``limit``, a
    tag not matching ``TAG_RE``, twice the same, or (``vocabulary`` given and not empty) not in it."""
    if not isinstance(tags, (list, tuple)):
        errors[where] = "tags must be a list of strings"
        return
    if len(tags) > limit:
        errors[where] = f"at most {limit} tags"
        return
    for i, tag in enumerate(tags):
        if not isinstance(tag, str) or not TAG_RE.fullmatch(tag):
            errors[f"{where}[{i}]"] = TAG_RULE
        elif vocabulary and tag not in vocabulary:
            errors[f"{where}[{i}]"] = f"{tag!r} is not a tag of this round: choose from {', '.join(vocabulary)}"
    if len(set(map(str, tags))) != len(tags):
        errors[where] = "a tag appears twice"


def _input_errors(decision, comments, idempotency_key) -> dict[str, str]:
    """Shape and bounds of a review's input (before anything is read)."""
    errors: dict[str, str] = {}
    if not isinstance(idempotency_key, str) or not 1 <= len(idempotency_key) <= 100:
        errors["idempotency_key"] = "required, at most 100 characters"
    if decision not in Review.Decision.values:
        errors["decision"] = "decision must be accept or reject"
    if not isinstance(comments, (list, tuple)):
        errors["comments"] = "comments must be a list"
        return errors
    if len(comments) > MAX_COMMENTS:
        errors["comments"] = f"at most {MAX_COMMENTS} comments"
        return errors
    seen: set[int] = set()
    for i, c in enumerate(comments):
        where = f"comments[{i}]"
        if not isinstance(c, Comment):
            errors[where] = "a comment has qa_id, text and tags"
            continue
        if not isinstance(c.qa_id, int) or isinstance(c.qa_id, bool) or c.qa_id < 1:
            errors[f"{where}.qa_id"] = "a QA pair id"
        elif c.qa_id in seen:
            errors[f"{where}.qa_id"] = f"QA pair {c.qa_id} has two comments: write one"
        else:
            seen.add(c.qa_id)
        if not isinstance(c.text, str):
            errors[f"{where}.text"] = "text must be a string"
        elif len(c.text) > MAX_COMMENT_TEXT:
            errors[f"{where}.text"] = f"at most {MAX_COMMENT_TEXT} characters"
        tag_errors(c.tags, f"{where}.tags", errors)
        if isinstance(c.text, str) and not c.text.strip() and isinstance(c.tags, (list, tuple)) and not c.tags:
            errors[where] = "write a comment or choose a tag (or leave this QA pair out)"
    return errors


def _refuse_unless_awaiting(state: ReviewState, what: str) -> None:
    """Conflict, in plain words, unless the unit awaits review with no deciding pass open."""
    if state.state == ReviewState.State.ACCEPTED:
        raise Conflict(f"this unit was reviewed already (accepted); it cannot be {what}")
    if state.state == ReviewState.State.REJECTED:
        raise Conflict(f"this unit was reviewed already (rejected): its rework is open; it cannot be {what} now")
    if state.state == ReviewState.State.REOPENED:
        raise Conflict(f"its annotator reopened this unit: it cannot be {what} until they submit it again")
    open_pass = QueueItem.objects.filter(
        unit_id=state.unit_id, kind__in=DECIDING_KINDS, status=QueueItem.Status.OPEN
    ).first()
    # A gold copy the double-check draw chose answers as a real unit whose double-check is open.
    kind = (
        open_pass.get_kind_display()
        if open_pass is not None
        else (QueueItem.Kind.DOUBLE_CHECK.label if state.check_drawn else None)
    )
    if kind is not None:
        raise Conflict(f"a {kind} of this unit is still open: it cannot be {what} until that is submitted")


def reviewable_pairs(state: ReviewState):
    """The QA pairs a review of the unit looks at (and may comment on): its verified pairs, and the
    pairs the reviewed pass deleted (``qa.services.restorable_pairs``), which a rework may restore."""
    deleted = restorable_pairs(state.unit_id, state.item).values("pk")
    return QAPair.objects.filter(Q(unit_id=state.unit_id) & (Q(status=QAPair.Status.VERIFIED) | Q(pk__in=deleted)))


def _open_rework(state: ReviewState, priority: int = REWORK_PRIORITY) -> QueueItem:
    """A rework queue item over the unit, assigned to its annotator (served to them alone, first)."""
    seq = QueueItem.objects.filter(unit_id=state.unit_id, kind=QueueItem.Kind.REWORK).aggregate(n=Max("seq"))["n"]
    return QueueItem.objects.create(
        project_id=state.project_id,
        unit_id=state.unit_id,
        kind=QueueItem.Kind.REWORK,
        seq=0 if seq is None else seq + 1,
        priority=priority,
        assigned_to_id=state.annotator_id,
    )


# ------------------------------------------------------------------------------------ the review


def review_unit(unit_id: int, reviewer, decision: str, comments: list[Comment], idempotency_key: str) -> ReviewResult:
    """Accept or reject the submitted unit ``unit_id`` as ``reviewer``, with comments per QA pair.

    Steps, in one transaction: check the input's shape and bounds (Invalid, per-field errors); if a
    review with ``idempotency_key`` exists, return its stored result (``replayed``) when it is the
    same reviewer and unit, else Conflict; lock the unit's review state and look for the key again
    (a request with the same key may have committed while this one waited: all of them get its
    result); refuse a unit not awaiting review or with a deciding pass open (Conflict), the
    reviewer's own work (Forbidden), comments on QA pairs the review does not look at
    (``reviewable_pairs``), tags outside the unit's open round's vocabulary, or a rejection without
    a comment (Invalid); then write the review, its comments and one ``review`` revision per QA pair
    looked at. A rejection opens a rework item assigned to the reviewed pass's annotator (priority
    ``REWORK_PRIORITY``: it comes back to them first, to nobody else). A unit of the project's open
    round answers it; the round's last review closes it (``close_round``).

    Raises WorkUnit.DoesNotExist for an unknown unit.
    """
    errors = _input_errors(decision, comments, idempotency_key)
    if errors:
        raise Invalid("the review has errors; nothing was saved", errors=errors)

    def replay() -> ReviewResult | None:
        previous = Review.objects.filter(idempotency_key=idempotency_key).first()
        if previous is None:
            return None
        if previous.reviewer_id != reviewer.pk or previous.unit_id != unit_id:
            raise Conflict("this idempotency key was used for another review")
        return ReviewResult(**{**previous.response, "replayed": True})

    with transaction.atomic():
        if (replayed := replay()) is not None:
            return replayed
        state = ReviewState.objects.select_for_update().filter(unit_id=unit_id).first()
        if (replayed := replay()) is not None:  # read committed: sees a same-key review committed meanwhile
            return replayed
        if state is None:
            WorkUnit.objects.get(pk=unit_id)  # DoesNotExist for an unknown unit
            raise Conflict("this unit has not been submitted yet: there is nothing to review")
        if state.annotator_id == reviewer.pk:
            raise Forbidden("you submitted this unit: someone else reviews it")
        if WorkUnit.objects.filter(pk=unit_id).exclude(purpose=WorkUnit.Purpose.REAL).exists():
            raise Conflict("this unit does not await review")  # a gold copy: never reviewed (issue 20)
        _refuse_unless_awaiting(state, "reviewed")
        pairs = {p.pk: p for p in reviewable_pairs(state).order_by("id")}
        membership = (
            RoundUnit.objects.select_related("round")
            .filter(unit_id=unit_id, review__isnull=True, round__closed_at__isnull=True)
            .first()
        )
        round_ = ReviewRound.objects.select_for_update().get(pk=membership.round_id) if membership else None
        for i, c in enumerate(comments):
            if c.qa_id not in pairs:
                errors[f"comments[{i}].qa_id"] = (
                    f"QA pair {c.qa_id} is not one this review looks at (the unit's "
                    "verified pairs and those its last pass deleted)"
                )
            if round_ is not None and round_.tags:
                tag_errors(c.tags, f"comments[{i}].tags", errors, round_.tags)
        if decision == Review.Decision.REJECT and not comments:
            errors["comments"] = "say what to change: a rejection needs at least one comment on a QA pair"
        if errors:
            raise Invalid("the review has errors; nothing was saved", errors=errors)

        if membership is None:
            # The person's gold copies the queue reached before this unit but whose settling job has
            # not run yet: settled now, before their later real unit is accepted or rejected, or their
            # list would show an older unit still waiting behind a newer reviewed one, which the
            # oldest-first queue does only for gold (the last security review of issue 20, M1).
            settle_gold(
                state.project_id,
                before=_oldest_waiting(state.project_id, reviewer),
                reviewer=reviewer,
                annotator_id=state.annotator_id,
            )
        now = timezone.now()
        review = Review(
            project_id=state.project_id,
            unit_id=unit_id,
            item_id=state.item_id,
            annotator_id=state.annotator_id,
            reviewer=reviewer,
            decision=decision,
            round=round_,
            idempotency_key=idempotency_key,
            response={},
        )
        try:
            with transaction.atomic():
                review.save()
        except IntegrityError:
            # The key was taken meanwhile by a review of another unit (the state lock keeps two reviews
            # of this pass apart): nothing was written.
            raise Conflict("this idempotency key was used for another review") from None
        rework = _open_rework(state) if decision == Review.Decision.REJECT else None
        new_state = ReviewState.State.REJECTED if rework else ReviewState.State.ACCEPTED
        by_pair = {c.qa_id: c for c in comments}
        ReviewComment.objects.bulk_create(
            [ReviewComment(review=review, qa_pair_id=c.qa_id, text=c.text.strip(), tags=list(c.tags)) for c in comments]
        )
        Revision.objects.bulk_create(
            [
                Revision(
                    qa_pair=p,
                    actor_user=reviewer,
                    action=REVIEW_ACTION,
                    before=p.snapshot(),
                    version=p.version,
                    after={
                        **p.snapshot(),
                        "review": {
                            "id": review.pk,
                            "decision": decision,
                            "round": round_.pk if round_ else None,
                            "comment": by_pair[p.pk].text.strip() if p.pk in by_pair else "",
                            "tags": list(by_pair[p.pk].tags) if p.pk in by_pair else [],
                        },
                    },
                )
                for p in pairs.values()
            ]
        )
        closed = False
        if membership is not None:
            RoundUnit.objects.filter(pk=membership.pk).update(review=review)
            if not RoundUnit.objects.filter(round=round_, review__isnull=True).exists():
                close_round(round_, now=now)
                closed = True
        state.state, state.review, state.rework_item, state.round = new_state, review, rework, None
        state.save(update_fields=["state", "review", "rework_item", "round", "updated_at"])
        if membership is None:  # a round's units settle gold when the round closes (``close_round``)
            settle_gold_later(state.project_id, REACHED, reviewer.pk, event=f"reviewer-{reviewer.pk}")
        result = ReviewResult(
            review.pk,
            unit_id,
            decision,
            new_state,
            rework.pk if rework else None,
            round_.pk if round_ else None,
            closed,
            len(comments),
        )
        review.response, review.rework_item = result.as_dict(), rework
        review.save(update_fields=["response", "rework_item"])
    return result


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


# ---------------------------------------------------------------------------------------- rounds


def awaiting_states(project: Project | int):
    """The project's (a Project or its id) units awaiting review (``ReviewState`` rows) whose
    deciding passes are all submitted (an open double-check, say, keeps a unit out until it is done)."""
    # Correlated (NOT EXISTS per row, by the unit index of queue items): a NOT IN over every open
    # item would read the whole open queue.
    open_pass = QueueItem.objects.filter(
        unit_id=OuterRef("unit_id"), kind__in=DECIDING_KINDS, status=QueueItem.Status.OPEN
    )
    return ReviewState.objects.filter(
        ~Exists(open_pass),
        project_id=getattr(project, "pk", project),
        state__in=ReviewState.AWAITING,
        unit__purpose=WorkUnit.Purpose.REAL,
    )


def open_round(
    project: Project, *, sample: int | None = None, all_units: bool = False, tags=(), seed: int = 0, opened_by=None
) -> ReviewRound:
    """Open a quality round over the project's units awaiting review (``awaiting_states``): a sample
    of ``sample`` of them drawn with ``random.Random(seed)`` from their ids in order (reproducible),
    or all of them (``all_units``), reviewed with the issue-tag vocabulary ``tags`` (empty: any tag).
    The round's units come first in the review queue. Returns the round.

    Raises Invalid (neither or both of sample and all, a sample outside 1..``MAX_SAMPLE``, bad tags)
    and Conflict (a round of the project is still open; no unit awaits review)."""
    errors: dict[str, str] = {}
    if (sample is None) == (not all_units):
        errors["sample"] = "give a sample size or all, not both"
    elif sample is not None and (
        not isinstance(sample, int) or isinstance(sample, bool) or not 1 <= sample <= MAX_SAMPLE
    ):
        errors["sample"] = f"a sample is from 1 to {MAX_SAMPLE:,} units"
    tags = list(tags)
    tag_errors(tags, "tags", errors, limit=MAX_ROUND_TAGS)
    if errors:
        raise Invalid("the round has errors; nothing was opened", errors=errors)
    with transaction.atomic():
        # One round opening at a time per project. NO KEY: a review's insert checks its foreign key to
        # the project (FOR KEY SHARE), which FOR UPDATE would block while holding its unit's state.
        Project.objects.select_for_update(no_key=True).get(pk=project.pk)
        current = ReviewRound.objects.filter(project=project, closed_at__isnull=True).first()
        if current is not None:
            done = RoundUnit.objects.filter(round=current, review__isnull=False).count()
            total = RoundUnit.objects.filter(round=current).count()
            raise Conflict(
                f"round {current.pk} of this project is still open ({done} of {total} units reviewed); close it first"
            )
        ids = list(
            awaiting_states(project).filter(round__isnull=True).order_by("unit_id").values_list("unit_id", flat=True)
        )
        if not ids:
            raise Conflict("no unit of this project awaits review: there is nothing to put in a round")
        chosen = sorted(random.Random(seed).sample(ids, min(sample, len(ids)))) if sample is not None else ids
        round_ = ReviewRound.objects.create(
            project=project, opened_by=opened_by, sample_size=sample, seed=seed, tags=tags, pool=len(ids)
        )
        RoundUnit.objects.bulk_create([RoundUnit(round=round_, unit_id=u) for u in chosen])
        ReviewState.objects.filter(unit_id__in=chosen).update(round=round_)
    return round_


def close_round(round_: ReviewRound, *, now=None) -> ReviewRound:
    """Close ``round_`` (called by the review that answers its last unit, or by an admin early, with
    the reviews so far) and write its summaries. Must run in the caller's transaction with the round
    row locked (``review_unit`` holds it; ``close_round_now`` takes it).

    ``summary`` (for reviewers and admins)::

        {"round", "closed_at", "units", "reviewed", "accepted", "rejected",
         "tags": [{"tag", "count", "units", "examples": [{"unit_id", "qa_id", "text"}]}]}

    ``tags`` by count, most first (then by tag); ``count`` counts comments, ``units`` distinct
    units; up to ``EXAMPLES_PER_TAG`` examples each. Each of the project's annotators, and each
    person whose pass the round reviewed, gets a ``RoundSummary``::

        {"round", "closed_at", "units", "reviewed", "accepted", "rejected",
         "tags": [{"tag", "count", "yours", "examples": [...]}], "yours": {"reviewed", "accepted",
         "rejected", "rework_units": [unit ids]}}

    with the same counts, how many of each tag's comments were on their units (``yours``) and
    examples from their own units only. Rejected units went back for rework when they were
    rejected."""
    now = now or timezone.now()
    reviews = list(Review.objects.filter(round=round_).prefetch_related("comments").order_by("id"))
    units = RoundUnit.objects.filter(round=round_).count()
    counts: Counter = Counter()
    tag_units: dict[str, set[int]] = {}
    mine: dict[int, Counter] = {}
    examples: dict[str, list[dict]] = {}
    own_examples: dict[tuple[int, str], list[dict]] = {}
    for review in reviews:
        mine.setdefault(review.annotator_id, Counter())
        for c in review.comments.all():
            for tag in c.tags:
                counts[tag] += 1
                mine[review.annotator_id][tag] += 1
                tag_units.setdefault(tag, set()).add(review.unit_id)
                example = {"unit_id": review.unit_id, "qa_id": c.qa_pair_id, "text": c.text}
                if c.text and len(examples.setdefault(tag, [])) < EXAMPLES_PER_TAG:
                    examples[tag].append(example)
                own = own_examples.setdefault((review.annotator_id, tag), [])
                if c.text and len(own) < EXAMPLES_PER_TAG:
                    own.append(example)
    order = sorted(counts, key=lambda t: (-counts[t], t))
    head = {
        "round": round_.pk,
        "closed_at": now.isoformat(),
        "units": units,
        "reviewed": len(reviews),
        "accepted": sum(r.decision == Review.Decision.ACCEPT for r in reviews),
        "rejected": sum(r.decision == Review.Decision.REJECT for r in reviews),
    }
    round_.summary = {
        **head,
        "tags": [
            {"tag": t, "count": counts[t], "units": len(tag_units[t]), "examples": examples.get(t, [])} for t in order
        ],
    }
    round_.closed_at = now
    round_.save(update_fields=["summary", "closed_at"])
    # Units of the round left without a review (closed early) leave its place at the head of the queue.
    ReviewState.objects.filter(round=round_).update(round=None)
    people = set(
        Membership.objects.filter(project_id=round_.project_id, role=Role.ANNOTATOR).values_list("user_id", flat=True)
    ) | set(mine)
    summaries = []
    for person in sorted(people):
        theirs = [r for r in reviews if r.annotator_id == person]
        summaries.append(
            RoundSummary(
                round=round_,
                user_id=person,
                summary={
                    **head,
                    "tags": [
                        {
                            "tag": t,
                            "count": counts[t],
                            "yours": mine.get(person, Counter())[t],
                            "examples": own_examples.get((person, t), []),
                        }
                        for t in order
                    ],
                    "yours": {
                        "reviewed": len(theirs),
                        "accepted": sum(r.decision == Review.Decision.ACCEPT for r in theirs),
                        "rejected": sum(r.decision == Review.Decision.REJECT for r in theirs),
                        "rework_units": [r.unit_id for r in theirs if r.decision == Review.Decision.REJECT],
                    },
                },
            )
        )
    RoundSummary.objects.bulk_create(summaries, ignore_conflicts=True)
    if reviews:
        # The gold copies that were waiting when the round opened are settled in the share of the
        # round's pool its reviews answered: all of them after a round over all units.
        settle_gold_later(round_.project_id, ROUND_CLOSED, round_settling(round_, reviews), event=f"round-{round_.pk}")
    return round_


# ---------------------------------------------------------------------------------- gold copies

REACHED, CHECKED, ROUND, ROUND_CLOSED = "reached", "checked", "round", "round-closed"


def round_settling(round_: ReviewRound, reviews: list[Review]) -> dict:
    """What the close of ``round_`` settles, fixed when it closes so the job needs nothing of the
    round later (a round deleted meanwhile left its copies waiting): the copies submitted at or
    before it opened (``upto``, ISO 8601), accepted by the reviewer of its last review
    (``reviewer``: a reviewer with reviews cannot be deleted, ``Review.reviewer`` protects them),
    in the share of its pool its ``reviews`` answered (0 to 1), drawn with its ``seed``."""
    units = RoundUnit.objects.filter(round=round_).count()
    last = max(reviews, key=lambda r: r.pk)
    return {
        "upto": round_.opened_at.isoformat(),
        "reviewer": last.reviewer_id,
        "seed": round_.seed,
        "share": min(1.0, len(reviews) / (round_.pool or units or 1)),
    }


def settle_gold_later(project_id: int, how: str, ref: int | str | dict, *, event: str) -> int | None:
    """Queue the settling of the gold copies an event reached, a delay drawn uniformly from
    [``GOLD_SETTLE_DELAY_MIN_S``, ``GOLD_SETTLE_DELAY_MAX_S``] seconds later (the job
    ``review.settle_gold``, on commit of the caller's transaction). Settled in the same transaction,
    a copy flipped together with the real unit whose review reached it, which its annotator could
    see by polling both (the last security review of issue 20, M1).

    ``how`` and ``ref``: ``REACHED`` and the reviewer's id (a review outside a round: the bound is
    read when the job runs, so reviews meanwhile move it on), ``CHECKED`` and the real unit's
    submission time as ISO 8601 (a double-check), ``ROUND_CLOSED`` and ``round_settling``'s dict
    (a round's close; ``ROUND`` and the round's id in jobs queued before it).
    ``event`` names the job with the project: while one of a name waits, another is not queued (its
    run reads the bound then, so it settles what both reached). Returns the job id, or None."""
    delay = random.SystemRandom().uniform(settings.GOLD_SETTLE_DELAY_MIN_S, settings.GOLD_SETTLE_DELAY_MAX_S)
    return jobs.enqueue(
        "review.settle_gold", project_id, how, ref, key=f"review.settle_gold:{project_id}:{event}", countdown_s=delay
    )


def settle_reached(project_id: int, how: str, ref: int | str | dict) -> int:
    """Settle now, in one transaction, the gold copies of project ``project_id`` that the event
    (``how``, ``ref``; see ``settle_gold_later``) reached. Returns how many were settled; 0 when
    the reviewer or round is gone. Raises ValueError for an unknown ``how``."""
    with transaction.atomic():
        if how == REACHED:
            reviewer = get_user_model().objects.filter(pk=ref).first()
            if reviewer is None:
                return 0
            return settle_gold(project_id, before=_oldest_waiting(project_id, reviewer), reviewer=reviewer)
        if how == CHECKED:
            return settle_gold(project_id, upto=datetime.fromisoformat(str(ref)), checked=True)
        if how == ROUND_CLOSED:
            reviewer = get_user_model().objects.get(pk=ref["reviewer"])
            return settle_gold(
                project_id,
                upto=datetime.fromisoformat(ref["upto"]),
                reviewer=reviewer,
                share=float(ref["share"]),
                seed=int(ref["seed"]),
            )
        if how == ROUND:  # jobs queued before ROUND_CLOSED: read the round when they run
            round_ = ReviewRound.objects.filter(pk=ref, closed_at__isnull=False).first()
            last = Review.objects.filter(round_id=ref).select_related("reviewer").order_by("-id").first()
            if round_ is None or last is None:
                return 0
            reviewed = Review.objects.filter(round_id=ref).count()
            units = RoundUnit.objects.filter(round_id=ref).count()
            return settle_gold(
                project_id,
                upto=round_.opened_at,
                reviewer=last.reviewer,
                share=min(1.0, reviewed / (round_.pool or units or 1)),
                seed=round_.seed,
            )
        raise ValueError(f"unknown way to reach gold copies: {how!r}")


def _oldest_waiting(project_id: int, reviewer):
    """When the oldest real unit still waiting in the project's review queue that ``reviewer`` may
    review (not their own) was submitted (a datetime), or None: the oldest-first queue has not gone
    past it, whatever unit they picked by hand. Units of an open round count too: the gold copies
    of their time are the round's to settle when it closes. One query, on the ``review_awaiting``
    index."""
    return (
        awaiting_states(project_id)
        .exclude(annotator_id=reviewer.pk)
        .order_by("submitted_at")
        .values_list("submitted_at", flat=True)
        .first()
    )


def settle_gold(
    project_id: int,
    *,
    upto=None,
    before=None,
    reviewer=None,
    checked: bool = False,
    share: float = 1.0,
    seed: int = 0,
    annotator_id: int | None = None,
) -> int:
    """Settle the gold copies of project ``project_id`` submitted at or before ``upto`` and strictly
    before ``before`` (datetimes; None: no bound) as the real units around them are settled, so that
    their annotators cannot tell them apart by what becomes of them (issue 20, section 2: gold
    copies are never reviewed). Runs in the caller's transaction; rows another transaction holds
    are left for a later settling (skip locked).

    A review outside a round gives ``before``: the oldest real unit still waiting that the reviewer
    may review (``_oldest_waiting``). The review queue runs oldest first, so the gold copies before
    it are those a reviewer would have reached; one who picked a later unit by hand has not reached
    the copies after the oldest waiting unit. With no real unit waiting, every copy is reached.

    - ``checked`` (a real unit's double-check was submitted; the double-check queue runs oldest
      first): the states of the copies the double-check draw chose (``check_drawn``) go away, as a
      double-checked real unit's state moves to its checker and leaves its first annotator's list.
    - otherwise (a reviewer's review, or a closing round; reviews run oldest first): each waiting
      copy not drawn for a double-check is accepted by ``reviewer`` (never their own), with a
      ``Review`` and its revisions as a real acceptance has, no comment, outside any round (gold
      reviews never enter a round's counts); ``share`` (0 to 1) of them, drawn per unit by
      ``random.Random`` seeded with ``seed`` and the unit (a sampled round).

    ``annotator_id``: that person's copies only (a review of their later real unit settles the
    copies the queue reached before it: ``review_unit``).

    Returns how many copies were settled."""
    states = (
        ReviewState.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(
            project_id=project_id,
            unit__purpose=WorkUnit.Purpose.GOLD,
            state__in=ReviewState.AWAITING,
            check_drawn=checked,
        )
        .order_by("submitted_at", "unit_id")
    )
    if upto is not None:
        states = states.filter(submitted_at__lte=upto)
    if before is not None:
        states = states.filter(submitted_at__lt=before)
    if annotator_id is not None:
        states = states.filter(annotator_id=annotator_id)
    if checked:
        return ReviewState.objects.filter(pk__in=[s.pk for s in states]).delete()[0]
    settled = 0
    for state in states.exclude(annotator_id=reviewer.pk):
        if share < 1.0 and random.Random(f"{seed}:gold:{state.unit_id}").random() >= share:
            continue
        review = Review.objects.create(
            project_id=project_id,
            unit_id=state.unit_id,
            item_id=state.item_id,
            annotator_id=state.annotator_id,
            reviewer=reviewer,
            decision=Review.Decision.ACCEPT,
            idempotency_key=f"gold:{uuid.uuid4()}",
            response={},
        )
        review.response = ReviewResult(
            review.pk, state.unit_id, Review.Decision.ACCEPT, ReviewState.State.ACCEPTED, None, None, False, 0
        ).as_dict()
        review.save(update_fields=["response"])
        Revision.objects.bulk_create(
            [
                Revision(
                    qa_pair=p,
                    actor_user=reviewer,
                    action=REVIEW_ACTION,
                    before=p.snapshot(),
                    version=p.version,
                    after={
                        **p.snapshot(),
                        "review": {
                            "id": review.pk,
                            "decision": Review.Decision.ACCEPT,
                            "round": None,
                            "comment": "",
                            "tags": [],
                        },
                    },
                )
                for p in reviewable_pairs(state).order_by("id")
            ]
        )
        state.state, state.review, state.round = ReviewState.State.ACCEPTED, review, None
        state.save(update_fields=["state", "review", "round", "updated_at"])
        settled += 1
    return settled


def close_round_now(round_id: int) -> ReviewRound:
    """Close an open round before all its units are reviewed (an admin's decision), summarising the
    reviews so far. Raises ReviewRound.DoesNotExist, Conflict (already closed)."""
    with transaction.atomic():
        # The round's units' states first, then the round: the order a review of one of them takes
        # them (``review_unit``), or a review and this close would each hold what the other waits for.
        list(
            ReviewState.objects.select_for_update()
            .filter(round_id=round_id)
            .order_by("unit_id")
            .values_list("pk", flat=True)
        )
        round_ = ReviewRound.objects.select_for_update().get(pk=round_id)
        if round_.closed_at is not None:
            raise Conflict(f"round {round_id} was closed at {round_.closed_at:%Y-%m-%d %H:%M}")
        return close_round(round_)


def mark_summary_read(summary_id: int, user) -> RoundSummary:
    """Mark one of ``user``'s round summaries read (the first time). Raises RoundSummary.DoesNotExist
    for a summary that is not theirs."""
    summary = RoundSummary.objects.get(pk=summary_id, user=user)
    if summary.read_at is None:
        summary.read_at = timezone.now()
        summary.save(update_fields=["read_at"])
    return summary
