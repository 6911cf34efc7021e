"""python manage.py demo_setup [--footage DIR] [--manifest FILE] [--project SLUG] [--questions N]"""

from django.core.management import call_command
from django.core.management.base import BaseCommand

# The demo's logins (README "Set up"): a project admin who is also the Django superuser, and two annotators.
DEMO_USERS = [
    ("admin", "admin", "harbor-lantern-42", True),
    ("annotator1", "annotator", "maple-river-81", False),
    ("annotator2", "annotator", "granite-sparrow-64", False),
]


class Command(BaseCommand):
    help = ("The demo's set-up steps, in order (what `make demo` runs before it starts the web server): users, "
            "ingest and transcode the footage, night renditions paired with their day clips, EgoNight's QA "
            "types, template drafts, and the EGO-FLIGHT ordering experiment. Every step reuses what is there, "
            "so running it again on the same database adds nothing and fails nothing. Needs a Celery worker.")

    def add_arguments(self, parser):
        parser.add_argument("--footage", default=".cache/footage", help="Folder of demo videos.")
        parser.add_argument("--manifest", default="demo/manifest.jsonl")
        parser.add_argument("--project", default="demo")
        parser.add_argument("--questions", type=int, default=12, help="Scored ordering questions per participant.")

    def handle(self, *args, **opts):
        project = opts["project"]
        out = {"stdout": self.stdout, "stderr": self.stderr}
        for name, role, password, superuser in DEMO_USERS:
            call_command("createuser", name, role=role, project=project, password=password, superuser=superuser, **out)
        call_command("ingest", opts["footage"], project=project, manifest=opts["manifest"], wait=True, **out)
        # Night versions of every real day clip at EgoNight's three difficulty levels, paired with it;
        # real night footage stays unpaired.
        call_command("derive_night", project=project, **out)
        call_command("qa_types", project=project, preset="egonight", **out)
        call_command("draft", project=project, pipeline="templates", **out)
        # The EGO-FLIGHT frame-ordering human baseline (nine conditions) over the real clips.
        call_command("ordering_create", project=project, preset="ego-flight", name="ego-flight", skip_existing=True,
                     questions=opts["questions"], exclude_median_rt_below=1.0, exclude_practice_below=1, **out)
