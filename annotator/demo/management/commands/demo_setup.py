"""python manage.py demo_setup [--footage DIR] [--manifest FILE] [--project SLUG] [--questions N] [--model-base-url URL]"""

import io
import json

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from annotator.demo.guidelines import seed_guidelines
from annotator.demo.media import SET_TYPE, long_and_multiview
from annotator.projects.models import Project
from annotator.qa.models import QAPair, QueueItem, WorkUnit
from annotator.qa.services import chosen, set_queue_policy
from annotator.studies.models import Study

DEMO_OVERLAP_SHARE = 0.5
DEMO_BASELINE_PEOPLE = 6  # scripted participants of the EGO-FLIGHT study (issue 18: a filled table)

# The demo's logins (README "Set up"): a project admin who is also the Django superuser, and two annotators.
DEMO_USERS = [
    ("admin", "admin", "harbor-lantern-42", True),
    ("annotator1", "annotator", "maple-river-81", False),
    ("annotator2", "annotator", "granite-sparrow-64", False),
]


class Command(BaseCommand):
    help = (
        "The demo's set-up steps, in order (what `make demo` runs before it starts the web server): users, "
        "ingest and transcode the footage, night renditions paired with their day clips, EgoNight's QA "
        "types, template drafts, a scripted first pass over a few units as the demo admin (so that verified "
        "and deleted QA pairs exist), and one human-baseline study of each kind. Every step reuses what is "
        "there, so running it again on the same database adds nothing and fails nothing. Needs a Celery worker."
    )

    def add_arguments(self, parser):
        parser.add_argument("--footage", default=".cache/footage", help="Folder of demo videos.")
        parser.add_argument("--manifest", default="demo/manifest.jsonl")
        parser.add_argument("--project", default="demo")
        parser.add_argument("--questions", type=int, default=12, help="Scored ordering questions per participant.")
        parser.add_argument(
            "--first-pass-units",
            type=int,
            default=8,
            help="Units the demo admin verifies by script (the others stay for the annotators).",
        )
        parser.add_argument(
            "--no-long-video",
            action="store_true",
            help="Leave out the long looped video (past MEDIA_HLS_MIN_DURATION_S, so it gets HLS).",
        )
        parser.add_argument(
            "--model-base-url",
            default="",
            help="An OpenAI-compatible server (make demo starts demo/model_server.py, canned answers): "
            "registered as model server demo-canned, then one VUDG run and one evaluation.",
        )

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
        proj = Project.objects.get(slug=project)
        if proj.overlap_share != DEMO_OVERLAP_SHARE:
            # About half of the units get a blind overlap pass by a second annotator, for agreement
            # (issue 9), under a queue seed that draws one among those the admin verifies next.
            proj.queue_seed = demo_queue_seed(proj, opts["first_pass_units"])
            proj.save(update_fields=["queue_seed"])
            set_queue_policy(proj, overlap_share=DEMO_OVERLAP_SHARE, overlap_k=2)
        users = get_user_model().objects
        done = scripted_first_pass(proj, users.get(username="admin"), units=opts["first_pass_units"])
        self.stdout.write(f"scripted first pass: {done} units verified by admin now")
        done = scripted_overlap(proj, users.get(username="annotator2"))
        self.stdout.write(f"scripted overlap pass: {done} units verified blind by annotator2 now")
        # One study of each kind (issue 8); each is built once and reused on a rerun.
        for kind, name, extra in (
            (
                "ordering",
                "ego-flight",
                [
                    "--preset",
                    "ego-flight",
                    "--questions",
                    str(opts["questions"]),
                    "--exclude-median-rt-below",
                    "1.0",
                    "--exclude-practice-below",
                    "1",
                ],
            ),
            ("mcq", "egoexobench-human", ["--preset", "egoexobench-human", "--questions", "10"]),
            ("open_answer", "open-answers", ["--per-type", "3", "--raters-per-item", "3", "--questions", "6"]),
            ("likert", "vudg-quality", ["--preset", "vudg-quality", "--per-type", "3", "--questions", "10"]),
            ("likert", "xlebench-realism", ["--preset", "xlebench-realism", "--per-type", "4", "--questions", "8"]),
        ):
            call_command(
                "study_create", "--project", project, "--kind", kind, "--name", name, "--skip-existing", *extra, **out
            )
        # Agreement (issue 9): rating sets as researchers bring them, then a report of every scope.
        made = demo_rating_sets(proj)
        self.stdout.write(f"rating sets: {made or 'none'} added")
        report = io.StringIO()
        call_command("agreement_report", "--project", project, "--now", "--json", stdout=report, stderr=self.stderr)
        for scope in json.loads(report.getvalue())["scopes"]:
            whole = [r for r in scope["reports"] if r["subset"] == "" and r["round"] == "first"]
            words = ", ".join(f"{r['metric']} {r['value']:.3f}" for r in whole[:3]) or "nothing to compare yet"
            self.stdout.write(f"agreement {scope['scope']}: {words} ({len(scope['reports'])} reports)")
        # Long and multi-view video (issue 11): an ego-exo set, a life log with an HLS part, their drafts.
        long_and_multiview(proj, opts["footage"], opts["manifest"], out, long_video=not opts["no_long_video"])
        # Guidelines for the project and its QA types (issue 21), where the admin has written none.
        self.stdout.write(f"guidelines written now: {seed_guidelines(proj)}")
        # Humans and models on one stimulus (issue 18): the ego-exo and video-option items verified by
        # script, a timed MCQ study over them; scripted people take the EGO-FLIGHT study.
        done = verify_units_of(proj, users.get(username="admin"), [SET_TYPE])
        self.stdout.write(f"ego-exo units verified by admin now: {done}")
        if QAPair.objects.filter(project=proj, qa_type__slug=SET_TYPE, status="verified").exists():
            call_command(
                "study_create",
                "--project",
                project,
                "--kind",
                "mcq",
                "--name",
                "egoexo-views",
                "--qa-type",
                SET_TYPE,
                "--time-limits",
                "60,180",
                "--questions",
                "2",
                "--skip-existing",
                **out,
            )
        # The exposure ledger (issue 19): two of the scripted people take other studies first, as a
        # person who takes every study in turn; what those showed them is kept from them later.
        took = scripted_crossover(proj, people=2, studies=("vudg-quality", "egoexobench-human", "open-answers"))
        self.stdout.write(f"scripted people who took the Likert, MCQ and open-answer studies first: {took} now")
        study = Study.objects.get(project=proj, name="ego-flight")
        made = scripted_baseline(study, people=DEMO_BASELINE_PEOPLE)
        self.stdout.write(f"scripted human baseline of {study.name}: {made} people took part now")
        from annotator.studies.exposures import refusal_counts

        for other in Study.objects.filter(project=proj).order_by("name"):
            counts = refusal_counts(other)
            if counts:
                words = ", ".join(f"{n} {why}" for why, n in counts.items())
                self.stdout.write(f"exposure ledger: items of {other.name} kept from people: {words}")
        if opts["model_base_url"]:
            models_in_the_loop(proj, opts["model_base_url"], out)
        # The benchmark report (issue 18): EGO-FLIGHT's Table 1 layout, humans beside the model. Answers
        # are scored by a worker after each one; what it has not reached yet is scored here.
        from annotator.studies.services import score_pending

        score_pending(study.pk)
        table = io.StringIO()
        call_command(
            "report",
            "--project",
            project,
            "--study",
            study.name,
            "--preset",
            "ego-flight-table1",
            "--format",
            "md",
            stdout=table,
            stderr=self.stderr,
        )
        self.stdout.write("EGO-FLIGHT Table 1 layout (scripted people, canned model):\n" + table.getvalue())
        # The team (issue 20): a qualification with gold in the queue, a review round with rework, and
        # the pay report at EgoNight's EUR 20 per video. Each step is idempotent on a rerun.
        from annotator.demo import gold as gold_demo
        from annotator.demo import review as review_demo
        from annotator.demo import team as team_demo

        gold_demo.run_demo(proj, self.stdout)
        review_demo.run_demo(proj, self.stdout)
        team_demo.run_demo(proj, self.stdout)


