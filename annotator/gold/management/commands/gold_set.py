"""python manage.py gold_set --project SLUG --from-verified N [--rate 0.05] [--window 10] [--threshold 0.8]"""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotator.errors import DomainError
from annotator.gold import services
from annotator.gold.management.commands.qualification import _explain
from annotator.gold.models import GOLD_RATE_MAX, WINDOW_MAX, Source
from annotator.projects.models import Project


class Command(BaseCommand):
    help = (
        "Add N verified units to the project's gold set (mixed into the queue at --rate: a copy made when "
        "served, indistinguishable from a real first pass), and set the pause rule: an annotator whose "
        "agreement with the known decisions over the last --window gold units falls below --threshold is "
        "paused until an admin lifts it. Nothing is made when fewer than N verified units are left."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument("--from-verified", required=True, type=int, metavar="N", dest="n")
        parser.add_argument(
            "--rate", type=float, default=None, help=f"Share of claims served gold, 0 to {GOLD_RATE_MAX}."
        )
        parser.add_argument(
            "--window", type=int, default=None, help=f"K gold units judged together, 1 to {WINDOW_MAX}."
        )
        parser.add_argument("--threshold", type=float, default=None, help="Share of decisions that must agree, 0 to 1.")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        n = opts["n"]
        if not 1 <= n <= services.SOURCES_MAX:
            raise CommandError(f"--from-verified must be from 1 to {services.SOURCES_MAX}, not {n}")
        try:
            with transaction.atomic():
                policy = services.set_policy(
                    project, gold_rate=opts["rate"], window=opts["window"], threshold=opts["threshold"]
                )
                made = services.make_sources(project, Source.Role.GOLD, n)
                if len(made) < n:
                    raise CommandError(
                        f"{project.slug} has {len(made)} verified units left to make gold units from, "
                        f"fewer than the {n} asked; nothing was made."
                    )
        except DomainError as exc:
            raise CommandError(_explain(exc)) from None
        total = Source.objects.filter(project=project, role=Source.Role.GOLD, active=True).count()
        self.stdout.write(
            f"gold set of {project.slug}: {total} units ({len(made)} new: units "
            f"{', '.join(str(s.unit_id) for s in made)}); served at {policy.gold_rate:.0%} of claims; "
            f"pause below {policy.threshold:.0%} over the last {policy.window} gold units"
        )
