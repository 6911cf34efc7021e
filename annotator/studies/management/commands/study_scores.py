"""python manage.py study_scores NAME [--json] [--include-excluded] [--project SLUG]
    [--judge-server S [--rubric egonight|vudg] [--timeout S]]

With --judge-server, an open-answer study's answers (people's and models') are first judged by the
model of server S with the rubric evaluations use (issue 18: one judge for both), by the job
``evaluation.judge_study`` (a Celery worker runs it; this command waits, showing progress), and the
table gains ``judge_accuracy`` and the rubric's scores beside exact match and token F1.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotator import jobs
from annotator.cli import Tick, wait_with_progress
from annotator.core.models import Job
from annotator.studies.commands import study_named
from annotator.studies.kinds import metrics_of
from annotator.studies.models import Item, Trial
from annotator.studies.selectors import score_table, unscored

RUBRICS = ("egonight", "vudg")  # the evaluation app's rubrics (annotator.evaluation.models.Rubric)


class Command(BaseCommand):
    help = (
        "Per condition, subtask (QA type), Likert group and respondent (human, or a model name): the mean of every "
        "metric of the study's kind with its 95% CI (Student's t) and n. Participants flagged for exclusion are "
        "left out unless --include-excluded."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--project")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--include-excluded", action="store_true")
        parser.add_argument(
            "--judge-server", default="", help="Judge open answers with this model server's model first."
        )
        parser.add_argument(
            "--rubric",
            default="egonight",
            choices=RUBRICS,
            help="egonight: correct/incorrect and 0-5 (seed 000 App. A.5.1); vudg: accuracy and relevance.",
        )
        parser.add_argument("--timeout", type=float, default=3600, help="Seconds to wait for the judge.")

    def handle(self, *args, **opts):
        study = study_named(opts["name"], opts["project"])
        if opts["judge_server"]:
            self._judge(study, opts)
        rows = score_table(study, include_excluded=opts["include_excluded"])
        waiting = unscored(study)
        if opts["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "study": study.name,
                        "kind": study.kind,
                        "include_excluded": opts["include_excluded"],
                        "unscored": waiting,
                        "rows": rows,
                    },
                    indent=1,
                )
            )
            return
        metrics = metrics_of(study.kind)
        self.stdout.write(
            f"{'condition':<28} {'subtask':<22} {'group':<15} {'respondent':<18} "
            + " ".join(f"{m[:18]:>18}" for m in metrics)
            + f" {'n':>5}"
        )
        for r in rows:
            cells = []
            for m in metrics:
                v = r["metrics"][m]
                cells.append(f"{'–' if v['mean'] is None else format(v['mean'], '.3f'):>18}")
            n = max(v["n"] for v in r["metrics"].values())
            self.stdout.write(
                f"{r['condition']['label'][:28]:<28} {r['subtask'][:22]:<22} {r['group'][:15]:<15} "
                f"{r['respondent'][:18]:<18} " + " ".join(cells) + f" {n:>5}"
            )
        if waiting:
            self.stdout.write(f"({waiting} responses are not scored yet)")

    def _judge(self, study, opts) -> None:
        if study.kind != "open_answer":
            raise CommandError(f"only open answers are judged; {study.name} is a {study.kind} study")
        answered = Trial.objects.filter(
            participant__study=study,
            practice=False,
            item__role=Item.Role.SCORED,
            answered_at__isnull=False,
            response__isnull=False,
        )
        total = answered.count()
        key = f"evaluation.judge_study:{study.pk}:{opts['judge_server']}:{opts['rubric']}"
        jobs.enqueue("evaluation.judge_study", study.pk, opts["judge_server"], opts["rubric"], key=key)
        job = Job.objects.get(key=key)
        out = self.stderr if opts["json"] else self.stdout

        def tick() -> Tick:
            job.refresh_from_db(fields=["status", "result", "error"])
            judged = answered.filter(scores__has_key="judge_accuracy").count()
            return Tick(
                job.status in (Job.Status.DONE, Job.Status.FAILED),
                f"  {judged}/{total} answers judged",
                n=judged,
                total=total,
            )

        wait_with_progress(
            tick,
            out=out,
            desc=f"judging {study.name}",
            unit="answer",
            timeout_s=opts["timeout"],
            on_timeout="timed out waiting for the judge: is a Celery worker running?",
        )
        if job.status == Job.Status.FAILED:
            raise CommandError(f"the judge could not run: {job.error}")
        result = json.loads(job.result or "{}")
        out.write(
            f"judged {result.get('judged', 0)} answers with {opts['judge_server']} ({opts['rubric']}), "
            f"{result.get('failed', 0)} failed"
        )
        for error in result.get("errors", []):
            self.stderr.write(f"  {error}")
