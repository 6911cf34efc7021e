"""python manage.py ordering_create --project SLUG --preset ego-flight --name NAME"""

import re

from django.core.management.base import BaseCommand, CommandError

from annotator.adapters.ffmpeg import MediaError
from annotator.cli import Progress
from annotator.experiments.presets import PRESETS
from annotator.experiments.services import create_experiment
from annotator.projects.models import Project


_FRAMES = re.compile(r"frames: (\d+)/(\d+)")


class Command(BaseCommand):
    help = "Build a frame-ordering experiment's conditions and items from the project's ready, real videos."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--preset", required=True, choices=sorted(PRESETS))
        parser.add_argument("--name", required=True)
        parser.add_argument("--frame-size", type=int, default=224, help="Square frame size in px (default 224).")
        parser.add_argument("--seed", type=int, default=0, help="Experiment seed for the recorded shuffles.")
        parser.add_argument("--practice-items", type=int, default=3)
        parser.add_argument("--exclude-median-rt-below", type=float, metavar="S",
                            help="Flag participants whose median response time is under S seconds.")
        parser.add_argument("--exclude-practice-below", type=int, metavar="N",
                            help="Flag participants with fewer than N practice items exactly right.")
        parser.add_argument("--questions", type=int, default=102, help="Scored questions per participant (default 102).")
        parser.add_argument("--conditions-per-participant", type=int, default=2)
        parser.add_argument("--skip-existing", action="store_true", help="Do nothing if the experiment exists.")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        if not 16 <= opts["frame_size"] <= 2048:
            raise CommandError("--frame-size must be between 16 and 2048")
        from annotator.experiments.models import Experiment

        if opts["skip_existing"] and Experiment.objects.filter(project=project, name=opts["name"]).exists():
            self.stdout.write(f"experiment {opts['name']} already exists; nothing done")
            return
        bar: list[Progress] = []  # made at the first frame count: with every frame already cut there is none

        def progress(line: str) -> None:
            # The service reports "  frames: i/n" while cutting frames and one line per condition.
            if counted := _FRAMES.search(line):
                if not bar:
                    bar.append(Progress(self.stdout, desc="frames", unit="frame"))
                bar[0].show(line, int(counted[1]), int(counted[2]))
            else:
                (bar[0].write if bar else self.stdout.write)(line)

        try:
            report = create_experiment(project, opts["name"], opts["preset"], frame_size=opts["frame_size"],
                                       seed=opts["seed"], practice_items=opts["practice_items"], progress=progress)
        except (ValueError, MediaError) as exc:
            raise CommandError(str(exc)) from None
        finally:
            for b in bar:
                b.close()
        exclusion = {k: v for k, v in (("min_median_rt_s", opts["exclude_median_rt_below"]),
                                        ("min_practice_correct", opts["exclude_practice_below"])) if v is not None}
        Experiment.objects.filter(pk=report.experiment.pk).update(
            exclusion=exclusion, questions_per_participant=opts["questions"],
            conditions_per_participant=opts["conditions_per_participant"])
        total = sum(report.items.values())
        skipped = sum(report.skipped.values())
        self.stdout.write(f"experiment {report.experiment.name}: {len(report.items)} conditions, {total} items, "
                          f"{report.practice} practice items, {report.frames_written} frames written; "
                          f"{skipped} (condition, video) pairs skipped because the video is too short")
