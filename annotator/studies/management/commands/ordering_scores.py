"""python manage.py ordering_scores NAME [--json] [--include-excluded] [--project SLUG]"""

import json

from django.core.management.base import BaseCommand

from annotator.experiments.commands import experiment_named
from annotator.experiments.selectors import score_table, unscored
from annotator.scoring.ordering import METRICS


class Command(BaseCommand):
    help = ("For each condition and respondent kind (human, or a model name): the mean of every metric with "
            "its 95% CI and n. Humans flagged for exclusion are left out unless --include-excluded.")

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--project")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--include-excluded", action="store_true")

    def handle(self, *args, **opts):
        experiment = experiment_named(opts["name"], opts["project"])
        rows = score_table(experiment, include_excluded=opts["include_excluded"])
        waiting = unscored(experiment)
        if opts["json"]:
            self.stdout.write(json.dumps({"experiment": experiment.name, "unscored": waiting, "rows": rows}, indent=1))
            return
        self.stdout.write(f"{'condition':<32} {'respondent':<20} " + " ".join(f"{m:>18}" for m in METRICS) + f" {'n':>5}")
        for r in rows:
            cells = []
            for m in METRICS:
                v = r["metrics"][m]
                cells.append(f"{'–' if v['mean'] is None else format(v['mean'], '.3f'):>18}")
            n = r["metrics"]["edit_distance"]["n"]
            self.stdout.write(f"{r['condition']['label'][:32]:<32} {r['respondent'][:20]:<20} " + " ".join(cells) + f" {n:>5}")
        if waiting:
            self.stdout.write(f"({waiting} responses are not scored yet)")
