"""Celery tasks of media, run through job rows (``annotator.jobs``): each takes ids, loads, calls one
service, and is idempotent (the service returns early when the row is gone or already done)."""

from django.conf import settings

from annotator.jobs import RetryLater, job_task
from annotator.media import services


def _storage_retry(exc: OSError) -> RetryLater:
    return RetryLater(f"storage error: {exc}", countdown_s=30)


# ffmpeg runs, each within FFMPEG_TIMEOUT_MAX_S: the rendition, a poster (at most 120 s), the timeline
# thumbnails (key frames only on long videos) and, for a long video, its lower HLS level (encoded from
# the rendition, a few times cheaper than the rendition) and two -c copy cuts into segments.
@job_task(
    "media.transcode",
    time_limit_s=2 * settings.FFMPEG_TIMEOUT_MAX_S + 300,
    max_deliveries=3,
    on_give_up=services.mark_transcode_failed,
)
def transcode_video(video_id: int) -> str:
    """Transcode one video (``media.services.transcode``). A file ffmpeg cannot read fails the video
    at once; storage errors retry; a file that kills or outlasts the worker fails it after 3 deliveries."""
    try:
        video = services.transcode(video_id)
    except OSError as exc:
        raise _storage_retry(exc) from None
    return video.status if video else "gone"


@job_task("media.derive_night", time_limit_s=settings.FFMPEG_TIMEOUT_MAX_S + 300, max_deliveries=3)
def derive_night(video_id: int, level: str) -> str:
    """Render and ingest the synthetic night version of a day video (``media.services.derive_night``).
    A render failure fails the job with ffmpeg's reason."""
    try:
        video = services.derive_night(video_id, level)
    except OSError as exc:
        raise _storage_retry(exc) from None
    return "gone" if video is None else f"video {video.pk}"
