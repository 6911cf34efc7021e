"""``python manage.py agreement_report --project SLUG [--scope SCOPE] [--now] [--json]``: print the
latest stored agreement reports of a project's scopes; ``--now`` computes them first (in this
process, the same computation the Celery job runs)."""

import json

from django.core.management.base import BaseCommand, CommandError

from annotator.agreement import scopes, services
from annotator.agreement.models import Report
from annotator.errors import DomainError
from annotator.projects.models import Project


class Command(BaseCommand):
    help = "Print a project's latest agreement reports (--now: compute them first)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--scope", help="verification, study:<name> or ratings:<name> (default: every scope).")
        parser.add_argument("--now", action="store_true", help="Compute the reports first.")
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        key = opts.get("scope")
        try:
            if key:
                services.scope_for(project, key)
            if opts["now"]:
                for k in [key] if key else sorted(scopes.discover(project)):
                    if not opts["json"]:
                        self.stderr.write(f"computing {k} ...")
                    if services.compute(project, k, trigger="command") is None:
                        self.stderr.write(f"{k}: another computation of this scope is running; showing the last one")
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        out = []
        computations = services.latest(project, key)
        by_computation: dict[int, list[Report]] = {c.pk: [] for c in computations}
        for r in Report.objects.filter(computation__in=computations).order_by("subset", "metric", "level", "round"):
            by_computation[r.computation_id].append(r)
        for comp in computations:
            reports = by_computation[comp.pk]
            out.append(
                {
                    "scope": comp.scope.key,
                    "computed_at": comp.computed_at.isoformat(),
                    "trigger": comp.trigger,
                    "fingerprint": comp.fingerprint,
                    "seed": comp.seed,
                    "resamples": comp.n_resamples,
                    "seconds": comp.seconds,
                    "reports": [services.report_dict(r) for r in reports],
                    "skipped": comp.skipped,
                }
            )
        if opts["json"]:
            self.stdout.write(json.dumps({"project": project.slug, "scopes": out}))
            return
        if not out:
            self.stdout.write("No agreement reports yet (run with --now, or wait for the schedule).")
        for s in out:
            self.stdout.write(f"\n{s['scope']}  (computed {s['computed_at']}, {s['seconds']} s)")
            for r in s["reports"]:
                ci = "" if r["ci"][0] is None else f"  [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
                where = "/".join(x for x in (r["subset"], r["level"], r["round"] if r["round"] != "first" else "") if x)
                self.stdout.write(
                    f"  {r['metric']:<20} {where:<40} {r['value']:.4f}{ci}  "
                    f"n_items={r['n_items']} n_raters={r['n_raters']}"
                )
            for subset, why in s["skipped"].items():
                for metric, reason in why.items():
                    self.stdout.write(f"  (not measured: {subset or 'all'} {metric}: {reason})")
