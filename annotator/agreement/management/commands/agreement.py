"""``python manage.py agreement --ratings FILE.jsonl --level nominal|ordinal|interval|ratio [--json]
[--resamples N] [--seed S]``: inter-rater agreement of a ratings file, with bootstrap intervals.

Reads only the file (no database): one JSON object per line, ``{"item": str, "rater": str, "value":
number | string | null}``; a missing rating is a null value or an absent line; blank lines are
ignored. Prints every metric that applies (``annotator.scoring.agreement``); the reason each other
metric does not apply goes to stderr, one line per metric. A malformed line is reported on stderr
with its line number and the command exits with status 2, printing nothing on stdout. The file is
read a line at a time, at most ``RATINGS_MAX`` ratings (200,000, as the API): past that it is refused
at the first line over the limit, naming it, before reading on.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterable

from django.core.management.base import BaseCommand

from annotator.scoring.agreement import LEVELS, AgreementError, Ratings, agreement

MAX_RESAMPLES = 10_000
MAX_REPORTED = 20  # malformed lines listed before "... and N more"


def _resamples(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to {MAX_RESAMPLES}, got {text!r}") from None
    if not 0 <= n <= MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to {MAX_RESAMPLES}, got {n}")
    return n


def _seed(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {n}")
    return n


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _value(raw, level: str) -> tuple[object, str | None]:
    """(value or None for missing, problem in plain words or None)."""
    if raw is None:
        return None, None
    if isinstance(raw, bool):
        return None, f"the value {json.dumps(raw)} is a yes/no, not a rating"
    if isinstance(raw, (int, float)):
        try:
            finite = math.isfinite(float(raw))
        except OverflowError:
            finite = False
        return (raw, None) if finite else (None, "the value is not a finite number")
    if isinstance(raw, str):
        if level != "nominal":
            return None, f"the value {raw!r} is a text, but {level} ratings must be numbers"
        return raw, None
    return None, f"the value must be a number, a text or null, got {type(raw).__name__}"


def read_ratings(
    lines: Iterable[str], level: str, *, limit: int | None = None
) -> tuple[list[tuple[str, str, object]], list[str]]:
    """(item, rater, value) triples of a JSON-lines file, and its problems as "line N: ..." messages.

    ``lines`` is read one line at a time (a file object streams). ``limit`` (the agreement app's
    RATINGS_MAX by default): at most that many ratings; the file is refused with one problem naming
    the limit at the first rating past it, before reading further."""
    if limit is None:
        limit = _ratings_max()
    triples: list[tuple[str, str, object]] = []
    problems: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    count = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        count += 1
        if count > limit:
            return triples, [
                (
                    f"line {number}: more than {limit:,} ratings; a file holds at most {limit:,} "
                    "(split it, and store the parts as separate sets)"
                )
            ]
        try:
            row = json.loads(line, parse_constant=_refuse_constant)
        except ValueError as e:
            problems.append(f"line {number}: not valid JSON ({e})")
            continue
        if not isinstance(row, dict):
            problems.append(f"line {number}: expected a JSON object with item, rater and value")
            continue
        item, rater = row.get("item"), row.get("rater")
        bad = [k for k, v in (("item", item), ("rater", rater)) if not isinstance(v, str) or not v]
        if bad:
            problems.append(f"line {number}: {' and '.join(bad)} must be a non-empty text")
            continue
        value, problem = _value(row.get("value"), level)
        if problem:
            problems.append(f"line {number}: {problem}")
            continue
        if (item, rater) in seen:
            problems.append(f"line {number}: rater {rater!r} already rated item {item!r} on line {seen[(item, rater)]}")
            continue
        seen[(item, rater)] = number
        triples.append((item, rater, value))
    return triples, problems


def _ratings_max() -> int:
    """The rating set limit of ``annotator.agreement.services`` (imported late: the command needs
    no database unless it stores)."""
    from annotator.agreement.services.ratings import RATINGS_MAX

    return RATINGS_MAX


class Command(BaseCommand):
    help = (
        "Inter-rater agreement of a JSON-lines ratings file ({item, rater, value} per line): Krippendorff's "
        "alpha, percent agreement, Fleiss' and Cohen's kappa, Kendall's W, Gwet's AC1 and the ICC, each with a "
        "percentile-bootstrap interval over items. Needs no database."
    )
    requires_system_checks = ()  # reads a file only: no checks, no database

    def add_arguments(self, parser):
        parser.add_argument("--ratings", required=True, metavar="FILE.jsonl", help="One rating per line.")
        parser.add_argument("--level", required=True, choices=LEVELS, help="The level of measurement.")
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")
        parser.add_argument(
            "--resamples",
            type=_resamples,
            default=1000,
            help=f"Bootstrap resamples, 0 to {MAX_RESAMPLES} (default 1000; 0: no intervals).",
        )
        parser.add_argument("--seed", type=_seed, default=0, help="Seed of the bootstrap (default 0).")
        parser.add_argument(
            "--project",
            help="Also store the ratings as a rating set of this project (its scope "
            "ratings:NAME is then reported and shown with the others).",
        )
        parser.add_argument("--name", help="The rating set's name (a slug), with --project.")
        parser.add_argument(
            "--judge", action="store_true", help="The set is a model judge (rater 'judge') against human re-judges."
        )
        parser.add_argument("--replace", action="store_true", help="Replace a rating set of the same name.")

    def _fail(self, messages: list[str]):
        for message in messages[:MAX_REPORTED]:
            self.stderr.write(message)
        if len(messages) > MAX_REPORTED:
            self.stderr.write(f"... and {len(messages) - MAX_REPORTED} more malformed lines")
        raise SystemExit(2)  # not CommandError: that exits 1, and 2 means "the input is wrong"

    def handle(self, *args, **opts):
        level, path = opts["level"], opts["ratings"]
        if bool(opts.get("project")) != bool(opts.get("name")):
            self._fail(["--project and --name go together"])
        try:
            with open(path, encoding="utf-8") as f:
                triples, problems = read_ratings(f, level)
        except (OSError, UnicodeDecodeError) as e:
            self._fail([f"cannot read {path}: {e}"])
        if problems:
            self._fail([f"{path}: {p}" for p in problems])
        try:
            ratings = Ratings.from_triples(triples, level)
            results, reasons = agreement(ratings, n_resamples=opts["resamples"], seed=opts["seed"])
        except AgreementError as e:
            self._fail([f"{path}: {e}"])
        for name, reason in reasons.items():
            self.stderr.write(f"{name}: not computed: {reason}")
        out = {
            "n_items": len(ratings.items),
            "n_raters": len(ratings.raters),
            "level": level,
            "resamples": opts["resamples"],
            "seed": opts["seed"],
            "metrics": {
                name: {
                    "value": r.value,
                    "ci": list(r.ci) if r.ci else None,
                    "n_items": r.n_items,
                    "n_raters": r.n_raters,
                    "method": r.method,
                }
                for name, r in results.items()
            },
        }
        if opts.get("project"):
            self._store(opts, triples, level)
        if opts["json"]:
            self.stdout.write(json.dumps(out, indent=1))
            return
        self.stdout.write(
            f"{out['n_items']} items, {out['n_raters']} raters, {level} level; "
            f"{opts['resamples']} resamples, seed {opts['seed']}"
        )
        self.stdout.write(f"{'metric':<20} {'value':>8} {'95% interval':>20} {'items':>8} {'raters':>7}")
        for name, r in results.items():
            interval = f"[{r.ci[0]:.3f}, {r.ci[1]:.3f}]" if r.ci else "–"
            self.stdout.write(f"{name:<20} {r.value:>8.3f} {interval:>20} {r.n_items:>8} {r.n_raters:>7}")
        if results:
            self.stdout.write("\nHow each was computed:")
            for name, r in results.items():
                self.stdout.write(f"  {name}: {r.method}")

    def _store(self, opts, triples, level):
        """Store the ratings as rating set ``--name`` of ``--project`` and report its scope now."""
        from annotator.agreement import services
        from annotator.errors import DomainError
        from annotator.projects.models import Project

        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            self._fail([f"no project {opts['project']!r}"])
        rows = ({"item": i, "rater": r, "value": v} for i, r, v in triples)  # checked and written as they come
        try:
            rs = services.import_ratings(
                project,
                opts["name"],
                level,
                rows,
                replace=opts["replace"],
                source="judge" if opts["judge"] else "external",
            )
            services.compute(
                project, f"ratings:{rs.name}", trigger="command", n_resamples=opts["resamples"], seed=opts["seed"]
            )
        except DomainError as e:
            self._fail([f"not stored: {e}"])
        self.stderr.write(
            f"stored as rating set {rs.name!r} of {project.slug} ({len(triples)} ratings) and reported "
            f"as scope ratings:{rs.name}"
        )
