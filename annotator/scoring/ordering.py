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
from functools import lru_cache
from itertools import combinations

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import LCSseq, Levenshtein
from scipy import stats

METRICS = (
    "kendall_tau_b",
    "pairwise_accuracy",
    "mean_abs_distance",
    "lcs_ratio",
    "edit_distance",
    "exact_match",
    "position_accuracy",
)


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
        raise OrderingError(
            f"not the item's elements (missing {sorted(missing, key=str)}, unknown {sorted(extra, key=str)})"
        )


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
    """Scores of many responses at once: ``rows`` of (predicted, truth, hint_positions, timed_out);
    returns one dict of ``METRICS`` per row, in order, equal to ``score(...).as_dict()`` row by row.
    A row with no response (None) or answered after the time limit is scored wrong: as the reversed
    true order of its non-hint elements, with no element at its true position and no exact match.
    Raises OrderingError for a response that is not a permutation of its truth (the first found),
    a truth that repeats an element, or a hint position outside 1..n.

    Vectorised (issue 8: 100,000 trials in under 10 s):

    1. Each response becomes its *ranks*, the true position of the element at each predicted
       position (one dict look-up per element; the only per-row Python step).
    2. Rows are grouped by (n elements, hint positions); a group is one integer array, rows x n,
       in which a valid response is a permutation of 0..n-1 (checked for the whole group at once).
    3. Hint elements are dropped (their ranks, wherever a model put them) and the remaining ranks
       renumbered 0..k-1, so every metric compares a permutation with the identity.
    4. Pair counts, distances and positions are computed over the array (``_group_scores``).
    """
    rows = list(rows)  # kept for the call: the ids of its truths and hints stay unique
    groups: dict[tuple[int, tuple[int, ...]], tuple[list[int], list, list[bool]]] = {}
    # The trials of one item share its truth and hints objects: look them up once per item.
    items: dict[tuple[int, int], tuple[dict, tuple[int, tuple[int, ...]]]] = {}
    for i, (predicted, truth, hints, timed_out) in enumerate(rows):
        item = items.get((id(truth), id(hints)))
        if item is None:
            true_pos = {x: j for j, x in enumerate(truth)}
            if len(true_pos) != len(truth):
                raise OrderingError("the true order repeats an element")
            item = items[(id(truth), id(hints))] = (true_pos, (len(truth), tuple(sorted(set(hints or ())))))
        true_pos, key = item
        n = key[0]
        missed = predicted is None or bool(timed_out)
        if missed:
            ranks = range(n)  # a placeholder: the group replaces it with the worst order
        elif len(predicted) != n:
            check_ordering(predicted, truth)  # raises, saying why
        else:
            try:
                ranks = list(map(true_pos.__getitem__, predicted))
            except (KeyError, TypeError):  # an element that is not the item's
                check_ordering(predicted, truth)  # raises, saying why
                raise
        index, all_ranks, all_missed = groups.setdefault(key, ([], [], []))
        index.append(i)
        all_ranks.append(ranks)
        all_missed.append(missed)

    arrays = {}
    bad: list[int] = []
    for (n, pinned), (index, ranks, _) in groups.items():
        if any(not 1 <= p <= n for p in pinned):
            raise OrderingError(f"hint positions must be between 1 and {n}, got {list(pinned)}")
        r = np.array(ranks, dtype=np.int64).reshape(len(index), n)
        wrong = (np.sort(r, axis=1) != np.arange(n)).any(axis=1)
        bad += [index[j] for j in np.flatnonzero(wrong)]
        arrays[(n, pinned)] = r
    if bad:
        predicted, truth = rows[min(bad)][:2]
        check_ordering(predicted, truth)  # raises with the reason
        raise OrderingError("not a permutation of the item's elements")  # unreachable: check_ordering raised

    out: list[dict | None] = [None] * len(rows)
    for key, (index, _, missed) in groups.items():
        for i, scores in zip(index, _group_scores(arrays[key], key[1], np.array(missed, dtype=bool))):
            out[i] = scores
    return out


# Rows per block when comparing element pairs: keeps the rows x pairs boolean array near 4 MB.
_PAIR_BLOCK = 1 << 22


