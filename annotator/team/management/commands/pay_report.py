"""python manage.py pay_report --project SLUG --from D --to D [--csv | --json]"""

import json

from django.core.management.base import BaseCommand

from annotator.team import pay
from annotator.team.management.commands._common import period_from, project_named


class Command(BaseCommand):
    help = (
        "What a project's rate pays each person over a period (days YYYY-MM-DD, both included, UTC): units, "
        "videos, active hours, amount and currency. --csv: CSV (cells guarded against spreadsheet formulas); "
        "--json: as GET /api/projects/{slug}/pay/. Set the rate with pay_rate or on the team page."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--from", dest="from", required=True, help="First day (YYYY-MM-DD).")
        parser.add_argument("--to", dest="to", required=True, help="Last day (YYYY-MM-DD), included.")
        out = parser.add_mutually_exclusive_group()
        out.add_argument("--csv", action="store_true", help="CSV: " + ", ".join(pay.CSV_COLUMNS) + ".")
        out.add_argument("--json", action="store_true", help="One JSON object.")

    def handle(self, *args, **opts):
        project = project_named(opts["project"])
        period, first, last = period_from(opts, required=True)
        data = {"project": project.slug, "from": first, "to": last, **pay.report(project, period)}
        if data["rate"] is None:
            self.stderr.write(f"{project.slug} has no pay rate: counts only, no amounts (set one with pay_rate)")
        if opts["csv"]:
            for line in pay.csv_lines(data):
                self.stdout.write(line, ending="")
            return
        if opts["json"]:
            self.stdout.write(json.dumps(data))
            return
        for line in text_lines(data):
            self.stdout.write(line)


def text_lines(data: dict) -> list[str]:
    """The report as a few lines of text (the demo prints these too)."""
    rate = data["rate"]
    lines = [
        f"pay report of {data['project']}, {data['from']} to {data['to']}: "
        + (f"{rate['amount']} {rate['currency']} {rate['basis_label']}" if rate else "no rate set")
    ]
    lines.append(f"{'user':>14} {'units':>6} {'videos':>6} {'active h':>9} {'amount':>12}")
    for p in data["people"]:
        amount = f"{p['amount']} {p['currency']}" if p["amount"] is not None else "-"
        lines.append(f"{p['user']:>14} {p['units']:>6} {p['videos']:>6} {p['active_hours']:>9} {amount:>12}")
    if data["total"]:
        lines.append(
            f"{'total':>14} {'':>6} {'':>6} {'':>9} {data['total']['amount'] + ' ' + data['total']['currency']:>12}"
        )
    return lines
