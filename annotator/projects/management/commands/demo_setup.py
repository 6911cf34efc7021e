"""python manage.py demo_setup [--footage DIR] [--manifest FILE] [--project SLUG] [--questions N]"""

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from annotator.projects.models import Project

# The demo's logins (README "Set up"): a project admin who is also the Django superuser, and two annotators.
DEMO_USERS = [
    ("admin", "admin", "harbor-lantern-42", True),
    ("annotator1", "annotator", "maple-river-81", False),
    ("annotator2", "annotator", "granite-sparrow-64", False),
]


class Command(BaseCommand):
    help = ("The demo's set-up steps, in order (what `make demo` runs before it starts the web server): users, "
            "ingest and transcode the footage, night renditions paired with their day clips, EgoNight's QA "
            "types, template drafts, a scripted first pass over a few units as the demo admin (so that verified "
            "and deleted QA pairs exist), and one human-baseline study of each kind. Every step reuses what is "
            "there, so running it again on the same database adds nothing and fails nothing. Needs a Celery worker.")

    def add_arguments(self, parser):
        parser.add_argument("--footage", default=".cache/footage", help="Folder of demo videos.")
        parser.add_argument("--manifest", default="demo/manifest.jsonl")
        parser.add_argument("--project", default="demo")
        parser.add_argument("--questions", type=int, default=12, help="Scored ordering questions per participant.")
        parser.add_argument("--first-pass-units", type=int, default=8,
                            help="Units the demo admin verifies by script (the others stay for the annotators).")

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
        done = scripted_first_pass(Project.objects.get(slug=project), get_user_model().objects.get(username="admin"),
                                   units=opts["first_pass_units"])
        self.stdout.write(f"scripted first pass: {done} units verified by admin now")
        # One study of each kind (issue 8); each is built once and reused on a rerun.
        for kind, name, extra in (
                ("ordering", "ego-flight", ["--preset", "ego-flight", "--questions", str(opts["questions"]),
                                            "--exclude-median-rt-below", "1.0", "--exclude-practice-below", "1"]),
                ("mcq", "egoexobench-human", ["--preset", "egoexobench-human", "--questions", "10"]),
                ("open_answer", "open-answers", ["--per-type", "3", "--raters-per-item", "3", "--questions", "6"]),
                ("likert", "vudg-quality", ["--preset", "vudg-quality", "--per-type", "3", "--questions", "10"]),
                ("likert", "xlebench-realism", ["--preset", "xlebench-realism", "--per-type", "4", "--questions", "8"])):
            call_command("study_create", "--project", project, "--kind", kind, "--name", name, "--skip-existing", *extra, **out)


def scripted_first_pass(project, user, *, units: int) -> int:
    """Verify up to ``units`` work units as ``user`` through the real queue and submit services, so the
    demo has verified QA pairs (every study kind samples them) and deleted ones (the Likert
    *filtered* control group). Each unit's pairs are kept, except that in a unit of three or more
    pairs the last one is deleted as vague. Units the user already completed count towards
    ``units``, so a rerun does nothing more. Returns the units completed by this call."""
    from annotator.qa.models import QueueItem
    from annotator.qa.queue import claim_next
    from annotator.qa.services import Decision, submit_unit

    done = QueueItem.objects.filter(project=project, completed_by=user).count()
    made = 0
    while done + made < units:
        item = claim_next(project, user)
        if item is None:
            break
        pairs = list(item.unit.qa_pairs.filter(status="draft").order_by("id"))
        decisions = [Decision(p.pk, "delete" if len(pairs) >= 3 and p is pairs[-1] else "keep",
                              reason="vague" if len(pairs) >= 3 and p is pairs[-1] else "", version=p.version)
                     for p in pairs]
        submit_unit(item.unit_id, user, idempotency_key=f"demo-first-pass-{item.pk}", decisions=decisions,
                    additions=[], time_spent_ms=None)
        made += 1
    return made
