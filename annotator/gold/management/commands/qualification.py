"""python manage.py qualification --project SLUG --from-verified N [--threshold 0.8] [--tries 3]
[--not-required] [--exempt-current]"""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotator.errors import DomainError
from annotator.gold import services
from annotator.gold.models import TRIES_MAX, Source
from annotator.projects.models import Project


def _explain(exc: DomainError) -> str:
    detail = "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
    return f"{exc}" + (f" ({detail})" if detail else "")


class Command(BaseCommand):
    help = (
        "Make the project's qualification set from N verified units (chosen at random with the policy's seed, "
        "footage no other gold, qualification or tutorial unit shows first), each with its known decisions "
        "(kept -> keep, modified -> modify, deleted -> delete with its reason), set the share of decisions that "
        "must agree to pass (--threshold) and the tries allowed, and gate the real queue on it (annotators get "
        "real units once they pass) unless --not-required. Units already in the set stay; nothing is made when "
        "fewer than N verified units are left."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument(
            "--from-verified",
            required=True,
            type=int,
            metavar="N",
            dest="n",
            help=f"Verified units to add to the set (1 to {services.SOURCES_MAX}).",
        )
        parser.add_argument(
            "--threshold",
            type=float,
            default=None,
            help="Share of decisions that must agree, 0 to 1 (default: the policy's, 0.8 at first).",
        )
        parser.add_argument("--tries", type=int, default=None, help=f"Tries each person has (1 to {TRIES_MAX}).")
        parser.add_argument(
            "--not-required", action="store_true", help="Make the set but do not gate the real queue on it."
        )
        parser.add_argument(
            "--exempt-current",
            action="store_true",
            help="Count annotators who already completed a real pass as qualified.",
        )

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        n = opts["n"]
        if not 1 <= n <= services.SOURCES_MAX:
            raise CommandError(f"--from-verified must be from 1 to {services.SOURCES_MAX}, not {n}")
        threshold = opts["threshold"]
        if threshold is not None and not 0 <= threshold <= 1:
            raise CommandError(f"--threshold must be a share from 0 to 1 (0.8 is 80%), not {threshold:g}")
        try:
            with transaction.atomic():
                policy = services.set_policy(
                    project, threshold=threshold, tries=opts["tries"], qualification_required=not opts["not_required"]
                )
                exempted = services.exempt(project, services.worked_before(project)) if opts["exempt_current"] else 0
                made = services.make_sources(project, Source.Role.QUALIFICATION, n)
                if len(made) < n:
                    left = len(made)
                    raise CommandError(
                        f"{project.slug} has {left} verified unit{'s' if left != 1 else ''} left to make qualification "
                        f"units from, fewer than the {n} asked; nothing was made. (A verified unit is a real unit whose "
                        "passes are all done, none of its QA pairs a draft, not already a gold, qualification or "
                        "tutorial unit.)"
                    )
        except DomainError as exc:
            raise CommandError(_explain(exc)) from None
        total = Source.objects.filter(project=project, role=Source.Role.QUALIFICATION, active=True)
        pairs = sum(s.known.count() for s in total)
        self.stdout.write(
            f"qualification set of {project.slug}: {total.count()} units ({len(made)} new: units "
            f"{', '.join(str(s.unit_id) for s in made)}), {pairs} known decisions"
        )
        self.stdout.write(
            f"pass at {policy.threshold:.0%} of decisions agreeing, {policy.tries} tries; "
            + (
                "annotators get real units once they pass"
                if policy.qualification_required
                else "not required for the real queue"
            )
        )
        if opts["exempt_current"]:
            self.stdout.write(f"{exempted} annotators who had already worked count as qualified")
