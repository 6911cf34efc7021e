"""Writes for QA: QA types, units for new drafts, queue policy, and everything an annotator does to
a unit (submit, skip, autosave), plus edits, model flags and model revisions (options replaced,
drafts dropped) outside the queue. A package by subject (issue 23: services over 400 lines):

- ``units``: QA types, the units new drafts open, the queue policy;
- ``validation``: what a submit is made of (decisions, additions, its result) and its checks;
- ``submit``: ``submit_unit`` (one person's whole pass in one transaction, replayed by its
  idempotency key), the rework helpers and the after-submit and after-skip hooks;
- ``edits``: skip, autosave, edits of one QA pair, model flags and revisions, QA type presets.

Every public name is importable from here, as before the split.
"""

from annotator.qa.services.edits import (  # noqa: F401
    FLAGGED_PRIORITY,
    MAX_AUTOSAVE_BYTES,
    apply_preset,
    autosave,
    drop_by_model,
    edit_qa_pair,
    flag_qa_pair,
    set_options_by_model,
    skip_unit,
)
from annotator.qa.services.submit import (  # noqa: F401
    AFTER_SKIP,
    AFTER_SUBMIT,
    DECIDING_KINDS,
    after_skip,
    after_submit,
    last_deciding_pass,
    restorable_pairs,
    reworked_pass,
    submit_unit,
)
from annotator.qa.services.units import (  # noqa: F401
    MAX_OVERLAP_K,
    asked_of,
    chosen,
    day_night_groups_of,
    double_check_drawn,
    ensure_qa_type,
    groups_led_by,
    life_log_span,
    open_units_for_drafts,
    set_queue_policy,
)
from annotator.qa.services.validation import (  # noqa: F401
    MAX_TEXT,
    Addition,
    Decision,
    SubmitResult,
    check_options,
    interval_answer_text,
    time_errors,
)
