"""python manage.py media_backfill [--project SLUG]"""

from django.core.management.base import BaseCommand, CommandError

from annotator.adapters.ffmpeg import MediaError
from annotator.media import streaming
from annotator.media.models import Video
from annotator.projects.models import Project


class Command(BaseCommand):
    help = (
        "Give ready videos what a transcode makes today and they lack: timeline thumbnails (sprite sheets + "
        "WebVTT) and, for videos longer than MEDIA_HLS_MIN_DURATION_S, the HLS rendition. Runs here, one video "
        "at a time; a rerun skips what is done. A video whose backfill fails stays ready with what it had."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", help="Only this project's videos (slug); default: every project.")

    def handle(self, *args, **opts):
        videos = Video.objects.filter(status=Video.Status.READY).exclude(rendition="").order_by("id")
        if opts["project"]:
            project = Project.objects.filter(slug=opts["project"]).first()
            if project is None:
                raise CommandError(f"no project {opts['project']!r}")
            videos = videos.filter(project=project)
        todo = [v for v in videos if streaming.missing(v)]
        self.stdout.write(f"{len(todo)} videos to backfill")
        failed = 0
        for video in todo:
            try:
                made = streaming.backfill(video)
            except MediaError as exc:
                failed += 1
                self.stderr.write(f"video {video.pk} ({video.filename}): failed, left as it was: {exc}")
                continue
            self.stdout.write(f"video {video.pk}: {', '.join(made) or 'nothing to do'}")
        if failed:
            raise CommandError(f"{failed} of {len(todo)} videos failed")
