"""Run every benchmark and put its figures on record (issue 22, section 6).

    .venv/bin/python bench/all.py [--smoke] [--only queue.py,export.py] [--results bench/results.json]

Each ``bench/*.py`` but this file (the helpers the benches share are in ``bench/lib/``) runs in
turn, at its default sizes (or with ``--smoke``), with ``BENCH_RESULTS`` naming the results file,
which is started afresh for a full run; with ``--only``, the chosen benches' earlier figures are
dropped from it and the other benches' kept, so the set can be brought up to date a few benches at a
time. Each records its headline figures there (``results.record``). Then the benchmarks page's
table of every figure and the README's of each bench's first are written from the file, between
their markers (``results.write_page``, ``results.write_readme``; not for a smoke run, whose figures
judge nothing). A bench that fails is reported at the end and the exit
status is 1; the others still run. ``make bench`` runs this: the full set takes hours at the default
sizes (the queue at 1M units is most of it)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bench.lib import results  # noqa: E402

NOT_BENCHES = {"all.py"}  # this runner


def benches() -> list[str]:
    """Every bench's file name, sorted."""
    return sorted(p.name for p in HERE.glob("*.py") if p.name not in NOT_BENCHES and not p.name.startswith("_"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="each bench's --smoke: seconds, tiny sizes")
    parser.add_argument("--only", default="", help="comma-separated bench file names (default: all)")
    parser.add_argument("--results", type=Path, default=HERE / "results.json")
    args = parser.parse_args()
    chosen = [b for b in args.only.split(",") if b] or benches()
    unknown = sorted(set(chosen) - set(benches()))
    if unknown:
        parser.error(f"no such bench: {', '.join(unknown)} (there are {', '.join(benches())})")
    if args.only:
        results.drop(args.results, chosen)
    else:
        args.results.unlink(missing_ok=True)
    failed = []
    for bench in chosen:
        started = time.monotonic()
        print(f"== {bench}{' --smoke' if args.smoke else ''}", flush=True)
        done = subprocess.run(
            [sys.executable, str(HERE / bench), *(["--smoke"] if args.smoke else [])],
            cwd=REPO,
            env={**os.environ, "BENCH_RESULTS": str(args.results.resolve())},
        )
        took = time.monotonic() - started
        if done.returncode != 0:
            failed.append(bench)
        print(f"== {bench}: {'failed' if done.returncode else 'done'} in {took:.0f} s", flush=True)
    figures = results.load(args.results)
    print(f"\n{len(figures)} figures in {args.results}")
    if not args.smoke:
        results.write_page(REPO / "docs" / "benchmarks.md", figures)
        results.write_readme(REPO / "README.md", figures)
        print(
            "docs/benchmarks.md (every figure) and README.md (each bench's first): their tables were written from them"
        )
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
