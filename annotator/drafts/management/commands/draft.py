"""python manage.py draft --project SLUG --pipeline templates|llm|egonight|vudg|egoexobench_checks|import
    [--server NAME] [--stage-server STAGE=NAME ...] [--qa-type T] [--file PATH] [--param KEY=VALUE ...]
    [--no-cache] [--json] [--no-wait]
python manage.py draft --project SLUG --resume RUN | --cancel RUN | --status RUN [--json]

Starts a pipeline run (or resumes, cancels or reports one) and shows its progress until it ends.
With --json, stdout holds only the run's final report (id, status, counts and calls per stage);
progress goes to stderr. Exit status 1 when any video failed, 2 for bad arguments.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import Tick, wait_with_progress
from annotator.drafts import runs
from annotator.drafts.models import DraftRun
from annotator.drafts.pipelines import PIPELINES
from annotator.errors import DomainError
from annotator.projects.models import Project

FINISHED = {DraftRun.Status.DONE, DraftRun.Status.FAILED, DraftRun.Status.CANCELLED}


def _pairs(values: list[str], what: str) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip() or not val.strip():
            raise CommandError(f"{what} must look like KEY=VALUE, not {value!r}")
        out[key.strip()] = val.strip()
    return out


def _param_value(text: str):
    """A --param value: JSON when it parses (numbers, true/false, lists), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class Command(BaseCommand):
    help = "Run a drafting pipeline over a project's videos (or resume, cancel or report a run), showing progress."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--pipeline", default="templates", choices=list(PIPELINES))
        parser.add_argument("--server", default="", help="Model server (see model_server) for every stage.")
        parser.add_argument(
            "--stage-server",
            action="append",
            default=[],
            metavar="STAGE=NAME",
            help="Server for one stage, overriding --server; repeatable.",
        )
        parser.add_argument(
            "--qa-type",
            default="",
            help="QA type (llm: the type asked for, default open_ended; egonight: only this type).",
        )
        parser.add_argument("--file", default="", help="JSONL file to read (import pipeline).")
        parser.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="A pipeline parameter (see docs/researcher.md); repeatable.",
        )
        parser.add_argument("--no-cache", action="store_true", help="Call the model even when a cached answer exists.")
        parser.add_argument("--resume", type=int, metavar="RUN", help="Queue a failed or cancelled run's videos again.")
        parser.add_argument("--cancel", type=int, metavar="RUN", help="Cancel a queued or running run.")
        parser.add_argument("--status", type=int, metavar="RUN", help="Report a run (no waiting).")
        parser.add_argument("--json", action="store_true", help="Print the run's report as JSON on stdout.")
        parser.add_argument("--no-wait", action="store_true", help="Queue the work and return.")
        parser.add_argument("--timeout", type=float, default=3600)

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        out = self.stderr if opts["json"] else self.stdout
        try:
            run = self._run(project, opts, out)
        except DomainError as exc:
            raise CommandError(str(exc)) from None
        if run is None:
            return
        if not opts["no_wait"] and opts["status"] is None and opts["cancel"] is None:
            self._wait(run, opts, out)
        run.refresh_from_db()
        report = runs.progress(run)
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self._summary(report)
        if report["status"] == DraftRun.Status.FAILED:
            raise SystemExit(1)

    def _run(self, project, opts, out):
        for action in ("status", "cancel", "resume"):
            if opts[action] is not None:
                run = DraftRun.objects.filter(project=project, pk=opts[action]).first()
                if run is None:
                    raise CommandError(f"project {project.slug} has no run {opts[action]}")
                if action == "cancel":
                    runs.cancel(run)
                    out.write(f"run {run.pk} cancelled")
                elif action == "resume":
                    n = runs.resume(run)
                    out.write(f"run {run.pk}: {n} videos queued again (stages that succeeded come from the cache)")
                return run
        params = {k: _param_value(v) for k, v in _pairs(opts["param"], "--param").items()}
        if opts["file"]:
            params["file"] = opts["file"]
        if opts["no_cache"]:
            params["cache"] = False
        launch = runs.start(
            project,
            opts["pipeline"],
            server=opts["server"],
            stage_servers=_pairs(opts["stage_server"], "--stage-server"),
            params=params,
            qa_type=opts["qa_type"],
        )
        skipped = ", ".join(f"{n} {why}" for why, n in launch.skipped.items()) or "none"
        if launch.run is None:
            out.write(f"nothing to draft; skipped: {skipped}")
            if opts["json"]:
                self.stdout.write(json.dumps({"run": None, "status": "nothing to do", "skipped": launch.skipped}))
            return None
        out.write(f"run {launch.run.pk} ({launch.run.pipeline}): {launch.queued} videos queued; skipped: {skipped}")
        return launch.run

    def _wait(self, run, opts, out):
        def poll():
            run.refresh_from_db(fields=["status"])
            p = runs.progress(run, failures=0)
            v = p["videos"]
            finished = v["done"] + v["failed"] + v["cancelled"]
            calls = sum(c["calls"] for c in p["calls"].values())
            stage = ", ".join(f"{s} {c['calls']}" for s, c in p["calls"].items())
            return Tick(
                run.status in FINISHED,
                f"  {finished}/{v['total']} videos done ({v['failed']} failed), {p['drafts']} drafts, "
                f"{calls} calls{f' ({stage})' if stage else ''}",
                n=finished,
                total=v["total"],
                note=f"{v['failed']} failed, {p['drafts']} drafts, {calls} calls",
            )

        wait_with_progress(
            poll,
            out=out,
            desc=f"run {run.pk}",
            unit="video",
            timeout_s=opts["timeout"],
            on_timeout="timed out waiting: is a Celery worker running?",
        )

    def _summary(self, report):
        self.stdout.write(
            f"run {report['run']} {report['status']}: {report['videos']['done']} videos done, "
            f"{report['videos']['failed']} failed, {report['drafts']} drafts, cost ${report['cost_usd']:.4f}"
        )
        for stage, c in report["calls"].items():
            self.stdout.write(f"  {stage}: {c['calls']} calls, {c['cache_hits']} from cache, {c['errors']} errors")
        for name, n in report["summary"].items():
            self.stdout.write(f"  {name}: {n}")
        for failure in report["failures"]:
            self.stderr.write(
                f"failed {failure['video']}"
                f"{' at stage ' + failure['stage'] if failure['stage'] else ''}: {failure['error']}"
            )
