"""python manage.py report --project SLUG [--study NAME ...] [--evaluation ID ...] [--by FIELD[,FIELD]]
    [--preset P] [--metric M] [--seed N] [--resamples N] [--format json|csv|latex|md] [--output FILE]

The benchmark report (issue 18, part 5): per split cell, the people's and each model's metric with a
95% interval and n, and the paired human-minus-model difference with its bootstrap interval and
permutation p-value (``annotator.reports.selectors.build``). Without --study and --evaluation: every
ready study and finished evaluation of the project. Writes to stdout (or --output). Exit status 2
for bad arguments (an unknown field, preset, metric, study or evaluation), with the reason.
"""

from django.core.management.base import BaseCommand, CommandError

from annotator.errors import DomainError
from annotator.projects.models import Project
from annotator.reports import presets, selectors, writers
from annotator.reports.records import FIELDS


class Command(BaseCommand):
    help = "Humans beside models per split, with 95% intervals and paired comparisons (JSON, CSV, LaTeX, Markdown)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--study", action="append", default=[], metavar="NAME", help="A study (repeatable).")
        parser.add_argument(
            "--evaluation", action="append", default=[], metavar="ID", help="An evaluation (repeatable)."
        )
        parser.add_argument(
            "--by", default="", help=f"Split fields, comma-separated: {', '.join(FIELDS)} (subtask = qa_type)."
        )
        parser.add_argument("--preset", default="", choices=["", *presets.choices()], help="A paper's table layout.")
        parser.add_argument("--metric", default=None, help="The metric (default: the first study kind's primary one).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the bootstrap and the permutation test.")
        parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples and random sign flips.")
        parser.add_argument("--format", default="md", choices=list(writers.FORMATS))
        parser.add_argument("--output", default="", help="Write here instead of stdout.")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}", returncode=2)
        try:
            report = selectors.build(
                project,
                studies=opts["study"],
                evaluations=opts["evaluation"],
                by=opts["by"] or None,
                preset=opts["preset"] or None,
                metric=opts["metric"],
                seed=opts["seed"],
                n_resamples=opts["resamples"],
            )
        except DomainError as e:
            raise CommandError(str(e), returncode=2) from e
        text = writers.FORMATS[opts["format"]](report)
        if opts["output"]:
            with open(opts["output"], "w", encoding="utf-8") as f:
                f.write(text)
            self.stderr.write(f"wrote {opts['output']}")
        else:
            self.stdout.write(text, ending="")
