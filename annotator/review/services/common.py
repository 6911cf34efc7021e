"""What every review write shares: its limits and tag rule, a comment and a review's result, the
checks a review or a round runs before writing, and the units awaiting review."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db.models import Exists, Max, OuterRef, Q

from annotator.errors import Conflict
from annotator.projects.models import Project
from annotator.qa.models import QAPair, QueueItem, WorkUnit
from annotator.qa.services import DECIDING_KINDS, restorable_pairs
from annotator.review.models import Review, ReviewState

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
