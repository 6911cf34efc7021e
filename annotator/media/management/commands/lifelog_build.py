"""python manage.py lifelog_build --project SLUG --name NAME --manifest FILE [--start ISO_DATETIME]"""

from datetime import datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.media.lifelogs import LifeLogError, build_life_log, clock, gaps, log_start, parts_of, read_manifest
from annotator.projects.models import Project


class Command(BaseCommand):
    help = (
        "Build a life log (X-LeBench, seed 002 Sec. 3): videos placed at virtual wall-clock times from a "
        "JSONL or CSV manifest (file | sha256 | path, and start | offset_s, optional summary). Re-running "
        "with the same manifest changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--name", required=True, help="The life log's name (unique in the project).")
        parser.add_argument("--manifest", required=True, help="JSONL or CSV, one row a part, in time order.")
        parser.add_argument("--start", help="The log's start (ISO 8601 datetime); default: the first row's start.")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        start = None
        if opts["start"]:
            try:
                start = datetime.fromisoformat(opts["start"])
            except ValueError:
                raise CommandError(
                    f"--start {opts['start']!r} is not an ISO 8601 datetime (e.g. 2024-05-01T08:00:00)"
                ) from None
        manifest = Path(opts["manifest"])
        try:
            rows = read_manifest(manifest)
            result = build_life_log(project, opts["name"], rows, start=start, base_dir=manifest.resolve().parent)
        except OSError as exc:
            raise CommandError(f"manifest: {exc.strerror or exc}: {manifest}") from None
        except LifeLogError as exc:
            raise CommandError("life log not built:\n  " + "\n  ".join(exc.problems)) from None
        for note in result.ingested:
            self.stdout.write(f"ingest: {note}")
        parts = parts_of(result.group)
        holes = gaps(parts)
        span = parts[-1].end_s if parts else 0.0
        recorded = sum(p.duration_s for p in parts)
        self.stdout.write(
            f"life log {result.group.pk} {result.group.name!r} {result.outcome}: {len(parts)} parts from "
            f"{result.group.params['start']} to {clock(log_start(result.group), span)}, "
            f"{span / 3600:.2f} h span, {recorded / 3600:.2f} h recorded, {len(holes)} gaps"
        )
