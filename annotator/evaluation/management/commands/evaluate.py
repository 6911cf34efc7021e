"""python manage.py evaluate --project SLUG --server NAME [--model NAME] [--frames N] [--qa-type T]
    [--judge-server NAME] [--rubric egonight|vudg] [--ablation A] [--no-cache] [--json] [--no-wait] [--timeout S]
python manage.py evaluate --study NAME [--project SLUG] --server NAME [--frames N | --frames C=N,C=N] ...
python manage.py evaluate --project SLUG --status ID | --cancel ID [--json]

With --study, the model answers the study's scored items with what its participants got (the
recorded shuffles, the same options, each condition's frames) and its answers are stored as a
model participant of the study, scored by ``study_scores`` beside the people.

Evaluates a model on the project's verified QA pairs (multiple choice scored exactly, open answers
judged by an LLM) and shows progress until it ends, then the scores with 95% intervals broken down
by QA type, illumination, source and provenance. With --json, stdout holds only the evaluation's
report (``annotator.evaluation.selectors.report``); progress goes to stderr. Exit status 1 when
any item failed, 2 for bad arguments.
"""

import json

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

from annotator.cli import Tick, wait_with_progress
from annotator.errors import DomainError
from annotator.evaluation import runs, selectors, study_items
from annotator.evaluation.models import FRAMES_DEFAULT, Ablation, Evaluation, Rubric
from annotator.projects.models import Project
from annotator.studies.models import Study

FINISHED = {Evaluation.Status.DONE, Evaluation.Status.FAILED, Evaluation.Status.CANCELLED}


def _pct(score: dict) -> str:
    if not score["n"]:
        return "–"
    ci = score["ci"]
    return (
        f"{100 * score['value']:.1f}%" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "") + f" n={score['n']}"
    )


def _mean(score: dict) -> str:
    if not score["n"]:
        return "–"
    ci = score["ci"]
    return f"{score['value']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "") + f" n={score['n']}"


