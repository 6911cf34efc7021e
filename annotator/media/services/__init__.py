"""Writes for media: ingest files into a project, transcode them into browser renditions. A package
by subject (issue 23: services over 400 lines): ``ingest``, ``renditions`` (transcode, derived night
versions), ``relocation`` (media-key folders) and ``groups`` (day-night pairs, ego-exo sets). Every
public name is importable from here, as before the split.

Each file is ingested in its own transaction, so one bad file fails alone with its reason and
the rest of the batch goes on (SPEC part 1). Transcoding runs in Celery, queued on commit.
"""

from annotator.media.services.groups import (  # noqa: F401
    EGO_EXO_MAX_EXOS,
    GROUP_MAKERS,
    GROUP_MIN_OVERLAP_S,
    GROUP_OFFSET_MAX_S,
    ego_exo_window,
    make_day_night_group,
    make_ego_exo_set,
    make_group,
)
from annotator.media.services.ingest import (  # noqa: F401
    KEY_MAX,
    MANAGED_PREFIXES,
    VIDEO_SUFFIXES,
    IngestResult,
    check_storage_key,
    expand_paths,
    ingest_file,
    limit_refusal,
    register_stored,
    sha256_of,
)
from annotator.media.services.relocation import (  # noqa: F401
    misplaced,
    relocate,
)
from annotator.media.services.renditions import (  # noqa: F401
    derive_night,
    mark_transcode_failed,
    night_candidates,
    transcode,
)
from annotator.media.workfiles import local_copy, on_local_disk, work_dir  # noqa: F401 (importable from here before)
