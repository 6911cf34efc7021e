"""Writes of onboarding and gold checks: the policy, sources made from verified units, copies, the
tutorial, pauses lifted and tries granted by admins. A package by subject (issue 23: services over
400 lines): ``policy``, ``sources``, ``copies`` and ``actions`` (the tutorial, admins' actions). Every
public name is importable from here, as before the split.

A *source* is a verified real unit; its *known* decisions come from the verified outcome (kept ->
keep, modified -> modify, deleted -> delete with its reason). A *copy* is a new ``qa.WorkUnit``
(purpose gold, qualification or example) with new QA pairs restored to the content the first pass
was shown (status draft), so its unit, QA pair and queue item ids come from the same sequences as
real units' (issue 20, section 2).
"""

from annotator.gold.services.actions import (  # noqa: F401
    EXPLANATION_MAX,
    NOTE_MAX,
    TUTORIAL_MAX,
    add_example,
    exempt,
    grant_try,
    lift_pause,
    remove_example,
    set_explanation,
    set_tutorial,
    worked_before,
)
from annotator.gold.services.copies import (  # noqa: F401
    PURPOSE_OF,
    copy_params,
    copy_sql,
    make_copy,
)
from annotator.gold.services.policy import (  # noqa: F401
    policy_of,
    set_policy,
)
from annotator.gold.services.sources import (  # noqa: F401
    SOURCES_MAX,
    footage_of,
    known_decision,
    make_sources,
    verified_units,
)
