"""Celery tasks of qa, run through job rows (``annotator.jobs``)."""

from django.conf import settings

from annotator.jobs import job_task
from annotator.qa import export_jobs


# Clips are cut by ffmpeg (each within FFMPEG_TIMEOUT_MAX_S, one per CPU): a large export with media
# may take a while; a killed worker's export fails after 2 deliveries rather than cutting again and again.
@job_task(export_jobs.TASK, time_limit_s=4 * settings.FFMPEG_TIMEOUT_MAX_S + 600, max_deliveries=2)
def export_qa(token: str, project_id: int, user_id: int, fmt: str, with_media: int, *filters: str) -> str:
    """Write, zip and store one export asked for on the export page (``qa.export_jobs.run``)."""
    return export_jobs.run(token, project_id, user_id, fmt, with_media, *filters)
