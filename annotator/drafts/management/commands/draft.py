"""python manage.py draft --project SLUG [--pipeline templates|llm] [--qa-type SLUG] [--no-wait]"""

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import Tick, wait_with_progress
from annotator.drafts.models import DraftJob
from annotator.drafts.services import start_run
from annotator.projects.models import Project


class Command(BaseCommand):
    help = "Draft QA pairs for a project's ready videos with Celery workers, showing progress."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--pipeline", default="templates", choices=["templates", "llm"])
        parser.add_argument("--qa-type", default="open_ended", help="QA type asked of the model (llm only).")
        parser.add_argument("--model", default="", help="Model name (llm only; default LLM_MODEL).")
        parser.add_argument("--no-wait", action="store_true", help="Queue the jobs and return.")
        parser.add_argument("--timeout", type=float, default=3600)

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        try:
            launch = start_run(project, opts["pipeline"], qa_type=opts["qa_type"], model=opts["model"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        skipped = ", ".join(f"{n} {why}" for why, n in launch.skipped.items()) or "none"
        if launch.run is None:
            self.stdout.write(f"nothing to draft; skipped: {skipped}")
            return
        self.stdout.write(f"run {launch.run.pk} ({launch.run.pipeline}): {launch.queued} videos queued; skipped: {skipped}")
        if opts["no_wait"]:
            return
        def poll():
            jobs = list(DraftJob.objects.filter(run=launch.run).values_list("status", "n_drafts"))
            done = sum(1 for s, _ in jobs if s == DraftJob.Status.DONE)
            failed = sum(1 for s, _ in jobs if s == DraftJob.Status.FAILED)
            drafts = sum(n for _, n in jobs)
            return Tick(done + failed == len(jobs), f"  {done + failed}/{len(jobs)} videos done ({failed} failed), {drafts} drafts",
                        n=done + failed, total=len(jobs), note=f"{failed} failed, {drafts} drafts")

        wait_with_progress(poll, out=self.stdout, desc="drafting", unit="video", timeout_s=opts["timeout"],
                           on_timeout="timed out waiting: is a Celery worker running?")
        failures = DraftJob.objects.filter(run=launch.run, status=DraftJob.Status.FAILED).values_list("video__filename", "error")
        for video, error in failures:
            self.stderr.write(f"failed {video}: {error}")
        if failures:
            raise SystemExit(1)