DEMO_SERVER = "demo-canned"
DEMO_REJUDGE = 40  # answers in the demo's re-judge sample; the admin re-judges the first 15 by script


def models_in_the_loop(project, base_url: str, out: dict) -> None:
    """Issue 10 in the demo, once per database: the model server ``demo-canned`` at ``base_url``
    (its URL is updated on every run), a VUDG cascade run over the ready videos (its fixable and
    invalid items are served first in the queue), an evaluation of the server's model on the
    verified QA pairs, and a re-judge sample of which the admin re-judges 15 answers by script.
    The demo's model server answers with canned texts: these drafts and scores show the workflow,
    not a model's quality."""
    from annotator.drafts.models import DraftRun
    from annotator.evaluation import rejudge
    from annotator.evaluation.models import Evaluation
    from annotator.evaluation.rejudge import create_sample, record
    from annotator.inference.models import ModelServer

    stdout = out["stdout"]
    ModelServer.objects.update_or_create(
        project=project,
        name=DEMO_SERVER,
        defaults={
            "base_url": base_url,
            "model": "canned-demo-v1",
            "concurrency": 4,
            "price_prompt_per_mtok": 2.0,
            "price_completion_per_mtok": 8.0,
        },
    )
    if not DraftRun.objects.filter(project=project, pipeline="vudg").exists():
        try:
            call_command("draft", project=project.slug, pipeline="vudg", server=DEMO_SERVER, **out)
        except SystemExit:
            stdout.write("the VUDG run had failures; see its page")
    if not Evaluation.objects.filter(project=project, study__name="ego-flight").exists():
        # The canned model on the EGO-FLIGHT study's items, as its people got them (issue 18).
        try:
            call_command(
                "evaluate",
                "--study",
                "ego-flight",
                "--project",
                project.slug,
                "--server",
                DEMO_SERVER,
                "--frames",
                "4",
                **out,
            )
        except SystemExit:
            stdout.write("the study evaluation had failures; see its page")
    if not Evaluation.objects.filter(project=project, study__isnull=True).exists():
        try:
            call_command("evaluate", "--project", project.slug, "--server", DEMO_SERVER, "--frames", "4", **out)
        except SystemExit:
            stdout.write("the evaluation had failures; see its page")
        evaluation = Evaluation.objects.filter(project=project, study__isnull=True).order_by("-id").first()
        if evaluation is not None and rejudge.candidates(evaluation):
            admin = get_user_model().objects.get(username="admin")
            sample = create_sample(evaluation, size=DEMO_REJUDGE, seed=7)
            for item in sample.items.order_by("position")[:15]:
                record(item.pk, admin, "wrong" if item.position % 8 == 3 else "right")
            stdout.write(
                f"evaluation {evaluation.pk}: re-judge sample of {sample.n_items} answers, 15 re-judged by admin"
            )


