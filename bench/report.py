"""Benchmark report benchmark (issue 18): 100,000 people's trials plus 100,000 model predictions, split
by 3 fields, with 1,000-resample paired intervals and permutation tests, in under 5 s.

    .venv/bin/python bench/report.py [--trials 100000] [--predictions 100000] [--models 5] [--keys 20000]
                                     [--resamples 1000] [--smoke]

No stack needed: the report's statistics (``annotator.scoring.report``) and writers
(``annotator.reports.writers``) are pure Python; this times them on records shaped as
``annotator.reports.records.read`` gives them (the database read is not timed here).

Data, from a fixed seed: ``--keys`` QA pairs, each of one of 12 QA types, day or night, easy, medium
or hard; people's trials on random keys (accuracy 0/1, right with probability 0.7 by day, 0.5 at
night); ``--predictions`` spread over ``--models`` models, each answering distinct keys (right with
probability 0.4-0.6). The report splits by QA type, illumination and difficulty (72 cells and the
"all" row), every cell with the people and each model, and each model paired with the people.

Printed: seconds to build the records' columns, seconds for the report table (the target: under 5 s),
seconds for the JSON, CSV, Markdown and LaTeX writers, and the peak resident size (``ru_maxrss``).
``--smoke`` runs a small case (1,000 trials, 1,000 predictions, 100 resamples) and checks the output's
shape: ``make test`` runs it (tests/reports/test_bench.py).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# bench/ holds queue.py, which would shadow the standard library's ``queue``: drop this folder and put the
# repository first.
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

import numpy as np  # noqa: E402

from annotator.reports import writers  # noqa: E402
from annotator.scoring import report  # noqa: E402
from bench.lib.results import record  # noqa: E402

TARGET_S = 5.0
BY = ["qa_type", "illumination", "difficulty"]


def make_records(n_trials: int, n_predictions: int, n_models: int, n_keys: int, seed: int = 0) -> report.Records:
    rng = np.random.default_rng(seed)
    key_type = rng.integers(0, 12, n_keys)
    key_night = rng.random(n_keys) < 0.5
    key_diff = rng.integers(0, 3, n_keys)
    types = np.array([f"type_{i:02d}" for i in range(12)], dtype=object)
    illum = np.array(["day", "night"], dtype=object)
    diffs = np.array(["easy", "medium", "hard"], dtype=object)

    human_keys = rng.integers(0, n_keys, n_trials)
    p_right = np.where(key_night[human_keys], 0.5, 0.7)
    human_vals = (rng.random(n_trials) < p_right).astype(float)
    per_model = n_predictions // n_models
    model_keys = np.concatenate(
        [
            rng.permutation(n_keys)[:per_model] if per_model <= n_keys else rng.integers(0, n_keys, per_model)
            for _ in range(n_models)
        ]
    )
    model_names = np.repeat(np.array([f"model-{m}" for m in range(n_models)], dtype=object), per_model)
    model_p = np.repeat(np.linspace(0.4, 0.6, n_models), per_model)
    model_vals = (rng.random(model_keys.size) < model_p).astype(float)

    keys = np.concatenate([human_keys, model_keys])
    return report.Records(
        respondent=["human"] * n_trials + model_names.tolist(),
        key=[f"qa:{k}" for k in keys.tolist()],
        fields={
            "qa_type": types[key_type[keys]].tolist(),
            "illumination": illum[key_night[keys].astype(int)].tolist(),
            "difficulty": diffs[key_diff[keys]].tolist(),
        },
        values=np.concatenate([human_vals, model_vals]),
    )


def run(trials: int, predictions: int, models: int, keys: int, resamples: int) -> dict:
    t0 = time.perf_counter()
    records = make_records(trials, predictions, models, keys)
    t_records = time.perf_counter() - t0

    t0 = time.perf_counter()
    rows = report.table(records, by=BY, key="accuracy", seed=0, n_resamples=resamples)
    t_table = time.perf_counter() - t0

    m = report.metric("accuracy")
    table = {
        "title": "Report",
        "metric": "accuracy",
        "metric_words": m.words,
        "range": m.range,
        "by": BY,
        "by_words": ["QA type", "Illumination", "Difficulty"],
        "columns": list(rows[0]["cells"]),
        "rows": rows,
    }
    out = {
        **table,
        "tables": [table],
        "preset": None,
        "studies": [],
        "evaluations": [],
        "seed": 0,
        "n_resamples": resamples,
        "confidence": report.CONFIDENCE,
        "intervals": "bench",
    }
    t0 = time.perf_counter()
    texts = {fmt: writer(out) for fmt, writer in writers.FORMATS.items()}
    t_writers = time.perf_counter() - t0
    cells = len(set(zip(*(records.fields[f] for f in BY))))
    return {
        "cells": cells,
        "records_s": t_records,
        "table_s": t_table,
        "writers_s": t_writers,
        "rows": rows,
        "texts": texts,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--predictions", type=int, default=100_000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--smoke", action="store_true", help="A small case with checks (make test runs it).")
    args = parser.parse_args()
    if args.smoke:
        args.trials, args.predictions, args.models, args.keys, args.resamples = 1000, 1000, 2, 200, 100
    result = run(args.trials, args.predictions, args.models, args.keys, args.resamples)
    rows = result["rows"]
    print(
        f"report of {args.trials:,} trials + {args.predictions:,} predictions ({args.models} models, {args.keys:,} keys), "
        f"by {', '.join(BY)}: {len(rows)} rows, {args.resamples} resamples"
    )
    print(f"  records (columns)   {result['records_s']:.2f} s")
    print(f"  report table        {result['table_s']:.2f} s   (target < {TARGET_S:.0f} s)")
    print(f"  writers (4 formats) {result['writers_s']:.2f} s")
    print(f"  peak RSS            {result['peak_rss_mb']:.0f} MB")
    what = f"report of {args.trials:,} trials + {args.predictions:,} predictions, {args.resamples} resamples"
    record("report.py", f"{what}: table", result["table_s"], "s", smoke=args.smoke)
    record("report.py", f"{what}: peak resident memory", result["peak_rss_mb"], "MB", smoke=args.smoke)
    if args.smoke:
        # one row per split cell present (at most 12 types x 2 illuminations x 3 difficulties), and the "all" row.
        assert len(rows) == result["cells"] + 1, (len(rows), result["cells"])
        assert rows[-1]["split"] == {"qa_type": "all", "illumination": "all", "difficulty": "all"}
        assert rows[-1]["cells"]["human"]["n"] == args.trials
        assert sum(rows[-1]["cells"][f"model-{m}"]["n"] for m in range(args.models)) == args.predictions
        for row in rows:
            for cell in row["cells"].values():
                assert cell["ci"] is None or 0 <= cell["ci"][0] <= cell["ci"][1] <= 1
            for p in row["paired"].values():
                assert p["n"] == 0 or (p["p"] is None or 0 < p["p"] <= 1)
        assert set(json.loads(result["texts"]["json"])) >= {"rows", "metric", "by"}
        print("smoke: ok")
    return 0 if args.smoke or result["table_s"] < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
