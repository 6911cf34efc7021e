"""python manage.py pair_videos --project SLUG DAY_FILENAME NIGHT_FILENAME [--offset SECONDS]"""

from django.core.management.base import BaseCommand, CommandError

from annotator.media.models import Video
from annotator.media.services import make_day_night_group
from annotator.projects.models import Project


class Command(BaseCommand):
    help = "Group two ingested videos as a day-night pair (night time = day time + offset, in seconds)."

    def add_arguments(self, parser):
        parser.add_argument("day")
        parser.add_argument("night")
        parser.add_argument("--project", required=True)
        parser.add_argument("--offset", type=float, default=0.0, help="Seconds the night video starts later.")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        videos = {}
        for role in ("day", "night"):
            videos[role] = Video.objects.filter(project=project, filename=opts[role], status="ready").first()
            if videos[role] is None:
                raise CommandError(f"no ready video named {opts[role]!r} in {project.slug}")
        try:
            group = make_day_night_group(videos["day"], videos["night"], offset_s=opts["offset"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"day-night pair {group.pk}: {group.name} (offset {opts['offset']:g} s)")