def demo_queue_seed(project, first: int) -> int:
    """The first queue seed from the project's own up under which a third to two thirds of the units
    whose first pass is open are drawn for an overlap pass at ``DEMO_OVERLAP_SHARE`` (``chosen``),
    one at least among the ``first`` the queue serves first (the scripted first pass's), so the
    scripted overlap pass has a unit to verify and the agreement pages have data. Seed 0 drew none
    of 8 units for about 1 in 256 runs of the demo's test (its unit ids vary). Reads the open units'
    ids once; returns the seed, saving nothing."""
    ids = list(
        QueueItem.objects.filter(
            project=project,
            kind=QueueItem.Kind.FIRST_PASS,
            status=QueueItem.Status.OPEN,
            unit__purpose=WorkUnit.Purpose.REAL,
        )
        .order_by("priority", "id")
        .values_list("unit_id", flat=True)
    )

    def fits(seed: int) -> bool:
        drawn = [chosen(Project(queue_seed=seed), u, "overlap", DEMO_OVERLAP_SHARE) for u in ids]
        about_half = len(ids) < 3 or len(ids) / 3 <= sum(drawn) <= 2 * len(ids) / 3
        return not ids or (any(drawn[: max(first, 1)]) and about_half)

    seed = project.queue_seed
    while not fits(seed):
        seed += 1
    return seed


def scripted_overlap(project, user) -> int:
    """Take, as ``user``, the blind overlap passes of units whose first pass is done, through the real
    queue, deciding deterministically so the two passes disagree on some pairs: keep, but delete
    every fifth pair (as vague) and reword the answer of every seventh. Stops at the first item the
    queue serves that is not such an overlap pass (and gives it back). Returns the units done."""
    from annotator.qa.queue import claim_next, release
    from annotator.qa.services import Decision, submit_unit

    made = 0
    while (item := claim_next(project, user)) is not None:
        first_done = QueueItem.objects.filter(
            unit_id=item.unit_id, kind=QueueItem.Kind.FIRST_PASS, status=QueueItem.Status.DONE
        ).exists()
        if item.kind != QueueItem.Kind.OVERLAP or not first_done:
            release(item)
            break
        decisions = []
        for p in item.unit.qa_pairs.filter(origin="machine").order_by("id"):
            if p.pk % 5 == 0:
                decisions.append(Decision(p.pk, "delete", reason="vague"))
            elif p.pk % 7 == 0 and p.options is None:
                decisions.append(Decision(p.pk, "modify", question=p.question, answer=f"I think {p.answer}"))
            else:
                decisions.append(Decision(p.pk, "keep"))
        submit_unit(
            item.unit_id,
            user,
            idempotency_key=f"demo-overlap-{item.pk}",
            decisions=decisions,
            additions=[],
            time_spent_ms=None,
        )
        made += 1
    return made


