"""python manage.py study_items NAME --out FILE.jsonl [--project SLUG]"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from annotator.cli import write_lines_atomically
from annotator.studies.commands import study_named
from annotator.studies.selectors import items_export


class Command(BaseCommand):
    help = (
        "Write one JSON line per item (scored, practice and attention): item_id, condition, role, subtask, "
        "group and the kind's fields, truth included. The file is for researchers."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--out", required=True, help="Output file; '-' for standard output.")
        parser.add_argument("--project", help="Project slug, if the name is used in several projects.")

    def handle(self, *args, **opts):
        study = study_named(opts["name"], opts["project"])
        lines = (json.dumps(row) + "\n" for row in items_export(study))
        if opts["out"] == "-":
            for line in lines:
                self.stdout.write(line, ending="")
            return
        out = Path(opts["out"])
        n = write_lines_atomically(out, lines)
        self.stderr.write(f"wrote {n} items to {out}")