class Command(BaseCommand):
    help = "Evaluate a model on the project's verified QA pairs (or report or cancel an evaluation), showing progress."

    def add_arguments(self, parser):
        parser.add_argument(
            "--project", default="", help="The project (may be left out with --study if the name is unique)."
        )
        parser.add_argument(
            "--study", default="", help="Evaluate on this study's scored items, as its participants got them."
        )
        parser.add_argument(
            "--ablation",
            default="",
            choices=["", *[a for a in Ablation.values if a]],
            help="text_only, one_frame, shuffled_frames or no_hints: recorded, its own column in reports.",
        )
        parser.add_argument("--server", default="", help="The model server (see model_server) of the model evaluated.")
        parser.add_argument("--model", default="", help="The model evaluated (default: the server's).")
        parser.add_argument(
            "--frames",
            default=str(FRAMES_DEFAULT),
            help="Frames sampled evenly over each clip (1-64); with --study, C=N,C=N gives condition C "
            "N frames (time-limited conditions).",
        )
        parser.add_argument("--qa-type", default="", help="Only this QA type.")
        parser.add_argument(
            "--judge-server", default="", help="The judge's server, with its model (default: --server)."
        )
        parser.add_argument(
            "--rubric",
            default=Rubric.EGONIGHT,
            choices=Rubric.values,
            help="egonight: correct/incorrect and 0-5 (seed 000 App. A.5.1); vudg: accuracy and "
            "relevance 0-5 (seed 004 Sec. 3.4).",
        )
        parser.add_argument("--no-cache", action="store_true", help="Call the models even when a stored answer exists.")
        parser.add_argument("--status", type=int, metavar="ID", help="Report an evaluation (no waiting).")
        parser.add_argument("--cancel", type=int, metavar="ID", help="Cancel a queued or running evaluation.")
        parser.add_argument("--json", action="store_true", help="Print the evaluation's report as JSON on stdout.")
        parser.add_argument("--no-wait", action="store_true", help="Queue the work and return.")
        parser.add_argument("--timeout", type=float, default=3600)

    def handle(self, *args, **opts):
        if opts["study"] and not opts["project"]:
            found = list(Study.objects.filter(name=opts["study"]).select_related("project")[:2])
            if len(found) != 1:
                raise CommandError(
                    f"no study {opts['study']!r}"
                    if not found
                    else f"several projects have a study {opts['study']!r}: give --project"
                )
            opts["project"] = found[0].project.slug
        if not opts["project"]:
            raise CommandError("give --project (or --study)")
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        out = self.stderr if opts["json"] else self.stdout
        try:
            evaluation = self._evaluation(project, opts, out)
        except DomainError as exc:
            raise CommandError(str(exc)) from None
        if not opts["no_wait"] and opts["status"] is None and opts["cancel"] is None:
            self._wait(evaluation, opts, out)
        evaluation.refresh_from_db()
        report = selectors.report(evaluation)
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self._summary(report)
        if report["status"] == Evaluation.Status.FAILED:
            raise SystemExit(1)

    def _evaluation(self, project, opts, out) -> Evaluation:
        for action in ("status", "cancel"):
            if opts[action] is not None:
                evaluation = Evaluation.objects.filter(project=project, pk=opts[action]).first()
                if evaluation is None:
                    raise CommandError(f"project {project.slug} has no evaluation {opts[action]}")
                if action == "cancel":
                    runs.cancel(evaluation)
                    out.write(f"evaluation {evaluation.pk} cancelled")
                return evaluation
        if opts["study"]:
            study = Study.objects.filter(project=project, name=opts["study"]).first()
            if study is None:
                raise CommandError(f"project {project.slug} has no study {opts['study']!r}")
            evaluation = study_items.start(
                study,
                server=opts["server"],
                model=opts["model"],
                frames=opts["frames"],
                judge_server=opts["judge_server"],
                rubric=opts["rubric"],
                ablation=opts["ablation"],
                use_cache=not opts["no_cache"],
            )
        else:
            frames = opts["frames"].strip()
            if not frames.isdigit():
                raise CommandError(
                    f"--frames must be a whole number (condition=frames pairs need --study), not {frames!r}"
                )
            evaluation = runs.start(
                project,
                server=opts["server"],
                model=opts["model"],
                n_frames=int(frames),
                qa_type=opts["qa_type"],
                judge_server=opts["judge_server"],
                rubric=opts["rubric"],
                ablation=opts["ablation"],
                use_cache=not opts["no_cache"],
            )
        out.write(
            f"evaluation {evaluation.pk} of {evaluation.model}: {evaluation.predictions.count()} items queued "
            f"(judge {evaluation.judge_model}, {evaluation.n_frames} frames)"
        )
        return evaluation

    def _wait(self, evaluation, opts, out):
        def tick():
            evaluation.refresh_from_db(fields=["status"])
            counts = dict(evaluation.predictions.values_list("status").annotate(n=Count("id")))
            total, failed = sum(counts.values()), counts.get("failed", 0)
            finished = total - counts.get("queued", 0) - counts.get("running", 0)
            return Tick(
                evaluation.status in FINISHED,
                f"  {finished}/{total} items done ({failed} failed)",
                n=finished,
                total=total,
                note=f"{failed} failed",
            )

        wait_with_progress(
            tick,
            out=out,
            desc=f"evaluation {evaluation.pk}",
            unit="item",
            timeout_s=opts["timeout"],
            on_timeout="timed out waiting: is a Celery worker running?",
        )

    def _summary(self, r: dict):
        s = r["summary"]
        self.stdout.write(
            f"evaluation {r['id']} {r['status']}: {r['model']} judged by {r['judge_model']} ({r['rubric']}), "
            f"{r['items']['done']}/{r['items']['total']} items done, {r['items']['failed']} failed, "
            f"{r['calls']} calls, cost ${r['cost_usd']:.4f}"
        )
        self.stdout.write(f"  MCQ accuracy: {_pct(s['mcq'])}")
        self.stdout.write(f"  judged correct: {_pct(s['judge_accuracy'])}")
        self.stdout.write(f"  mean judge score (of {r['score_max']}): {_mean(s['judge_score'])}")
        for dim, groups in r["breakdown"].items():
            for g in groups:
                self.stdout.write(
                    f"  {dim}={g['value']}: MCQ {_pct(g['mcq'])}; judged correct {_pct(g['judge_accuracy'])}; "
                    f"score {_mean(g['judge_score'])}"
                )
        evaluation = Evaluation.objects.select_related("study", "participant").get(pk=r["id"])
        if evaluation.study_id:
            self.stdout.write(
                f"  answers stored as model participant {evaluation.participant.model!r} of study "
                f"{evaluation.study.name}: python manage.py study_scores {evaluation.study.name}, or "
                f"python manage.py report --project {evaluation.project.slug} --study {evaluation.study.name}"
            )
        for f in r["failures"]:
            self.stderr.write(
                f"failed item {f['prediction']} (QA {f['qa_pair']})"
                f"{' at ' + f['stage'] if f['stage'] else ''}: {f['error']}"
            )