def demo_rating_sets(project) -> int:
    """Two rating sets, drawn from a fixed seed, unless they exist: ``xlebench-sheets`` (three
    evaluators scoring 56 records 1-5 for realism, as X-LeBench seed 002 App. D did on debriefing
    sheets; ordinal) and ``judge-recheck`` (a model judge's 0-5 scores of 60 answers and a person's
    re-judgements, EgoNight seed 000 App. A.5.1). Returns how many were added."""
    import random

    from annotator.agreement.models import RatingSet
    from annotator.agreement.services import import_ratings

    rng = random.Random(9)
    made = 0
    if not RatingSet.objects.filter(project=project, name="xlebench-sheets").exists():
        rows = []
        for record in range(56):
            quality = rng.choice([2, 3, 3, 4, 4, 4, 5])
            for evaluator in ("evaluator-1", "evaluator-2", "evaluator-3"):
                score = min(5, max(1, quality + rng.choice([-1, 0, 0, 0, 1])))
                rows.append({"item": f"record-{record + 1:02d}", "rater": evaluator, "value": score})
        import_ratings(
            project,
            "xlebench-sheets",
            "ordinal",
            rows,
            description="Realism of 56 records, three evaluators (demo data drawn from a fixed seed).",
        )
        made += 1
    if not RatingSet.objects.filter(project=project, name="judge-recheck").exists():
        rows = []
        for answer in range(60):
            judge = rng.randint(0, 5)
            human = judge if rng.random() < 0.9 else max(0, min(5, judge + rng.choice([-1, 1])))
            rows += [
                {"item": f"answer-{answer + 1:02d}", "rater": "judge", "value": judge},
                {"item": f"answer-{answer + 1:02d}", "rater": "human", "value": human},
            ]
        import_ratings(
            project,
            "judge-recheck",
            "ordinal",
            rows,
            source="judge",
            description="A model judge's 0-5 scores against a person's re-judgements (demo data).",
        )
        made += 1
    return made


def scripted_first_pass(project, user, *, units: int) -> int:
    """Verify up to ``units`` work units as ``user`` through the real queue and submit services, so the
    demo has verified QA pairs (every study kind samples them) and deleted ones (the Likert
    *filtered* control group). Each unit's pairs are kept, except that in a unit of three or more
    pairs the last one is deleted as vague. Units the user already completed count towards
    ``units``, so a rerun does nothing more. Returns the units completed by this call."""
    from annotator.qa.queue import claim_next
    from annotator.qa.services import Decision, submit_unit

    done = QueueItem.objects.filter(project=project, completed_by=user).count()
    made = 0
    while done + made < units:
        item = claim_next(project, user)
        if item is None:
            break
        pairs = list(item.unit.qa_pairs.filter(status="draft").order_by("id"))
        decisions = [
            Decision(
                p.pk,
                "delete" if len(pairs) >= 3 and p is pairs[-1] else "keep",
                reason="vague" if len(pairs) >= 3 and p is pairs[-1] else "",
                version=p.version,
            )
            for p in pairs
        ]
        submit_unit(
            item.unit_id,
            user,
            idempotency_key=f"demo-first-pass-{item.pk}",
            decisions=decisions,
            additions=[],
            time_spent_ms=None,
        )
        made += 1
    return made


def verify_units_of(project, user, qa_types: list[str]) -> int:
    """Verify, as ``user``, through the real queue and submit services, the units holding draft QA
    pairs of ``qa_types`` (every pair kept): their first-pass items are put first in the queue (the
    claim serves the lowest ``priority`` first), then claimed and submitted one by one; an item of
    another unit is given back untouched. Returns the units completed by this call (0 on a rerun)."""
    from annotator.qa.queue import claim_next, release
    from annotator.qa.services import Decision, submit_unit

    units = QAPair.objects.filter(project=project, qa_type__slug__in=qa_types, status="draft").values("unit_id")
    QueueItem.objects.filter(
        unit_id__in=units, kind=QueueItem.Kind.FIRST_PASS, status=QueueItem.Status.OPEN, leased_by__isnull=True
    ).update(priority=-1000)
    made = 0
    while (item := claim_next(project, user)) is not None:
        pairs = list(item.unit.qa_pairs.filter(status="draft").order_by("id"))
        if item.kind != QueueItem.Kind.FIRST_PASS or not any(p.qa_type.slug in qa_types for p in pairs):
            release(item)
            break
        submit_unit(
            item.unit_id,
            user,
            idempotency_key=f"demo-verify-{item.pk}",
            additions=[],
            time_spent_ms=None,
            decisions=[Decision(p.pk, "keep", reason="", version=p.version) for p in pairs],
        )
        made += 1
    return made


