"""Running a failed video's transcode again (the videos page's Retry, issue 21)."""

from __future__ import annotations

from django.db import transaction

from annotator import jobs
from annotator.errors import Conflict, Invalid
from annotator.media.models import Video


def retry_transcode(video: Video) -> Video:
    """Queue a ``failed`` video's transcode again (the videos page's Retry, issue 21): its original is
    stored, so it goes back to ``processing`` with its error cleared and ``media.transcode`` queued on
    commit. Raises Conflict when it is not failed (any more), Invalid when it failed before its
    original was stored (unreadable, empty or beyond the limits at ingest: only a new upload helps)."""
    if not video.original.name:
        raise Invalid(
            "this file was refused before it was stored, so there is nothing to retry: upload it again once it is fixed"
        )
    with transaction.atomic():
        changed = Video.objects.filter(pk=video.pk, status=Video.Status.FAILED).update(
            status=Video.Status.PROCESSING, error=""
        )
        if not changed:
            raise Conflict("this video has not failed (any more): nothing to retry")
        jobs.enqueue("media.transcode", video.pk)
    video.refresh_from_db()
    return video
