"""python manage.py ordering_items NAME --out FILE.jsonl [--project SLUG]"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from annotator.cli import write_lines_atomically
from annotator.experiments.commands import experiment_named
from annotator.experiments.services import export_items


class Command(BaseCommand):
    help = "Write one JSON line per scored item: item_id, condition, shown, truth, hints."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--out", required=True, help="Output file; '-' for standard output.")
        parser.add_argument("--project", help="Project slug, if the name is used in several projects.")

    def handle(self, *args, **opts):
        experiment = experiment_named(opts["name"], opts["project"])
        lines = (json.dumps(row) + "\n" for row in export_items(experiment))
        if opts["out"] == "-":
            for line in lines:
                self.stdout.write(line, ending="")
            return
        out = Path(opts["out"])
        n = write_lines_atomically(out, lines)
        self.stderr.write(f"wrote {n} items to {out}")
