"""Computing and storing agreement reports, the schedule, rating sets and the consensus round. A package
by subject (issue 23: services over 400 lines): ``computing`` (compute, schedule, read), ``ratings``
and ``consensus``. Every public name is importable from here, as before the split.

``compute(project, key)`` measures one scope (``scopes``) with ``annotator.scoring.agreement`` and
stores one ``Computation`` with its ``Report`` rows; one computation per scope runs at a time (a
PostgreSQL advisory lock on the scope's row; a second caller returns None at once). ``schedule()``
(Celery beat) queues a computation for every scope whose inputs changed since its last one.
"""

from annotator.agreement.services.computing import (  # noqa: F401
    LOCK_CLASS,
    TOP_ITEMS,
    compute,
    compute_job,
    latest,
    report_dict,
    request,
    schedule,
    scope_for,
    watermark_changed,
)
from annotator.agreement.services.consensus import (  # noqa: F401
    CONSENSUS_SEND_MAX,
    overlap_submitted,
    record_consensus,
    send_overlap_disagreements,
    send_to_consensus,
)
from annotator.agreement.services.ratings import (  # noqa: F401
    RATINGS_MAX,
    TEXT_MAX,
    check_ratings,
    import_ratings,
    too_many,
)
