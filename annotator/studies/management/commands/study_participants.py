"""python manage.py study_participants NAME [--project SLUG] [--csv] [--out FILE]"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from annotator.cli import write_lines_atomically
from annotator.studies import dashboard, selectors
from annotator.studies.commands import study_named


class Command(BaseCommand):
    help = (
        "The study's participants for approving panel payments, one per line (JSON, or CSV with --csv): "
        + ", ".join(selectors.PARTICIPANT_COLUMNS)
        + ". Raw panel ids: for researchers."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--project", help="Project slug, if the name is used in several projects.")
        parser.add_argument("--csv", action="store_true", help="CSV (cells guarded against formulas) instead of JSONL.")
        parser.add_argument("--out", default="-", help="Output file; '-' (default) for standard output.")

    def handle(self, *args, **opts):
        study = study_named(opts["name"], opts["project"])
        rows = selectors.participants_export(study)
        lines = (
            dashboard.csv_lines(rows, selectors.PARTICIPANT_COLUMNS)
            if opts["csv"]
            else (json.dumps(r) + "\n" for r in rows)
        )
        if opts["out"] == "-":
            for line in lines:
                self.stdout.write(line, ending="")
            return
        out = Path(opts["out"])
        n = write_lines_atomically(out, lines)
        self.stderr.write(f"wrote {n} lines to {out}")
