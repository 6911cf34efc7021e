"""Writes of the study engine, the same for every kind: create a study, enrol, serve, time and
answer trials, score, import model predictions, apply exclusion rules. A package by subject (issue
23: services over 400 lines):

- ``setup``: create a study and build its items;
- ``enrolment``: who takes part, enrolment, the study lock, assignment;
- ``trials``: serve, time and answer trials, stage moves, exclusion rules;
- ``scoring``: scoring, model predictions, models as participants.

The kind-specific parts (building items, the participant's payload, validating and scoring a
response) are in ``annotator.studies.kinds.<kind>``; these modules call them. Every public name is
importable from here, as before the split.
"""

from annotator.studies.services.enrolment import (  # noqa: F401
    NOT_A_PARTICIPANT,
    NOT_INDEPENDENT,
    Prepared,
    assign,
    enroll,
    lock_open_study,
    prepare_assignment,
    require_independent,
    require_participant_role,
)
from annotator.studies.services.scoring import (  # noqa: F401
    SCORE_BATCH,
    SCORING_LOCK,
    ImportReport,
    import_predictions,
    is_people_name,
    model_participant,
    queue_scoring,
    record_model_answers,
    score_pending,
    scoring_barrier,
)
from annotator.studies.services.setup import (  # noqa: F401
    EXCLUSION_RULES,
    STUDY_FIELDS,
    build_study,
    create_study,
    mark_build_failed,
    presets,
)
from annotator.studies.services.trials import (  # noqa: F401
    ANSWER_FIELDS,
    answer_trial,
    current_trial,
    exclusion_of,
    mark_shown,
    start,
)