def scripted_crossover(project, *, people: int, studies: tuple[str, ...]) -> int:
    """``baseline1``..``baseline<people>`` take each study of ``studies`` in turn through the real
    study services before anything else (every trial shown and answered: option A, a rating of 3, or
    "I am not sure"), so the exposure ledger has something to keep from them later: the answers a
    Likert study showed, the clips an MCQ study played. Returns the (person, study) pairs taken now
    (0 on a rerun)."""
    from annotator.projects.services import ensure_member
    from annotator.studies import services
    from annotator.studies.models import Participant

    answers = {"likert": {"score": 3}, "mcq": 0, "open_answer": "I am not sure"}
    made = 0
    for n in range(1, people + 1):
        user, _ = ensure_member(f"baseline{n}", role="annotator", project=project)
        for name in studies:
            study = Study.objects.filter(project=project, name=name, status=Study.Status.READY).first()
            if study is None or Participant.objects.filter(study=study, user=user).exists():
                continue
            participant = services.enroll(study, user)
            services.start(participant)
            while (trial := services.current_trial(participant)) is not None:
                services.mark_shown(participant, trial.pk)
                services.answer_trial(
                    participant,
                    trial.pk,
                    answers[study.kind],
                    client_rt_ms=1.0,
                    idempotency_key=f"demo-crossover-{trial.pk}",
                )
            made += 1
    return made


def scripted_baseline(study, *, people: int) -> int:
    """Scripted people take ``study`` (an ordering study) through the real study services, so the
    demo's report has a human column: ``baseline1``..``baseline<people>`` (annotators with
    unusable passwords), each enrolled, past the instructions, then every trial shown and answered
    in turn (practice right; a scored order right, or with two neighbouring non-hint elements
    swapped, by a seeded draw per person: people of skill 0.55 to 0.8). Response times are
    scripted too, 2-9 s, set by moving the trial's server ``shown_at`` back by that much before the
    answer (the client time is 50 ms less). Returns the people who took part now (0 on a rerun).
    The demo's people are a script: their scores show the workflow, not a human baseline."""
    import random
    from datetime import timedelta

    from django.db.models import F

    from annotator.projects.services import ensure_member
    from annotator.studies import services
    from annotator.studies.handles import handles_of
    from annotator.studies.models import Participant, Trial

    made = 0
    for n in range(1, people + 1):
        user, _ = ensure_member(f"baseline{n}", role="annotator", project=study.project)
        if Participant.objects.filter(study=study, user=user, stage=Participant.Stage.DONE).exists():
            continue
        participant = services.enroll(study, user)
        services.start(participant)
        rng = random.Random(f"demo-baseline:{study.pk}:{n}")
        skill = 0.55 + 0.05 * (n % 6)
        while (trial := services.current_trial(participant)) is not None:
            item = trial.item
            order = list(item.truth)
            hints = set(item.payload.get("hints", []))
            free = [i for i in range(len(order) - 1) if i + 1 not in hints and i + 2 not in hints]
            if not trial.practice and free and rng.random() > skill:
                i = rng.choice(free)
                order[i], order[i + 1] = order[i + 1], order[i]
            services.mark_shown(participant, trial.pk)
            rt_s = rng.uniform(2.0, 9.0)
            Trial.objects.filter(pk=trial.pk).update(
                served_at=F("served_at") - timedelta(seconds=rt_s + 0.5),
                shown_at=F("shown_at") - timedelta(seconds=rt_s),
            )
            handles = handles_of(trial.pk, item.payload["shown"])
            services.answer_trial(
                participant,
                trial.pk,
                [handles[e] for e in order],
                client_rt_ms=rt_s * 1000 - 50,
                idempotency_key=f"demo-baseline-{trial.pk}",
            )
            participant.refresh_from_db()
        made += 1
    return made
