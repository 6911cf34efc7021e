"""Agreement benchmark (issue 9): every metric with 1,000-resample intervals on 100,000 items x 5
raters in under 60 s and 1 GiB; point estimates alone in under 5 s.

    .venv/bin/python bench/agreement.py [--n 100000] [--raters 5] [--resamples 1000] [--semantic 2000]
                                        [--no-extra] [--smoke]

No stack needed: ``annotator.scoring.agreement`` is pure Python (``make bench-agreement``).

1. **Target data**, drawn from a fixed seed, about 5% of ratings missing:
   - nominal: 4 categories (shares 40/30/20/10%); each rater gives the item's category with
     probability 0.7, else a uniformly random one;
   - ordinal: a 1-5 Likert scale; each rater gives the item's score moved by -1, 0 or +1
     (probabilities 0.2/0.6/0.2) and, 5% of the time, by a further +-1, kept within 1-5.
   Per data set: seconds to build the ``Ratings`` from (item, rater, value) triples, as the Django
   side does; then per metric, seconds for the point estimate alone (``n_resamples=0``) and with
   intervals (``--resamples``), and one ``agreement`` call with every metric (the total).
2. **Extra** (``--no-extra`` skips): the same with 2 raters (Cohen's kappa applies) and an interval
   scale with 3-decimal values (every item its own pattern: the bootstrap's worst case; the ICC).
3. **Memory**: the process's peak resident size (``ru_maxrss``, imports included) after the target
   data, and tracemalloc's peak during one all-metrics call with intervals on each target data set.
4. **Semantic agreement**: model load time, then ``--semantic`` items x 3 free-text answers
   (sentences from templates, paraphrases and contradictions) with intervals.

Per data set the header line gives the items x raters, the ratings sent (triples with a value) and
the ratings the ``Ratings`` holds (its non-missing cells): the two must be equal.

``--smoke``: the same four data sets and the semantic part at 300 items x 5 raters, 50 resamples and
20 semantic items, then checks: every data set holds every rating sent, exactly the metrics that
apply to its level and rater count give a value (in its range, with an interval, lower <= upper),
the others say why not; exits 1 on a failed check, else prints ``smoke: ok`` (``make test`` runs
it: tests/agreement/test_bench_agreement.py). The encoder's load dominates its time.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# bench/ holds queue.py, which would shadow the standard library's ``queue``: drop this folder (sys.path[0]
# when run as a script) and put the repository first.
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

import numpy as np

from annotator.scoring import agreement as ag
from bench.lib.results import record  # noqa: E402

MISSING = 0.05


# ------------------------------------------------------------------------------ synthetic data


def nominal_triples(n: int, raters: int, rng: np.random.Generator) -> list[tuple[str, str, object]]:
    categories = np.array(["person", "object", "place", "other"])
    truth = rng.choice(4, size=n, p=[0.4, 0.3, 0.2, 0.1])
    given = np.where(rng.random((n, raters)) < 0.7, truth[:, None], rng.integers(0, 4, size=(n, raters)))
    return _triples(categories[given].astype(object), rng)


def likert_triples(n: int, raters: int, rng: np.random.Generator) -> list[tuple[str, str, object]]:
    truth = rng.integers(1, 6, size=n)
    step = rng.choice([-1, 0, 1], size=(n, raters), p=[0.2, 0.6, 0.2])
    step += np.where(rng.random((n, raters)) < 0.05, rng.choice([-1, 1], size=(n, raters)), 0)
    return _triples(np.clip(truth[:, None] + step, 1, 5).astype(object), rng)


def interval_triples(n: int, raters: int, rng: np.random.Generator) -> list[tuple[str, str, object]]:
    truth = rng.normal(50, 15, size=n)
    return _triples(np.round(truth[:, None] + rng.normal(0, 8, size=(n, raters)), 3).astype(object), rng)


def _triples(values: np.ndarray, rng: np.random.Generator) -> list[tuple[str, str, object]]:
    """(item, rater, value) per cell, None for about MISSING of them (Python values, as from JSON)."""
    n, raters = values.shape
    missing = rng.random((n, raters)) < MISSING
    items = [f"item-{i:06d}" for i in range(n)]
    names = [f"rater-{j}" for j in range(raters)]
    rows = values.tolist()
    return [
        (
            items[i],
            names[j],
            None if missing[i, j] else (v if isinstance(v, str) else float(v) if isinstance(v, float) else int(v)),
        )
        for i, row in enumerate(rows)
        for j, v in enumerate(row)
    ]


SUBJECTS = ["The man", "A woman", "The child", "The cook", "A person", "The student"]
VERBS = [
    ("opens", "closes"),
    ("picks up", "puts down"),
    ("turns on", "turns off"),
    ("fills", "empties"),
    ("washes", "dries"),
    ("lifts", "drops"),
]
THINGS = ["the fridge", "a cup", "the lamp", "the kettle", "a plate", "the window", "a bottle", "the drawer"]
PLACES = [
    "in the kitchen",
    "near the sink",
    "by the table",
    "at the counter",
    "in the hallway",
    "next to the door",
    "beside the stove",
    "in the living room",
]
WHEN = ["first", "then", "quickly", "slowly", "again", "carefully", "at the start", "at the end", "twice", "once"]
UNRELATED = [
    "Blue sky over the sea.",
    "A dog runs in the park.",
    "Traffic is heavy downtown.",
    "The match ended in a draw.",
    "Snow covers the mountains.",
]


def semantic_answers(n: int, rng: np.random.Generator) -> list[list[str]]:
    """n items x 3 answers: a sentence, then per answer a paraphrase (60%), a contradiction (25%) or an
    unrelated sentence (15%), each with its own place and manner (so most texts are distinct)."""

    def pick(options):
        return options[rng.integers(len(options))]

    items = []
    for _ in range(n):
        s, v, t = rng.integers(len(SUBJECTS)), rng.integers(len(VERBS)), rng.integers(len(THINGS))
        answers = [f"{SUBJECTS[s]} {pick(WHEN)} {VERBS[v][0]} {THINGS[t]} {pick(PLACES)}."]
        for luck in rng.random(2):
            if luck < 0.6:
                answers.append(
                    f"{SUBJECTS[(s + 4) % len(SUBJECTS)]} {pick(WHEN)} {VERBS[v][0]} {THINGS[t]} {pick(PLACES)}."
                )
            elif luck < 0.85:
                answers.append(f"{SUBJECTS[s]} {pick(WHEN)} {VERBS[v][1]} {THINGS[t]} {pick(PLACES)}.")
            else:
                answers.append(f"{pick(UNRELATED)[:-1]} {pick(PLACES)}.")
        items.append(answers)
    return items


# ------------------------------------------------------------------------------ timing

SMOKE_N, SMOKE_SEMANTIC = 300, 20
# The metrics that give a value, per data set (the others do not apply: ag.agreement says why).
APPLIES = {
    "nominal": {"krippendorff_alpha", "percent_agreement", "fleiss_kappa", "gwet_ac1"},
    "ordinal": {"krippendorff_alpha", "percent_agreement", "fleiss_kappa", "kendall_w", "gwet_ac1"},
    "nominal, 2 raters": {"krippendorff_alpha", "percent_agreement", "fleiss_kappa", "cohen_kappa", "gwet_ac1"},
    "interval, 3 decimals": {"krippendorff_alpha", "percent_agreement", "kendall_w", "icc"},
}


def timed(f, *args, **kwargs):
    start = time.perf_counter()
    result = f(*args, **kwargs)
    return time.perf_counter() - start, result


def bench_data(label: str, triples, level: str, resamples: int) -> dict:
    build, ratings = timed(ag.Ratings.from_triples, triples, level)
    rows = []
    for name in ag.METRICS:
        point_s, (point, reasons) = timed(ag.agreement, ratings, n_resamples=0, metrics=[name])
        if name not in point:
            rows.append((name, None, None, None, reasons[name]))
            continue
        full_s, (full, _) = timed(ag.agreement, ratings, n_resamples=resamples, metrics=[name])
        rows.append((name, point_s, full_s, full[name], None))
    total_point, _ = timed(ag.agreement, ratings, n_resamples=0)
    total_full, _ = timed(ag.agreement, ratings, n_resamples=resamples)
    print(f"  {label}: done", file=sys.stderr, flush=True)
    return {
        "label": label,
        "ratings": ratings,
        "build": build,
        "rows": rows,
        "total_point": total_point,
        "total_full": total_full,
        "n_ratings": sum(1 for t in triples if t[2] is not None),
        "n_held": int((~np.isnan(ratings.values)).sum()),
    }


def traced_peak(ratings, resamples: int) -> float:
    """MiB: tracemalloc's peak during one all-metrics call with intervals (numpy reports its buffers)."""
    tracemalloc.start()
    try:
        ag.agreement(ratings, n_resamples=resamples)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def print_data(result: dict, resamples: int) -> None:
    print(
        f"{result['label']}: {len(result['ratings'].items):,} items x {len(result['ratings'].raters)} raters, "
        f"{result['n_ratings']:,} ratings sent, {result['n_held']:,} held; Ratings.from_triples {result['build']:.2f} s"
    )
    print(
        f"  {'metric':<20} {'point s':>8} {'+' + format(resamples, ',') + ' resamples s':>20} {'value':>8} "
        f"{'95% interval':>18} {'items':>8}"
    )
    for name, point_s, full_s, r, reason in result["rows"]:
        if r is None:
            print(f"  {name:<20} {'-':>8} {'-':>20}   (does not apply: {reason})")
            continue
        interval = f"[{r.ci[0]:.4f}, {r.ci[1]:.4f}]" if r.ci else "-"
        print(f"  {name:<20} {point_s:>8.2f} {full_s:>20.2f} {r.value:>8.4f} {interval:>18} {r.n_items:>8,}")
    sum_point = sum(p for _, p, _, r, _ in result["rows"] if r is not None)
    sum_full = sum(f for _, _, f, r, _ in result["rows"] if r is not None)
    print(f"  {'sum of the metrics':<20} {sum_point:>8.2f} {sum_full:>20.2f}")
    print(f"  {'one call, all':<20} {result['total_point']:>8.2f} {result['total_full']:>20.2f}")


