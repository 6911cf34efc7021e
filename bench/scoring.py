"""Ordering-score benchmark: how long scoring 100k trials takes.

    .venv/bin/python bench/scoring.py [--n 100000] [--frames 4]

Scores ``--n`` random responses (uniform permutations from a fixed seed) of ``--frames`` elements
with ``annotator.scoring.ordering.score`` (all six metrics; Kendall's tau-b through scipy), half of
them in a hint condition (frames 1 and 3 pinned), and prints the wall time and responses per second.
The database write (``experiments.services.score_pending``: one bulk UPDATE per 2,000 rows) is
not included.
"""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotator.scoring.ordering import score  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--frames", type=int, default=4)
    args = parser.parse_args()
    rng = random.Random(7)
    truth = list(range(args.frames))
    responses = []
    for _ in range(args.n):
        r = truth[:]
        rng.shuffle(r)
        responses.append(r)
    started = time.perf_counter()
    total_tau = 0.0
    for i, r in enumerate(responses):
        s = score(r, truth, (1, 3) if i % 2 and args.frames >= 4 else ())
        total_tau += s.kendall_tau_b or 0.0
    elapsed = time.perf_counter() - started
    print(f"scored {args.n} responses of {args.frames} elements in {elapsed:.2f} s "
          f"({args.n / elapsed:,.0f} per s); mean tau-b {total_tau / args.n:+.4f} (about 0 for random orders)")


if __name__ == "__main__":
    main()
