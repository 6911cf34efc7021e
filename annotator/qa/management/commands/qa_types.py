"""python manage.py qa_types --project SLUG [--preset egonight]"""

from django.core.management.base import BaseCommand, CommandError

from annotator.projects.services import ensure_project
from annotator.qa.models import QAType
from annotator.qa.presets import PRESETS
from annotator.qa.services import apply_preset


class Command(BaseCommand):
    help = "List a project's QA types; --preset adds a preset's types (EgoNight's 12) that are missing."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project slug (created if missing).")
        parser.add_argument("--preset", choices=sorted(PRESETS))

    def handle(self, *args, **opts):
        project = ensure_project(opts["project"])
        if opts["preset"]:
            try:
                n = apply_preset(project, opts["preset"])
            except KeyError:
                raise CommandError(f"no preset {opts['preset']!r}") from None
            self.stdout.write(f"added {n} QA types from {opts['preset']}")
        for t in QAType.objects.filter(project=project):
            clip = f"{t.window_s:g} s window" if t.clip_policy == "window" else t.get_clip_policy_display()
            self.stdout.write(f"  {t.slug:<22} {'paired' if t.paired else 'unpaired':<9} {clip}")
