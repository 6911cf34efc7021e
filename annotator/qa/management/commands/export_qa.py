"""python manage.py export_qa --project SLUG --out FILE [filters]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import Progress, is_terminal, write_lines_atomically
from annotator.projects.models import Project
from annotator.qa.selectors import export_lines, verified_qa


class Command(BaseCommand):
    help = "Write the project's verified QA pairs as JSONL (one object a line, streamed; schema in the README)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--out", required=True, help="Output file; '-' for standard output.")
        parser.add_argument("--qa-type")
        parser.add_argument("--provenance", choices=["machine_kept", "machine_modified", "human_added"])
        parser.add_argument("--source", choices=["real", "synthetic"])
        parser.add_argument("--illumination", choices=["day", "night", "other"])

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        rows = verified_qa(project, qa_type=opts["qa_type"], provenance=opts["provenance"],
                           source=opts["source"], illumination=opts["illumination"])
        # A bar on stderr (stdout may be the export itself) when it is a terminal; else nothing until
        # the summary, as before. Counting first costs one query, so only for the bar.
        total = rows.count() if is_terminal(self.stderr) else None
        with Progress(self.stderr, desc="export", unit="pair", total=total) as progress:
            lines = progress.iterate(export_lines(rows))
            if opts["out"] == "-":
                n = sum(self.stdout.write(line, ending="") or 1 for line in lines)
            else:
                out = Path(opts["out"])
                n = write_lines_atomically(out, lines)  # a reader never sees a half-written export
        if opts["out"] != "-":
            self.stderr.write(f"wrote {n} verified QA pairs to {out}")
