"""python manage.py pair_videos --project SLUG DAY NIGHT [--offset SECONDS]

Kept for scripts written before ``group_videos``; the same as ``group_videos day_night``."""

from django.core.management.base import BaseCommand

from annotator.media.management.commands.group_videos import group_videos


class Command(BaseCommand):
    help = "Group two ingested videos as a day-night pair (night time = day time + offset, in seconds)."

    def add_arguments(self, parser):
        parser.add_argument("day", help="The day video (id or file name).")
        parser.add_argument("night", help="The night video (id or file name).")
        parser.add_argument("--project", required=True)
        parser.add_argument("--offset", type=float, default=0.0, help="Seconds the night video starts later.")

    def handle(self, *args, **opts):
        group = group_videos(opts["project"], "day_night", day=opts["day"], night=opts["night"], offset=opts["offset"])
        self.stdout.write(f"day-night pair {group.pk}: {group.name} (offset {opts['offset']:g} s)")
