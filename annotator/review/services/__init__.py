"""Writes for review with rework (issue 20, section 3): a reviewer's accept or reject with comments,
reopening one's own unit, quality rounds, and the review state a submit leaves. A package by subject
(issue 23: services over 400 lines): ``common`` (limits, results, checks), ``review``, ``rework``,
``rounds`` and ``gold`` (gold copies settled as real units are). Every public name is importable
from here, as before the split.

Each write owns its transaction and locks the unit's ``ReviewState`` row first, so a review, a
reopen and a submit of the same unit are applied one after the other. Errors are the domain's
(``annotator.errors``); whatever raised one wrote nothing.

Every review is recorded in the revision history of the QA pairs it looked at: one append-only
``Revision`` per pair (action ``review``, the pair's content unchanged, ``after["review"]`` naming
the review, its decision and the pair's comment and tags), so a pair's history reads: the first
pass's keep, the reviewer's rejection with its comment, the rework's modify (a revision of the
rework's submission), the next review's acceptance.
"""

from annotator.review.services.common import (  # noqa: F401
    EXAMPLES_PER_TAG,
    MAX_COMMENT_TEXT,
    MAX_COMMENTS,
    MAX_ROUND_TAGS,
    MAX_SAMPLE,
    MAX_TAGS,
    REVIEW_ACTION,
    REWORK_PRIORITY,
    SUGGESTED_TAGS,
    TAG_RE,
    TAG_RULE,
    Comment,
    ReviewResult,
    awaiting_states,
    reviewable_pairs,
    tag_errors,
)
from annotator.review.services.gold import (  # noqa: F401
    CHECKED,
    REACHED,
    ROUND,
    ROUND_CLOSED,
    round_settling,
    settle_gold,
    settle_gold_later,
    settle_reached,
)
from annotator.review.services.review import (  # noqa: F401
    note_submission,
    review_unit,
)
from annotator.review.services.rework import (  # noqa: F401
    reopen_unit,
    send_back,
)
from annotator.review.services.rounds import (  # noqa: F401
    close_round,
    close_round_now,
    mark_summary_read,
    open_round,
)
