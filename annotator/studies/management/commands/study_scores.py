"""python manage.py study_scores NAME [--json] [--include-excluded] [--project SLUG]"""

import json

from django.core.management.base import BaseCommand

from annotator.studies.commands import study_named
from annotator.studies.kinds import kind_module
from annotator.studies.selectors import score_table, unscored


class Command(BaseCommand):
    help = ("Per condition, subtask (QA type), Likert group and respondent (human, or a model name): the mean of every "
            "metric of the study's kind with its 95% CI (Student's t) and n. Participants flagged for exclusion are "
            "left out unless --include-excluded.")

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--project")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--include-excluded", action="store_true")

    def handle(self, *args, **opts):
        study = study_named(opts["name"], opts["project"])
        rows = score_table(study, include_excluded=opts["include_excluded"])
        waiting = unscored(study)
        if opts["json"]:
            self.stdout.write(json.dumps({"study": study.name, "kind": study.kind, "include_excluded": opts["include_excluded"],
                                          "unscored": waiting, "rows": rows}, indent=1))
            return
        metrics = kind_module(study.kind).METRICS
        self.stdout.write(f"{'condition':<28} {'subtask':<22} {'group':<15} {'respondent':<18} "
                          + " ".join(f"{m[:18]:>18}" for m in metrics) + f" {'n':>5}")
        for r in rows:
            cells = []
            for m in metrics:
                v = r["metrics"][m]
                cells.append(f"{'–' if v['mean'] is None else format(v['mean'], '.3f'):>18}")
            n = max(v["n"] for v in r["metrics"].values())
            self.stdout.write(f"{r['condition']['label'][:28]:<28} {r['subtask'][:22]:<22} {r['group'][:15]:<15} "
                              f"{r['respondent'][:18]:<18} " + " ".join(cells) + f" {n:>5}")
        if waiting:
            self.stdout.write(f"({waiting} responses are not scored yet)")
