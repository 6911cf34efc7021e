"""python manage.py study_create --project SLUG --kind ordering|mcq|open_answer|likert --name NAME [options]"""

import json
import re

from django.core.management.base import BaseCommand, CommandError

from annotator.adapters.ffmpeg import MediaError
from annotator.cli import Progress
from annotator.errors import Invalid
from annotator.projects.models import Project
from annotator.studies.kinds import KINDS
from annotator.studies.models import Item, Study
from annotator.studies.services import create_study, presets

_COUNTED = re.compile(r"(frames|clips): (\d+)/(\d+)")


def time_limits(text: str) -> list[float | None]:
    """``--time-limits 60,180`` -> [60.0, 180.0]; ``0`` or ``none`` is a condition without a limit."""
    out: list[float | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if part in ("0", "none", ""):
            out.append(None)
            continue
        try:
            out.append(float(part))
        except ValueError:
            raise CommandError(f"--time-limits: {part!r} is not a number of seconds") from None
    return out


class Command(BaseCommand):
    help = (
        "Build a human-baseline study of one kind from the project's data: ordering (frames or texts), mcq (timed "
        "multiple choice), open_answer (answers without drafts) or likert (1-5 ratings with control groups). "
        "Items are sampled per QA type from --seed; a failed build keeps nothing."
    )
    kind: str | None = None  # fixed by an alias (ordering_create)

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        if self.kind is None:
            parser.add_argument("--kind", required=True, choices=KINDS)
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--preset",
            default="",
            choices=["", *sorted(presets())],
            help="A paper's protocol: " + ", ".join(f"{n} ({k})" for n, (k, _) in sorted(presets().items())),
        )
        parser.add_argument("--per-type", type=int, metavar="N", help="Items sampled per QA type (subtask).")
        parser.add_argument("--qa-type", metavar="T[,T...]", help="mcq, open_answer, likert: only these QA types.")
        parser.add_argument(
            "--time-limits",
            type=time_limits,
            metavar="S[,S...]",
            help="Seconds per trial, one condition each (e.g. 60,180; 0 for none).",
        )
        parser.add_argument("--raters-per-item", type=int, metavar="K", help="At most K participants get each item.")
        parser.add_argument(
            "--independent",
            action="store_true",
            default=None,
            help="Refuse anyone who drafted, verified or double-checked one of its QA pairs (the default for mcq).",
        )
        parser.add_argument("--no-independent", dest="independent", action="store_false")
        parser.add_argument("--seed", type=int, default=0, help="Seed of every draw (recorded with the study).")
        parser.add_argument("--questions", type=int, metavar="N", help="Scored questions per participant.")
        parser.add_argument("--conditions-per-participant", type=int, metavar="N")
        parser.add_argument("--practice-items", type=int, metavar="N")
        parser.add_argument("--attention-items", type=int, metavar="N", help="mcq and likert: instructed items.")
        parser.add_argument("--frame-size", type=int, metavar="PX", help="ordering: square frame size (16-2048).")
        parser.add_argument("--source", choices=["qa", "records"], help="likert: rate QA pairs or records.")
        parser.add_argument(
            "--criteria",
            help="likert: comma-separated criteria (relevance, correctness, realism, contextual_consistency).",
        )
        parser.add_argument("--no-control-groups", action="store_true", help="likert: rate only the real QA pairs.")
        parser.add_argument(
            "--justify-below", type=int, metavar="S", help="likert: a score below S needs a justification."
        )
        parser.add_argument(
            "--exclude-median-rt-below",
            type=float,
            metavar="S",
            help="Flag participants whose median response time is under S seconds.",
        )
        parser.add_argument(
            "--exclude-practice-below",
            type=int,
            metavar="N",
            help="Flag participants with fewer than N practice items right.",
        )
        parser.add_argument(
            "--exclude-attention-failures-above",
            type=int,
            metavar="N",
            help="Flag participants who fail more than N attention checks.",
        )
        parser.add_argument("--skip-existing", action="store_true", help="Do nothing if the study exists.")
        parser.add_argument("--json", action="store_true", help='Print {"id", "name", "kind", "items"} only.')

    def handle(self, *args, **opts):
        kind = self.kind or opts["kind"]
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        existing = Study.objects.filter(project=project, name=opts["name"]).first()
        if existing is not None and opts["skip_existing"]:
            self._report(existing, opts, note=f"study {existing.name} already exists; nothing done")
            return
        options = {
            "per_type": opts["per_type"],
            "time_limits": opts["time_limits"],
            "raters_per_item": opts["raters_per_item"],
            "independent": opts["independent"],
            "questions_per_participant": opts["questions"],
            "conditions_per_participant": opts["conditions_per_participant"],
            "practice_items": opts["practice_items"],
            "attention_items": opts["attention_items"],
            "frame_size": opts["frame_size"],
            "source": opts["source"],
            "criteria": [c.strip() for c in opts["criteria"].split(",")] if opts["criteria"] else None,
            "control_groups": False if opts["no_control_groups"] else None,
            "justify_below": opts["justify_below"],
            "qa_types": [t.strip() for t in opts["qa_type"].split(",") if t.strip()] if opts["qa_type"] else None,
        }
        rules = {
            "min_median_rt_s": opts["exclude_median_rt_below"],
            "min_practice_score": opts["exclude_practice_below"],
            "max_attention_failures": opts["exclude_attention_failures_above"],
        }
        if any(v is not None for v in rules.values()):
            from annotator.studies.kinds import kind_module

            preset_rules = (kind_module(kind).PRESETS.get(opts["preset"]) or {}).get("exclusion") or {}
            options["exclusion"] = {**preset_rules, **{k: v for k, v in rules.items() if v is not None}}
        out = self.stderr if opts["json"] else self.stdout
        bar: dict[str, Progress] = {}

        def progress(line: str) -> None:
            # The kinds report "  frames: i/n" or "  clips: i/n" while cutting, and one line per condition.
            if counted := _COUNTED.search(line):
                what = counted[1]
                if what not in bar:
                    bar[what] = Progress(out, desc=what, unit=what[:-1])
                bar[what].show(line, int(counted[2]), int(counted[3]))
            else:
                out.write(line)

        try:
            study, report = create_study(
                project,
                opts["name"],
                kind,
                preset=opts["preset"],
                seed=opts["seed"],
                options=options,
                progress=progress,
            )
        except (Invalid, MediaError) as exc:
            raise CommandError(str(exc)) from None
        finally:
            for b in bar.values():
                b.close()
        skipped = "; ".join(f"{n} {r}" for r, n in report.skipped.items())
        self._report(
            study,
            opts,
            note=(
                f"study {study.name} ({study.kind}): {len(report.items)} conditions, {report.total} items, "
                f"{report.practice} practice items, {report.attention} attention items"
                + (f", {report.frames_written} frames written" if report.frames_written else "")
                + (f"; skipped: {skipped}" if skipped else "")
                + (
                    "; the exposure ledger keeps items from people who take both: "
                    + "; ".join(f"{n} items {what}" for what, n in report.exposure.items())
                    if report.exposure
                    else ""
                )
            ),
        )

    def _report(self, study: Study, opts: dict, *, note: str) -> None:
        items = Item.objects.filter(condition__study=study, role=Item.Role.SCORED).count()
        if opts["json"]:
            self.stderr.write(note)
            self.stdout.write(json.dumps({"id": study.pk, "name": study.name, "kind": study.kind, "items": items}))
        else:
            self.stdout.write(note)
