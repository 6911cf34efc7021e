"""qa's grant to play a video (``access.files.grant_video``): the videos of the work units a person
holds or held in a queue, which the verify page plays. Registered by ``QAConfig.ready``."""

from __future__ import annotations

from django.db.models import Q

from annotator.access import files
from annotator.qa.models import QueueItem


@files.grant_video
def plays_in_held_unit(user, video) -> bool:
    """Whether ``video`` belongs to a work unit ``user`` holds or held (a ``QueueItem`` of the unit,
    or of its group: any member of its day-night pair or ego-exo set, or a labelled video of one of
    its QA pairs, ``QAPair.videos``; whose ``leased_by`` or ``completed_by`` is them). One query."""
    mine = Q(leased_by=user) | Q(completed_by=user)
    shown = (
        Q(unit__video=video)
        | Q(unit__group__members__video=video)
        | Q(unit__qa_pairs__videos__contains=[{"video_id": video.pk}])
    )
    return QueueItem.objects.filter(mine).filter(shown).exists()
