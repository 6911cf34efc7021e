"""python manage.py ingest PATH... --project SLUG [--manifest FILE] [--wait]"""

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

from annotator.cli import Progress, Tick, wait_with_progress
from annotator.media.manifest import ManifestError, load_manifest
from annotator.media.models import Video
from annotator.media.services import expand_paths, ingest_file
from annotator.projects.services import ensure_project


class Command(BaseCommand):
    help = (
        "Ingest video files or folders into a project (created if missing). Prints one line per "
        "file and a summary; exits 1 if any file failed."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="Video files or folders (searched recursively).")
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--manifest", help="JSONL or CSV with per-video metadata, keyed by file basename.")
        parser.add_argument("--wait", action="store_true", help="Wait until transcoding finishes, showing progress.")
        parser.add_argument("--timeout", type=float, default=1800, help="Seconds to wait with --wait (default 1800).")

    def handle(self, *args, **opts):
        try:
            manifest = load_manifest(opts["manifest"]) if opts["manifest"] else {}
        except (ManifestError, OSError) as exc:
            raise CommandError(f"manifest: {exc}") from None
        project = ensure_project(opts["project"])
        files = expand_paths(opts["paths"])
        if not files:
            raise CommandError("no video files found in the given paths")
        tally = {"queued": 0, "duplicate": 0, "failed": 0}
        # Hashing and decoding every file takes a while: a bar in a terminal, the result lines above it.
        with Progress(self.stdout, desc="ingest", unit="file", total=len(files)) as progress:
            for path in progress.iterate(files):
                result = ingest_file(project, path, manifest.get(path.name))
                tally[result.outcome] += 1
                line = f"{result.outcome:<9} {path}"
                if result.video_id:
                    line += f"  (video {result.video_id})"
                if result.reason:
                    line += f"  {result.reason}"
                progress.write(self.style.ERROR(line) if result.outcome == "failed" else line)
        listed = set(manifest) - {p.name for p in files}
        if listed:
            self.stderr.write(f"manifest entries with no matching file: {', '.join(sorted(listed))}")
        self.stdout.write(
            f"{len(files)} files: {tally['queued']} queued, {tally['duplicate']} duplicate, {tally['failed']} failed"
        )
        if opts["wait"]:
            self._wait(project, opts["timeout"])
        if tally["failed"]:
            raise SystemExit(1)

    def _wait(self, project, timeout: float) -> None:
        def poll():
            counts = dict.fromkeys(Video.Status.values, 0)
            counts.update(Video.objects.filter(project=project).values_list("status").annotate(n=Count("id")))
            line = f"transcoding: {counts['ready']} ready, {counts['processing']} processing, {counts['failed']} failed"
            return Tick(
                counts["processing"] == 0,
                line,
                n=counts["ready"] + counts["failed"],
                total=sum(counts.values()),
                note=f"{counts['failed']} failed",
            )

        wait_with_progress(
            poll,
            out=self.stdout,
            desc="transcoding",
            unit="video",
            timeout_s=timeout,
            on_timeout=f"still processing after {timeout:.0f} s: is a Celery worker running?",
        )
