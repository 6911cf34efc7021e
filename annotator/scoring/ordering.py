"""Scores of one ordering response against the true order (EGO-FLIGHT, seed 003 Sec. 3.5 and App. D).

Pure Python: no Django. A *sequence* is a list of distinct element ids (frames or texts) in the
order given; ``truth`` is the chronological order. In hint conditions the pinned elements are
removed from both sequences first and only the non-hint elements are scored (seed 003 Sec. 4:
"metric evaluation was performed only on the two unsorted frames").

Metrics (each for one response):

- ``kendall_tau_b``: Kendall's tau-b between predicted and true positions (scipy.stats.kendalltau,
  variant "b"); 1 for the true order, -1 for the reversed order, about 0 for a random one. For a
  single element it is undefined (None).
- ``pairwise_accuracy``: share of element pairs whose relative order is right (n(n-1)/2 pairs).
- ``mean_abs_distance``: mean over elements of |predicted position - true position| (positions
  0-based; lower is better).
- ``lcs_ratio``: length of the longest common subsequence of the two sequences / n
  (RapidFuzz ``LCSseq``).
- ``edit_distance``: Levenshtein distance between the two sequences, in insertions, deletions
  and substitutions of elements (RapidFuzz ``Levenshtein``; lower is better).
- ``exact_match``: 1.0 if the sequences are equal, else 0.0.
- ``position_accuracy``: share of elements at their true position (X-LeBench summary ordering,
  seed 002 App. C.4, scores per-position accuracy).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

from rapidfuzz.distance import LCSseq, Levenshtein
from scipy import stats

METRICS = ("kendall_tau_b", "pairwise_accuracy", "mean_abs_distance", "lcs_ratio", "edit_distance", "exact_match",
           "position_accuracy")


class OrderingError(ValueError):
    """A response that is not an ordering of the item's elements; the message says why."""


@dataclass(frozen=True)
class OrderingScores:
    kendall_tau_b: float | None
    pairwise_accuracy: float | None
    mean_abs_distance: float
    lcs_ratio: float
    edit_distance: float
    exact_match: float
    position_accuracy: float

    def as_dict(self) -> dict:
        return asdict(self)


def check_ordering(predicted: Sequence, truth: Sequence) -> None:
    """Raise OrderingError unless ``predicted`` is a permutation of ``truth`` (distinct ids)."""
    if len(set(truth)) != len(truth):
        raise OrderingError("the true order repeats an element")
    if len(predicted) != len(truth):
        raise OrderingError(f"expected {len(truth)} elements, got {len(predicted)}")
    if set(predicted) != set(truth):
        missing, extra = set(truth) - set(predicted), set(predicted) - set(truth)
        raise OrderingError(f"not the item's elements (missing {sorted(missing, key=str)}, unknown {sorted(extra, key=str)})")


def without_hints(predicted: Sequence, truth: Sequence, hint_positions: Sequence[int]) -> tuple[list, list]:
    """Drop the elements pinned at ``hint_positions`` (1-based positions in the true order) from
    both sequences, keeping the relative order of the rest."""
    pinned = {truth[p - 1] for p in hint_positions}
    return [x for x in predicted if x not in pinned], [x for x in truth if x not in pinned]


def score(predicted: Sequence, truth: Sequence, hint_positions: Sequence[int] = ()) -> OrderingScores:
    """All metrics of one response. Raises OrderingError for a response that is not a permutation."""
    check_ordering(predicted, truth)
    if hint_positions:
        predicted, truth = without_hints(predicted, truth, hint_positions)
    n = len(truth)
    true_pos = {x: i for i, x in enumerate(truth)}
    ranks = [true_pos[x] for x in predicted]  # true position of the element shown at each predicted position
    if n >= 2:
        # Rounded to 12 places: scipy's floating arithmetic can give 0.9999999999999998 for a perfect order.
        tau = round(float(stats.kendalltau(range(n), ranks, variant="b").statistic), 12)
        pairs = list(combinations(range(n), 2))
        pairwise = sum(ranks[i] < ranks[j] for i, j in pairs) / len(pairs)
    else:
        tau = pairwise = None
    mad = sum(abs(i - r) for i, r in enumerate(ranks)) / n if n else 0.0
    return OrderingScores(
        kendall_tau_b=tau,
        pairwise_accuracy=pairwise,
        mean_abs_distance=mad,
        lcs_ratio=LCSseq.similarity(list(predicted), list(truth)) / n if n else 1.0,
        edit_distance=float(Levenshtein.distance(list(predicted), list(truth))),
        exact_match=1.0 if list(predicted) == list(truth) else 0.0,
        position_accuracy=sum(1 for i, r in enumerate(ranks) if i == r) / n if n else 1.0,
    )


def score_many(rows) -> list[dict]:
    """Scores of many responses: ``rows`` of (predicted, truth, hint_positions, timed_out); returns
    one dict of ``METRICS`` per row. A row with no response (None) or answered after the time limit
    is scored wrong: as the reversed true order, with no element at its true position and no exact
    match. Raises OrderingError for a response that is not a permutation of its truth."""
    out = []
    for predicted, truth, hints, timed_out in rows:
        if predicted is None or timed_out:
            free = [x for x in truth if x not in {truth[p - 1] for p in hints}] if hints else list(truth)
            worst = list(truth)
            slots = [i for i, x in enumerate(truth) if x in set(free)]
            for slot, x in zip(slots, reversed(free)):
                worst[slot] = x
            scores = score(worst, truth, hints).as_dict()
            scores.update(exact_match=0.0, position_accuracy=0.0)
        else:
            scores = score(predicted, truth, hints).as_dict()
        out.append(scores)
    return out


def shown_order(n: int, seed: int, hint_positions: Sequence[int] = ()) -> list[int]:
    """The order in which to show the elements of an n-element item: a uniformly random permutation
    of the true positions 0..n-1 drawn from ``seed`` (``random.Random(seed).shuffle``, Fisher-Yates),
    so every element is equally likely in every position across items, and the same seed always
    gives the same order (EGO-FLIGHT App. A: one recorded shuffle, reused for every person and
    model). Hint elements stay at their true positions (1-based ``hint_positions``); the others are
    shuffled among the remaining positions."""
    pinned = {p - 1 for p in hint_positions}
    free = [i for i in range(n) if i not in pinned]
    shuffled = free[:]
    random.Random(seed).shuffle(shuffled)
    it = iter(shuffled)
    return [i if i in pinned else next(it) for i in range(n)]


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> dict:
    """Mean, the ``confidence`` interval of the mean from Student's t (scipy.stats.t), and n.
    The interval is None for fewer than 2 values; identical values give a zero-width interval."""
    xs = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    n = len(xs)
    if n == 0:
        return {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    mean = sum(xs) / n
    if n < 2:
        return {"mean": mean, "ci_low": None, "ci_high": None, "n": n}
    sem = stats.sem(xs)
    if sem == 0:
        return {"mean": mean, "ci_low": mean, "ci_high": mean, "n": n}
    low, high = stats.t.interval(confidence, n - 1, loc=mean, scale=sem)
    return {"mean": mean, "ci_low": float(low), "ci_high": float(high), "n": n}
