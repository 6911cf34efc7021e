"""python manage.py relocate_media [--project SLUG]"""

from django.core.management.base import BaseCommand, CommandError

from annotator.media import services
from annotator.media.models import Video
from annotator.projects.models import Project


class Command(BaseCommand):
    help = (
        "Move the files of videos stored before handles (rendition, poster, HLS and thumbnails, in folders named by "
        "the video's row id) into the folders named by their media key. Until then those files are not served: "
        "a row id in a media URL would tell old footage from new (issue 20). Safe to stop and rerun: a video's row "
        "points at its new files only once they are all copied. `make demo` and the compose `migrate` service "
        "run it after the migrations; a failure there is reported and does not keep the platform from starting."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", help="Only this project's videos (slug); default: every project.")

    def handle(self, *args, **opts):
        videos = Video.objects.exclude(rendition="", poster="", hls="", thumbnails_vtt="").order_by("id")
        if opts["project"]:
            project = Project.objects.filter(slug=opts["project"]).first()
            if project is None:
                raise CommandError(f"no project {opts['project']!r}")
            videos = videos.filter(project=project)
        todo = [v for v in videos.iterator(500) if services.misplaced(v)]
        if not todo:
            self.stdout.write("relocate_media: every video's files are in its media-key folders")
            return
        self.stdout.write(f"relocate_media: {len(todo)} videos to move")
        failed = 0
        for n, video in enumerate(todo, start=1):
            try:
                copied = services.relocate(video)
            except Exception as exc:  # OSError, or a storage client's own error (an S3 ClientError): this video only
                failed += 1
                self.stderr.write(f"video {video.pk} ({video.filename}): not moved, its old files are kept: {exc}")
                continue
            self.stdout.write(f"video {n} of {len(todo)} (id {video.pk}): {copied} files moved")
        if failed:
            raise CommandError(f"{failed} of {len(todo)} videos could not be moved; run the command again")
