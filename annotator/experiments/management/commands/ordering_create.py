"""python manage.py ordering_create --project SLUG --preset ego-flight --name NAME"""

from django.core.management.base import BaseCommand, CommandError

from annotator.adapters.ffmpeg import MediaError
from annotator.experiments.presets import PRESETS
from annotator.experiments.services import create_experiment
from annotator.projects.models import Project


class Command(BaseCommand):
    help = "Build a frame-ordering experiment's conditions and items from the project's ready, real videos."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--preset", required=True, choices=sorted(PRESETS))
        parser.add_argument("--name", required=True)
        parser.add_argument("--frame-size", type=int, default=224, help="Square frame size in px (default 224).")
        parser.add_argument("--seed", type=int, default=0, help="Experiment seed for the recorded shuffles.")
        parser.add_argument("--practice-items", type=int, default=3)

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        if not 16 <= opts["frame_size"] <= 2048:
            raise CommandError("--frame-size must be between 16 and 2048")
        try:
            report = create_experiment(project, opts["name"], opts["preset"], frame_size=opts["frame_size"],
                                       seed=opts["seed"], practice_items=opts["practice_items"], progress=self.stdout.write)
        except (ValueError, MediaError) as exc:
            raise CommandError(str(exc)) from None
        total = sum(report.items.values())
        skipped = sum(report.skipped.values())
        self.stdout.write(f"experiment {report.experiment.name}: {len(report.items)} conditions, {total} items, "
                          f"{report.practice} practice items, {report.frames_written} frames written; "
                          f"{skipped} clip slots skipped (videos too short for a condition)")
