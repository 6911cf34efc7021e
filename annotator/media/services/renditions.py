"""Browser renditions of a video (transcode, HLS, poster, thumbnails) and derived night versions,
run in Celery and queued on commit."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage

from annotator.adapters import ffmpeg
from annotator.media.manifest import ManifestEntry
from annotator.media.models import Video
from annotator.media.services.groups import make_day_night_group
from annotator.media.services.ingest import ingest_file, limit_refusal
from annotator.media.workfiles import local_copy, work_dir
from annotator.projects.models import Project

log = logging.getLogger(__package__)  # the package's name, as before the split


def transcode(video_id: int) -> Video | None:
    """Write the browser rendition (H.264/AAC MP4, ``+faststart``, height <= MEDIA_RENDITION_MAX_HEIGHT),
    a poster JPEG and timeline thumbnails (sprite sheets + WebVTT, ``media.streaming``) for a
    ``processing`` video and, when it is longer than MEDIA_HLS_MIN_DURATION_S, an HLS rendition (two
    levels; the rendition's key frames are then forced every MEDIA_HLS_SEGMENT_S seconds so its
    segments are cut from it without a second encode); then mark it ``ready``.

    Idempotent: returns at once if the video is gone or not processing. Outputs are written to
    temporary files and saved to storage only when all are complete. A file ffmpeg cannot transcode,
    or whose thumbnails or HLS rendition ffmpeg cannot make, marks the video ``failed`` with ffmpeg's
    reason (retrying would not help; nothing is saved), and so does a video beyond the limits
    (``limit_refusal``), before ffmpeg runs. Storage errors (OSError) propagate so the
    Celery task retries them.
    """
    from annotator.media import streaming

    video = Video.objects.filter(pk=video_id).first()
    if video is None or video.status != Video.Status.PROCESSING:
        return video
    # Ingest checked the limits; a video queued before they were lowered is refused here, unread.
    if refusal := limit_refusal(video.duration_s, video.width, video.height):
        Video.objects.filter(pk=video.pk, status=Video.Status.PROCESSING).update(
            status=Video.Status.FAILED, error=refusal
        )
        return Video.objects.filter(pk=video.pk).first()
    max_height = settings.MEDIA_RENDITION_MAX_HEIGHT
    long = streaming.needs_hls(video.duration_s)
    keyframes = settings.MEDIA_HLS_SEGMENT_S if long else None
    with local_copy(video.original.name) as src, work_dir(f"transcode-{video.pk}-") as work:
        out = work / "rendition.mp4"
        poster = work / "poster.jpg"
        thumbs, hls = work / "thumbs", work / "hls"
        thumbs.mkdir()
        hls.mkdir()
        build = ffmpeg.rendition_args if video.audio_codec else ffmpeg.rendition_args_silent
        timeout = ffmpeg.timeout_for(video.duration_s)
        try:
            ffmpeg.run(
                build(src, out, max_height=max_height, keyframe_every_s=keyframes), timeout_s=timeout, what="transcode"
            )
            at = min(1.0, (video.duration_s or 0) / 2)
            ffmpeg.run(
                ffmpeg.still_args(src, at, max_side=max_height * 16 // 9, dst=str(poster)), timeout_s=120, what="poster"
            )
            streaming.make_thumbnails(out, thumbs, duration_s=video.duration_s or 0, keyframe_every_s=keyframes)
            if long:
                streaming.make_hls(out, hls, work, duration_s=video.duration_s or 0, audio=bool(video.audio_codec))
        except ffmpeg.MediaError as exc:
            Video.objects.filter(pk=video.pk, status=Video.Status.PROCESSING).update(
                status=Video.Status.FAILED, error=str(exc).replace(str(src), video.filename)
            )
            return Video.objects.filter(pk=video.pk).first()
        base = f"renditions/{streaming.media_key(video)}/{video.sha256[:16]}"
        saved: list[str] = []
        try:
            with out.open("rb") as fh:
                rendition_name = default_storage.save(f"{base}.mp4", File(fh))
            saved.append(rendition_name)
            with poster.open("rb") as fh:
                poster_name = default_storage.save(f"{base}-poster.jpg", File(fh))
            saved.append(poster_name)
            saved += streaming.save_folder(thumbs, streaming.thumbs_prefix(video))
            vtt_name = f"{streaming.thumbs_prefix(video)}/{streaming.VTT}"
            hls_name = ""
            if long:
                saved += streaming.save_folder(hls, streaming.hls_prefix(video))
                hls_name = f"{streaming.hls_prefix(video)}/{streaming.MASTER}"
        except BaseException:
            for name in saved:
                default_storage.delete(name)
            raise
    updated = Video.objects.filter(pk=video.pk, status=Video.Status.PROCESSING).update(
        status=Video.Status.READY,
        rendition=rendition_name,
        poster=poster_name,
        thumbnails_vtt=vtt_name,
        hls=hls_name,
        error="",
    )
    if not updated:  # someone else finished first (a redelivered message), or the video was deleted
        # (the thumbnails and HLS files have fixed names, the same the winner's row points at: kept)
        for name in (rendition_name, poster_name):
            default_storage.delete(name)
    video = Video.objects.filter(pk=video.pk).first()
    log.info("video %s %s", video_id, video.status if video else "deleted")
    return video


def mark_transcode_failed(video_id: int, reason: str) -> None:
    """Record a transcode that gave up (out of deliveries or retries; ``reason`` in plain words)."""
    Video.objects.filter(pk=video_id, status=Video.Status.PROCESSING).update(status=Video.Status.FAILED, error=reason)


def night_candidates(project: Project) -> list[Video]:
    """Real, ready videos that are not night videos: the day clips to derive night versions of."""
    return list(
        Video.objects.filter(project=project, source=Video.Source.REAL, status=Video.Status.READY)
        .exclude(illumination=Video.Illumination.NIGHT)
        .order_by("id")
    )


def derive_night(day_id: int, level: str) -> Video | None:
    """Make the synthetic night version of a day video at ``level`` (easy, medium, hard; recipe in
    ``adapters.ffmpeg.NIGHT_LEVELS``, EgoNight App. A.1) and pair it with the day video.

    Steps: return the existing derivative if there is one (idempotent); render it with ffmpeg into
    a temporary file; ingest that file as a new video (``source=synthetic``, ``illumination=night``,
    ``difficulty=level``, ``derived_from`` the day video, the recipe in ``extra``), which queues its
    transcode; group the two as a day-night pair with offset 0. A render failure raises MediaError.
    """
    day = Video.objects.select_related("project").filter(pk=day_id).first()
    if day is None:
        return None
    existing = Video.objects.filter(derived_from=day, difficulty=level, source=Video.Source.SYNTHETIC).first()
    if existing is None:
        recipe = [[name, kwargs] for name, kwargs in ffmpeg.NIGHT_LEVELS[level]]
        with local_copy(day.original.name) as src, work_dir(f"night-{day.pk}-{level}-") as work:
            out = work / f"{Path(day.filename).stem}-night-{level}.mp4"
            ffmpeg.run(
                ffmpeg.night_args(src, out, level=level, max_height=settings.MEDIA_RENDITION_MAX_HEIGHT),
                timeout_s=ffmpeg.timeout_for(day.duration_s),
                what="night rendition",
            )
            entry = ManifestEntry(
                file=out.name,
                fields={
                    "source": Video.Source.SYNTHETIC,
                    "illumination": Video.Illumination.NIGHT,
                    "difficulty": level,
                    "domain": day.domain,
                    "scenario": day.scenario,
                    "view": day.view,
                },
                extra={"derived_from": day.filename, "night_recipe": recipe},
            )
            result = ingest_file(day.project, out, entry)
        if result.outcome == "failed" or result.video_id is None:
            raise ffmpeg.MediaError(f"night rendition of {day.filename} could not be ingested: {result.reason}")
        Video.objects.filter(pk=result.video_id).update(derived_from=day)
        existing = Video.objects.get(pk=result.video_id)
    make_day_night_group(
        day,
        existing,
        offset_s=0.0,
        name=f"{day.filename} / night {level}",
        params={"synthetic": True, "difficulty": level},
    )
    return existing
