"""python manage.py review_round --project SLUG (--sample N | --all | --show [ROUND] | --close ROUND)
[--tag T ...] [--seed S] [--json]"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotator.errors import DomainError
from annotator.projects.models import Project
from annotator.review import services
from annotator.review.models import ReviewRound, RoundUnit


class Command(BaseCommand):
    help = (
        "Open a quality round (EgoNight seed 000 App. A.2.1, the second round): a seeded sample of the "
        "project's units awaiting review (--sample N), or all of them (--all), reviewed with the issue tags "
        "given by --tag. Its units come first on the reviewer page; when the last is reviewed, the round "
        "closes and each annotator gets a summary of its issue tags, and the rejected units are back with "
        "their annotators as rework. --show prints a round (default: the latest), --close closes one early."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--sample", type=int, metavar="N", help="Review a sample of N units awaiting review.")
        what.add_argument("--all", action="store_true", help="Review every unit awaiting review.")
        what.add_argument(
            "--show",
            nargs="?",
            const=0,
            type=int,
            metavar="ROUND",
            help="Print a round's progress or summary (default: the latest).",
        )
        what.add_argument(
            "--close", type=int, metavar="ROUND", help="Close an open round now, with the reviews so far."
        )
        parser.add_argument(
            "--tag",
            action="append",
            default=[],
            metavar="T",
            help="An issue tag of the round's vocabulary (repeat for more; none: any tag).",
        )
        parser.add_argument("--seed", type=int, default=0, help="Seed of the sample (default 0).")
        parser.add_argument("--json", action="store_true", help="Print the round as JSON.")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        try:
            if opts["show"] is not None:
                round_ = (
                    ReviewRound.objects.filter(project=project, pk=opts["show"]).first()
                    if opts["show"]
                    else ReviewRound.objects.filter(project=project).order_by("-id").first()
                )
                if round_ is None:
                    raise CommandError(
                        "no such round of this project" if opts["show"] else "this project has no round yet"
                    )
            elif opts["close"] is not None:
                if not ReviewRound.objects.filter(project=project, pk=opts["close"]).exists():
                    raise CommandError(f"round {opts['close']} is not a round of {project.slug}")
                round_ = services.close_round_now(opts["close"])
            else:
                if opts["sample"] is not None and opts["sample"] < 1:
                    raise CommandError("--sample must be 1 or more")
                round_ = services.open_round(
                    project, sample=opts["sample"], all_units=opts["all"], tags=opts["tag"], seed=opts["seed"]
                )
        except DomainError as exc:
            detail = "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
            raise CommandError(f"{exc}" + (f" ({detail})" if detail else "")) from None
        self.report(round_, as_json=opts["json"])

    def report(self, round_: ReviewRound, *, as_json: bool) -> None:
        units = list(RoundUnit.objects.filter(round=round_).order_by("unit_id").values_list("unit_id", "review_id"))
        reviewed = sum(1 for _, r in units if r is not None)
        if as_json:
            self.stdout.write(
                json.dumps(
                    {
                        "round": round_.pk,
                        "project": round_.project.slug,
                        "sample_size": round_.sample_size,
                        "seed": round_.seed,
                        "tags": round_.tags,
                        "units": [u for u, _ in units],
                        "reviewed": reviewed,
                        "closed_at": round_.closed_at.isoformat() if round_.closed_at else None,
                        "summary": round_.summary,
                    },
                    indent=2,
                )
            )
            return
        state = "closed" if round_.closed_at else "open"
        self.stdout.write(
            f"round {round_.pk} of {round_.project.slug} ({state}): {len(units)} units, {reviewed} reviewed"
            + (
                f", sample of {round_.sample_size} drawn with seed {round_.seed}"
                if round_.sample_size
                else ", all units awaiting review"
            )
        )
        self.stdout.write("tags: " + (", ".join(round_.tags) if round_.tags else "any"))
        self.stdout.write("units: " + ", ".join(str(u) for u, _ in units))
        s = round_.summary
        if s:
            self.stdout.write(
                f"summary: {s['reviewed']} reviewed, {s['accepted']} accepted, {s['rejected']} rejected "
                "(rejected units are back with their annotators as rework)"
            )
            for t in s["tags"]:
                self.stdout.write(f"  {t['tag']}: {t['count']} comments on {t['units']} units")
                for e in t["examples"]:
                    self.stdout.write(f"    unit {e['unit_id']}, QA {e['qa_id']}: {e['text']}")
            people = round_.summaries.count()
            self.stdout.write(f"summaries sent to {people} annotators")
        elif round_.closed_at is None:
            self.stdout.write(
                f"open: {len(units) - reviewed} units still to review at /projects/{round_.project.slug}/review/"
            )
