"""python manage.py group_videos KIND --project SLUG ...

* ``ego_exo --ego VIDEO --exo VIDEO[:OFFSET] [--exo ...] [--name NAME]``: an EgoExoBench multi-view
  set (seed 001 Sec. 3.2); exo time = ego time + OFFSET seconds (default 0), exos shown in the
  order given.
* ``day_night --day VIDEO --night VIDEO [--offset SECONDS] [--name NAME]``: an EgoNight day-night
  pair (seed 000 Sec. 3.1); night time = day time + offset.

VIDEO is a video's id or its file name in the project.
"""

import math

from django.core.management.base import BaseCommand, CommandError

from annotator.errors import DomainError
from annotator.media.selectors import find_video, ordered_members
from annotator.media.services import make_day_night_group, make_ego_exo_set
from annotator.projects.models import Project


def parse_exo(value: str) -> tuple[str, float]:
    """``VIDEO[:OFFSET]`` as (video ref, offset seconds); a suffix that is not a number is part of
    the name. Raises CommandError for a non-finite offset."""
    ref, sep, tail = value.rpartition(":")
    if sep:
        try:
            offset = float(tail)
        except ValueError:
            return value, 0.0
        if not math.isfinite(offset):
            raise CommandError(f"--exo {value}: the offset must be a finite number of seconds")
        return ref, offset
    return value, 0.0


def group_videos(project_slug: str, kind: str, *, ego=None, exos=(), day=None, night=None, offset=0.0, name=""):
    """Make a group of ``kind`` from video refs (see the module docstring); returns it. Raises
    CommandError in plain words (unknown project or video, a rule of the group broken)."""
    project = Project.objects.filter(slug=project_slug).first()
    if project is None:
        raise CommandError(f"no project {project_slug!r}")
    try:
        if kind == "ego_exo":
            if not ego or not exos:
                raise CommandError("ego_exo needs --ego and at least one --exo")
            parsed = [parse_exo(e) for e in exos]
            return make_ego_exo_set(
                find_video(project, ego), [(find_video(project, r), o) for r, o in parsed], name=name
            )
        if not day or not night:
            raise CommandError("day_night needs --day and --night")
        return make_day_night_group(find_video(project, day), find_video(project, night), offset_s=offset, name=name)
    except DomainError as exc:
        raise CommandError(str(exc)) from None


def describe(group) -> str:
    """One line per group: id, kind, name and each member as role[position] file (+offset s)."""
    members = ", ".join(
        f"{m.role}{m.position if m.role == 'exo' else ''} {m.video.filename} ({m.offset_s:+g} s)"
        for m in ordered_members(group.members.all())
    )
    return f"{group.get_kind_display()} {group.pk}: {group.name}: {members}"


class Command(BaseCommand):
    help = "Group ingested videos: an ego-exo set (ego_exo) or a day-night pair (day_night)."

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=["ego_exo", "day_night"])
        parser.add_argument("--project", required=True)
        parser.add_argument("--name", default="", help="The group's name (unique in the project; a default is made).")
        parser.add_argument("--ego", help="ego_exo: the egocentric video (id or file name).")
        parser.add_argument(
            "--exo",
            action="append",
            default=[],
            metavar="VIDEO[:OFFSET]",
            help="ego_exo: an exocentric view and its offset in seconds (exo time = ego time + offset); repeat.",
        )
        parser.add_argument("--day", help="day_night: the day video.")
        parser.add_argument("--night", help="day_night: the night video.")
        parser.add_argument(
            "--offset", type=float, default=0.0, help="day_night: seconds the night video starts later."
        )

    def handle(self, *args, **opts):
        group = group_videos(
            opts["project"],
            opts["kind"],
            ego=opts["ego"],
            exos=opts["exo"],
            day=opts["day"],
            night=opts["night"],
            offset=opts["offset"],
            name=opts["name"],
        )
        self.stdout.write(describe(group))
