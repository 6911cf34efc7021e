"""python manage.py derive_night --project SLUG [--levels easy,medium,hard] [--no-wait]"""

from django.core.management.base import BaseCommand, CommandError

from annotator import jobs
from annotator.adapters.ffmpeg import NIGHT_LEVELS
from annotator.cli import Tick, wait_with_progress
from annotator.core.models import Job
from annotator.media.models import Video
from annotator.media.services import night_candidates
from annotator.projects.models import Project


class Command(BaseCommand):
    help = (
        "Derive synthetic night versions of the project's real day videos at EgoNight's difficulty "
        "levels (App. A.1) with Celery workers, and pair each with its day video."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--levels", default="easy,medium,hard", help="Comma-separated: easy, medium, hard.")
        parser.add_argument("--no-wait", action="store_true", help="Queue the work and return.")
        parser.add_argument("--timeout", type=float, default=3600)

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        levels = [x.strip() for x in opts["levels"].split(",") if x.strip()]
        unknown = set(levels) - set(NIGHT_LEVELS)
        if unknown or not levels:
            raise CommandError(f"levels must be among {', '.join(NIGHT_LEVELS)}")
        days = night_candidates(project)
        have = set(
            Video.objects.filter(derived_from__in=days, source="synthetic").values_list("derived_from", "difficulty")
        )
        todo = [(v, level) for v in days for level in levels if (v.pk, level) not in have]
        self.stdout.write(
            f"{len(days)} day videos, {len(todo)} night renditions to make "
            f"({len(days) * len(levels) - len(todo)} already there)"
        )
        # One job row per rendition (sent now, or by the reconciler if the broker is down); a rerun
        # while one is still queued adds nothing.
        keys = [f"media.derive_night:{v.pk}:{level}" for v, level in todo]
        for (v, level), key in zip(todo, keys):
            jobs.enqueue("media.derive_night", v.pk, level, key=key)
        if opts["no_wait"] or not todo:
            return

        def poll():
            states = dict(Job.objects.filter(key__in=keys).values_list("key", "status"))
            finished = sum(1 for k in keys if states.get(k) in (Job.Status.DONE, Job.Status.FAILED))
            return Tick(finished == len(keys), f"  {finished}/{len(keys)} rendered", n=finished, total=len(keys))

        wait_with_progress(
            poll,
            out=self.stdout,
            desc="rendering",
            unit="video",
            timeout_s=opts["timeout"],
            on_timeout="timed out waiting: is a Celery worker running?",
        )
        failed = list(Job.objects.filter(key__in=keys, status=Job.Status.FAILED).values_list("args", "error"))
        for (video_id, level), why in failed:
            self.stderr.write(f"failed video {video_id} {level}: {why}")

        def transcoded():
            # Until no video of the project is processing (the new renditions are transcoded like any
            # ingested video); no plain line, as before.
            videos = Video.objects.filter(project=project)
            total, processing = videos.count(), videos.filter(status=Video.Status.PROCESSING).count()
            return Tick(processing == 0, None, n=total - processing, total=total)

        wait_with_progress(
            transcoded,
            out=self.stdout,
            desc="transcoding",
            unit="video",
            timeout_s=opts["timeout"],
            on_timeout="timed out waiting for transcodes: is a Celery worker running?",
        )
        self.stdout.write(f"{len(todo) - len(failed)} night renditions ready and paired")
        if failed:
            raise SystemExit(1)