def smoke_problems(results: list[dict], semantic, args) -> list[str]:
    """What the smoke run got wrong, in words (nothing: it passed)."""
    problems = []
    if [r["label"] for r in results] != list(APPLIES):
        problems.append(f"data sets {[r['label'] for r in results]}, expected {list(APPLIES)}")
    for r in results:
        label, ratings = r["label"], r["ratings"]
        raters = 2 if label == "nominal, 2 raters" else args.raters
        if (len(ratings.items), len(ratings.raters)) != (args.n, raters):
            problems.append(
                f"{label}: {len(ratings.items)} items x {len(ratings.raters)} raters, expected {args.n} x {raters}"
            )
        if r["n_held"] != r["n_ratings"] or not 0.9 * args.n * raters < r["n_ratings"] < args.n * raters:
            problems.append(f"{label}: {r['n_ratings']} ratings sent, {r['n_held']} held")
        rated = (~np.isnan(ratings.values)).sum(axis=1)
        # A metric takes the complete items (Fleiss, Kendall's W, the ICC), those with 2 ratings or more,
        # or every item with a rating: never other counts.
        enterable = {int((rated == raters).sum()), int((rated >= 2).sum()), int((rated >= 1).sum())}
        given = {name for name, _, _, result, _ in r["rows"] if result is not None}
        if given != APPLIES[label]:
            problems.append(f"{label}: values for {sorted(given)}, expected {sorted(APPLIES[label])}")
        for name, _, _, result, reason in r["rows"]:
            if result is None:
                if not reason:
                    problems.append(f"{label}: {name} gives no value and no reason")
                continue
            low = -1.0 if name in ("krippendorff_alpha", "fleiss_kappa", "cohen_kappa", "gwet_ac1", "icc") else 0.0
            if not (
                low <= result.value <= 1
                and result.ci
                and low <= result.ci[0] <= result.ci[1] <= 1
                and result.n_items in enterable
            ):
                problems.append(f"{label}: {name} = {result.value} {result.ci} on {result.n_items} items")
    if semantic is None:
        problems.append("no semantic agreement")
    else:
        result = semantic[3]
        if not (0 <= result.value <= 1 and 0 <= result.ci[0] <= result.ci[1] <= 1 and result.n_items == args.semantic):
            problems.append(f"semantic agreement {result.value} {result.ci} on {result.n_items} items")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="items (default 100,000)")
    parser.add_argument("--raters", type=int, default=5, help="raters (default 5)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1,000)")
    parser.add_argument("--semantic", type=int, default=2000, help="items for semantic agreement (0: skip)")
    parser.add_argument("--no-extra", action="store_true", help="skip the 2-rater and interval-scale data")
    parser.add_argument("--smoke", action="store_true", help="a small case with checks (make test runs it)")
    args = parser.parse_args()
    if args.smoke:
        args.n, args.raters, args.resamples, args.semantic, args.no_extra = SMOKE_N, 5, 50, SMOKE_SEMANTIC, False
    rng = np.random.default_rng(20261124)

    target = [
        bench_data("nominal", nominal_triples(args.n, args.raters, rng), "nominal", args.resamples),
        bench_data("ordinal", likert_triples(args.n, args.raters, rng), "ordinal", args.resamples),
    ]
    rss_target = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    traced = {r["label"]: traced_peak(r["ratings"], args.resamples) for r in target}
    extra = []
    if not args.no_extra:
        extra = [
            bench_data("nominal, 2 raters", nominal_triples(args.n, 2, rng), "nominal", args.resamples),
            bench_data("interval, 3 decimals", interval_triples(args.n, args.raters, rng), "interval", args.resamples),
        ]
    rss_extra = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    semantic = None
    if args.semantic:
        load_s, _ = timed(ag.load_encoder)
        answers = semantic_answers(args.semantic, rng)
        texts = len({t for a in answers for t in a})
        run_s, (result, _) = timed(ag.semantic_agreement, answers, n_resamples=args.resamples)
        semantic = (load_s, texts, run_s, result)
        record(
            "agreement.py",
            f"semantic agreement, {args.semantic:,} items x 3 answers, {args.resamples:,} resamples",
            run_s,
            "s",
            smoke=args.smoke,
        )

    print(
        f"\nAgreement, {args.resamples:,} bootstrap resamples, about {MISSING:.0%} of ratings missing "
        f"(target at 100,000 x 5: every metric with intervals under 60 s and 1 GiB; point estimates under 5 s)\n"
    )
    for r in target + extra:
        print_data(r, args.resamples)
        print()
        size = f"{r['label']}, {len(r['ratings'].items):,} items x {len(r['ratings'].raters)} raters"
        record(
            "agreement.py",
            f"all metrics with {args.resamples:,} resamples, {size}",
            r["total_full"],
            "s",
            smoke=args.smoke,
        )
        record("agreement.py", f"all metrics, point estimates, {size}", r["total_point"], "s", smoke=args.smoke)
    record("agreement.py", "peak resident memory after the target data", rss_target, "MiB", smoke=args.smoke)
    print(
        f"peak resident memory (ru_maxrss, whole process, imports included): {rss_target:,.0f} MiB after the "
        f"target data" + (f", {rss_extra:,.0f} MiB after the extra data" if extra else "")
    )
    print(
        "tracemalloc peak of one all-metrics call with intervals: "
        + ", ".join(f"{label} {mib:,.0f} MiB" for label, mib in traced.items())
    )
    if semantic:
        load_s, texts, run_s, result = semantic
        print(
            f"\nsemantic agreement: model load {load_s:.2f} s; {args.semantic:,} items x 3 answers ({texts:,} "
            f"distinct texts, one encode call) with {args.resamples:,} resamples {run_s:.2f} s; value "
            f"{result.value:.4f} [{result.ci[0]:.4f}, {result.ci[1]:.4f}]"
        )
    if args.smoke:
        problems = smoke_problems(target + extra, semantic, args)
        if problems:
            sys.exit("smoke: FAILED\n" + "\n".join(problems))
        print("\nsmoke: ok")
    if args.n == 100_000 and args.raters == 5 and args.resamples == 1000:
        worst_full = max(r["total_full"] for r in target)
        worst_point = max(r["total_point"] for r in target)
        ok = worst_full < 60 and worst_point < 5 and rss_target < 1024
        print(
            f"\nslowest target data set: {worst_full:.2f} s with intervals, {worst_point:.2f} s point estimates; "
            f"peak {rss_target:,.0f} MiB ({'meets' if ok else 'MISSES'} the target)"
        )


if __name__ == "__main__":
    main()
