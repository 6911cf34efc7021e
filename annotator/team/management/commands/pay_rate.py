"""python manage.py pay_rate --project SLUG --per {video,unit,hour} --amount X --currency CUR [--count-gold ...]"""

import argparse

from django.core.management.base import BaseCommand

from annotator.errors import Invalid
from annotator.team import services
from annotator.team.management.commands._common import error, project_named


class Command(BaseCommand):
    help = (
        "Set a project's pay rate: an amount of a currency per video, per unit or per active hour, and which units "
        "count (real units always; gold by default; qualification not by default; a unit sent back for rework "
        "still counts, once, by default)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--per", required=True, choices=["video", "unit", "hour"], help="What is paid for.")
        parser.add_argument("--amount", required=True, help="The amount, at most 2 decimals (e.g. 20 or 12.50).")
        parser.add_argument("--currency", required=True, help="ISO 4217 code, e.g. EUR.")
        parser.add_argument("--count-gold", action=argparse.BooleanOptionalAction, default=True)
        parser.add_argument("--count-qualification", action=argparse.BooleanOptionalAction, default=False)
        parser.add_argument("--count-rework", action=argparse.BooleanOptionalAction, default=True)

    def handle(self, *args, **opts):
        project = project_named(opts["project"])
        try:
            rate = services.set_rate(
                project,
                basis=opts["per"],
                amount=opts["amount"],
                currency=opts["currency"],
                count_gold=opts["count_gold"],
                count_qualification=opts["count_qualification"],
                count_rework=opts["count_rework"],
            )
        except Invalid as exc:
            raise error(exc) from exc
        self.stdout.write(f"{project.slug}: {rate}")