def _group_scores(ranks: np.ndarray, hint_positions: tuple[int, ...], missed: np.ndarray) -> list[dict]:
    """The metrics of one group: ``ranks`` (rows x n, each row a permutation of 0..n-1), the 1-based
    ``hint_positions`` to leave out, and which rows were ``missed`` (no answer in time)."""
    m, n = ranks.shape
    pinned = np.zeros(n, dtype=bool)
    pinned[[p - 1 for p in hint_positions]] = True
    k = n - int(pinned.sum())
    if pinned.any():
        renumber = np.cumsum(~pinned) - 1  # old rank -> rank among the free elements
        ranks = renumber[ranks[~pinned[ranks]].reshape(m, k)]
    ranks = ranks.copy()
    ranks[missed] = np.arange(k)[::-1]
    identity = np.arange(k)

    if k >= 2:
        concordant = _concordant_pairs(ranks)
        tot = k * (k - 1) // 2
        tau = np.array(_tau_b_table(k))[concordant].tolist()
        pairwise = (concordant / tot).tolist()
    else:
        tau = pairwise = [None] * m
    if k:
        at_place = (ranks == identity).sum(axis=1)
        mad = (np.abs(ranks - identity).sum(axis=1) / k).tolist()
        position = np.where(missed, 0.0, at_place / k).tolist()
        exact = np.where(missed | (at_place != k), 0.0, 1.0).tolist()
        # LCS and Levenshtein of the ranks against 0..k-1 equal those of the element sequences (the
        # relabelling is one-to-one); each row as a short string, one RapidFuzz call for the group.
        texts = (ranks + 65).astype(np.uint32).view(f"U{k}").ravel().tolist()
        truths = [_identity_text(k)] * m
        lcs = (process.cpdist(texts, truths, scorer=LCSseq.similarity, dtype=np.int64) / k).tolist()
        edit = process.cpdist(texts, truths, scorer=Levenshtein.distance, dtype=np.int64).astype(float).tolist()
    else:  # every element is a hint: nothing to order
        mad, lcs, edit = [0.0] * m, [1.0] * m, [0.0] * m
        position = exact = np.where(missed, 0.0, 1.0).tolist()
    return [dict(zip(METRICS, values)) for values in zip(tau, pairwise, mad, lcs, edit, exact, position)]


def _concordant_pairs(ranks: np.ndarray) -> np.ndarray:
    """Per row of ``ranks`` (rows x k, permutations), the number of position pairs i < j whose true
    positions are in the same order (ranks[i] < ranks[j])."""
    first, second = np.triu_indices(ranks.shape[1], 1)
    block = max(1, _PAIR_BLOCK // len(first))
    if not len(ranks):
        return np.zeros(0, dtype=np.int64)
    return np.concatenate(
        [(ranks[s : s + block, first] < ranks[s : s + block, second]).sum(axis=1) for s in range(0, len(ranks), block)]
    )


@lru_cache(maxsize=None)
def _tau_b_table(k: int) -> tuple[float, ...]:
    """Kendall's tau-b of a k-element permutation with c concordant pairs, for c = 0..k(k-1)/2.

    Tau-b is (P - Q) / sqrt((P + Q + T)(P + Q + U)) for P concordant and Q discordant pairs and T, U
    pairs tied in one ranking only (Kendall 1945, "The treatment of ties in ranking problems",
    Biometrika 33(3); scipy.stats.kendalltau's variant "b"). An ordering has no ties (T = U = 0), so
    it is (C - D) / (C + D) as EGO-FLIGHT writes it (seed 003 Sec. 3.5: "since all frames have
    distinct positions, the variant choice does not affect results"; other metrics in App. D), with
    C + D = tot = k(k-1)/2 pairs: (2c - tot) / tot. Rounded to 12 places, as ``score`` rounds scipy's
    value (which can be 0.9999999999999998 for a perfect order)."""
    tot = k * (k - 1) // 2
    return tuple(round((2 * c - tot) / tot, 12) for c in range(tot + 1))


@lru_cache(maxsize=None)
def _identity_text(k: int) -> str:
    return "".join(chr(65 + i) for i in range(k))


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
