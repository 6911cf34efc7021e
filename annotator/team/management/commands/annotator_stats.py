"""python manage.py annotator_stats --project SLUG [--from D --to D] [--json]"""

import json

from django.core.management.base import BaseCommand

from annotator.team import stats
from annotator.team.management.commands._common import period_from, project_named


def _num(value, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and unit == "%":
        return f"{100 * value:.1f}%"
    return f"{value}{unit}"


class Command(BaseCommand):
    help = (
        "Per-annotator figures of a project over a period (days YYYY-MM-DD, both included, UTC; all time "
        "without): units and QA pairs decided (real units), active time (heartbeats with idle gaps removed), "
        "time per unit, gold accuracy, override rate, agreement with overlap peers, rework rate. --json prints "
        '{"annotators": [...]}, as GET /api/projects/{slug}/annotators/.'
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--from", dest="from", help="First day (YYYY-MM-DD).")
        parser.add_argument("--to", dest="to", help="Last day (YYYY-MM-DD), included.")
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")

    def handle(self, *args, **opts):
        project = project_named(opts["project"])
        period, first, last = period_from(opts, required=False)
        data = stats.annotators(project, period)
        if opts["json"]:
            self.stdout.write(json.dumps(data))
            return
        self.stdout.write(f"{project.slug}: {first or 'the start'} to {last or 'today'}")
        header = ("user", "units", "QA pairs", "active", "s/unit", "gold", "override", "agreement", "rework")
        self.stdout.write("  ".join(f"{h:>10}" for h in header))
        for r in data["annotators"]:
            gold = r["gold_accuracy"]["value"]
            cells = (
                r["user"],
                r["units"],
                r["qa_pairs"],
                f"{r['active_s'] / 60:.1f} min",
                _num(r["time_per_unit_s"]),
                _num(gold, "%"),
                _num(r["override_rate"], "%"),
                _num(r["agreement"], "%"),
                _num(r["rework_rate"], "%"),
            )
            self.stdout.write("  ".join(f"{c!s:>10}" for c in cells))
