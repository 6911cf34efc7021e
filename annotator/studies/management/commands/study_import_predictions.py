"""python manage.py study_import_predictions NAME FILE.jsonl [--project SLUG] [--no-wait]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import wait_with_progress
from annotator.studies.commands import study_named
from annotator.studies.selectors import unscored
from annotator.studies.services import import_predictions


class Command(BaseCommand):
    help = (
        "Import model predictions (JSONL lines of model, item_id, predicted: an option index, an order of element "
        "ids, a score or a text) for a study's scored items; bad lines are reported with their number and "
        "skipped (exit status 1). A Celery worker then scores them like people's answers."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("file")
        parser.add_argument("--project")
        parser.add_argument("--no-wait", action="store_true", help="Queue the scoring and return.")
        parser.add_argument("--timeout", type=float, default=600)

    def handle(self, *args, **opts):
        study = study_named(opts["name"], opts["project"])
        path = Path(opts["file"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        with path.open(encoding="utf-8", errors="replace") as fh:
            report = import_predictions(study, fh)
        for number, message in report.errors:
            self.stderr.write(f"line {number}: {message}")
        self.stdout.write(f"imported {report.imported} predictions, skipped {len(report.errors)} lines")
        if report.imported and not opts["no_wait"]:
            wait_with_progress(
                lambda: (not unscored(study), f"{unscored(study)} waiting to be scored"),
                write=self.stdout.write,
                timeout_s=opts["timeout"],
                interval_s=0.3,
                on_timeout="timed out waiting for scores: is a Celery worker running?",
            )
            self.stdout.write("scored")
        if report.errors:
            raise SystemExit(1)
