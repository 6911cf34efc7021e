"""python manage.py export_qa --project SLUG [--format jsonl|parquet|vlmevalkit|lmms-eval] --out PATH
[--with-media DIR] [filters]"""

import re
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import Progress, is_terminal
from annotator.projects.models import Project
from annotator.qa import exports


class Command(BaseCommand):
    help = (
        "Write the project's verified QA pairs (streamed; docs/exports.md: Export schema and Export formats): "
        "JSONL (default) or Parquet with a dataset card beside it, VLMEvalKit's Video-MCQ TSV, or an "
        "lmms-eval task folder; --with-media cuts each item's clip beside the export."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument(
            "--out",
            required=True,
            help="Output file ('-' for standard output, JSONL only); for lmms-eval a folder; for parquet "
            "FOLDER/NAME.parquet is written as FOLDER/data/NAME.parquet (the Hub layout).",
        )
        # Not argparse choices: an unknown format gets our sentence naming the formats, not argparse's.
        parser.add_argument("--format", default="jsonl", help=f"One of {', '.join(exports.REGISTRY)} (default jsonl).")
        parser.add_argument(
            "--with-media",
            metavar="DIR",
            help="Cut each row's clip into DIR (<sha256[:16]>_<start_ms>-<end_ms>.mp4, reused when "
            "there); rows get paths relative to the export.",
        )
        parser.add_argument("--task", help="lmms-eval task name (default: <project>_qa).")
        parser.add_argument("--qa-type")
        parser.add_argument("--provenance", choices=["machine_kept", "machine_modified", "human_added"])
        parser.add_argument("--source", choices=["real", "synthetic"])
        parser.add_argument("--illumination", choices=["day", "night", "other"])

    def handle(self, *args, **opts):
        fmt = opts["format"]
        if fmt not in exports.REGISTRY:
            raise CommandError(f"unknown --format {fmt!r}: choose one of {', '.join(exports.REGISTRY)}")
        if opts["task"] is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", opts["task"]):
            raise CommandError("--task must be 1 to 64 letters, digits, - or _ (it names the task's files)")
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        to_stdout = opts["out"] == "-"
        if to_stdout and fmt != "jsonl":
            raise CommandError(f"the {fmt} format is written to a file or folder: give --out PATH, not '-'")
        if fmt == "lmms-eval" and not opts["with_media"]:
            raise CommandError(exports.NO_MEDIA_LMMS)
        if to_stdout and opts["with_media"]:
            raise CommandError("--with-media needs --out PATH (clip paths are relative to the export's folder)")
        out = None if to_stdout else Path(opts["out"])
        if out is not None and fmt != "lmms-eval" and out.is_dir():
            raise CommandError(f"--out {out} is a folder; the {fmt} format is written to a file")
        if out is not None and fmt == "lmms-eval" and out.exists() and not out.is_dir():
            raise CommandError(f"--out {out} is a file; the lmms-eval format is written to a folder")
        filters = exports.Filters(
            qa_type=opts["qa_type"],
            provenance=opts["provenance"],
            source=opts["source"],
            illumination=opts["illumination"],
        )
        # A bar on stderr (stdout may be the export itself) when it is a terminal; counting costs one query.
        total = exports.count_rows(project, filters) if is_terminal(self.stderr) else None
        with Progress(self.stderr, desc="export", unit="pair", total=total) as progress:
            result = exports.export(
                project,
                fmt,
                out,
                filters=filters,
                stream=sys.stdout.buffer if to_stdout else None,
                media_dir=Path(opts["with_media"]) if opts["with_media"] else None,
                progress=progress.iterate,
                task=opts["task"],
            )
        if out is not None:
            what = f"{result.rows} verified QA pairs" + (
                f" as {result.items} items" if result.items != result.rows else ""
            )
            self.stderr.write(f"wrote {what} to {result.files[0] if result.files else out}")
            for path in result.files[1:]:
                self.stderr.write(f"  and {path}")
        for reason, n in result.skipped.items():
            self.stderr.write(f"left out {n} items: {reason} (the {fmt} format holds multiple-choice items only)")
        if opts["with_media"]:
            self.stderr.write(
                f"clips: {result.clips_cut} cut, {result.clips_reused} reused, "
                f"{len(result.media_failures)} failed, in {opts['with_media']}"
            )
        if result.media_failures:
            for failure in result.media_failures:
                self.stderr.write(f"  clip failed: {failure}")
            raise CommandError(
                f"{len(result.media_failures)} clips could not be cut; the export is written and "
                f"their rows have an empty media path"
            )
