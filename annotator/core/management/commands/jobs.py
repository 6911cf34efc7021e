"""python manage.py jobs [--reconcile] [--failed N]"""

from django.core.management.base import BaseCommand

from annotator import jobs
from annotator.core.models import Job


class Command(BaseCommand):
    help = (
        "Background jobs: counts per status; --reconcile re-sends stale jobs now (what Celery beat does "
        "every JOBS_RECONCILE_EVERY_S); --failed lists the latest failures with their reasons."
    )

    def add_arguments(self, parser):
        parser.add_argument("--reconcile", action="store_true", help="Run one reconcile pass now.")
        parser.add_argument("--failed", type=int, default=0, metavar="N", help="List the N latest failed jobs.")

    def handle(self, *args, **opts):
        if opts["reconcile"]:
            report = jobs.reconcile()
            self.stdout.write(
                f"reconcile: {report.resent} sent, {report.stale_running} stale running, "
                f"{report.failed} failed, {report.unsent} not sent (broker unreachable)"
            )
        counts = jobs.counts()
        self.stdout.write("jobs: " + ", ".join(f"{n} {status}" for status, n in counts.items()))
        for job in Job.objects.filter(status=Job.Status.FAILED).order_by("-finished_at")[: opts["failed"]]:
            self.stdout.write(f"  {job.key}: {job.error}")
