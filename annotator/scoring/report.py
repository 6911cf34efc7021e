"""The benchmark report's statistics (issue 18, part 5): humans beside models per split cell, each
with a 95% interval, and a paired comparison. Pure Python and numpy: no Django.

Inputs are flat *records*, given column-wise (``Records``): who answered (``respondent``: ``"human"``
or a model's column name), the pairing key (what was answered: the same key for a person and a model
means the same question), the split fields (``fields``: name -> one value per record) and the
metric's value (``values``, float; NaN where the record has none).

Per split cell and respondent (``summarise``): the mean over the records, n, and a 95% interval
clipped to the metric's range (``METRICS``):

- metrics whose values are 0 or 1 (accuracy, exact match, judged correct) get the Wilson score
  interval (Wilson 1927), which stays inside [0, 1] and is not empty at 0% or 100%;
- other metrics get Student's t interval of the mean (mean ± t(0.975, n-1) · s / sqrt(n); scipy
  ``stats.t``), clipped to the metric's range: with few values t reaches past the scale (tau-b of
  two trials "[-1.84, 1.84]", the fault issue 18 reports), and a mean cannot. None for n < 2; a
  zero-width interval when every value is the same.

Paired comparison (``paired``): on the keys both the people and the model answered, the per-key
difference d_i = h_i - m_i, where h_i is the mean over the people who answered key i (and m_i the
model's mean, if it answered the key more than once). Reported: the mean difference, its 95%
percentile bootstrap interval (Efron & Tibshirani 1993, ch. 13: keys drawn with replacement,
``n_resamples`` resamples from ``numpy.random.default_rng(seed)``, the same draws as
``scipy.stats.bootstrap(..., method="percentile")`` with that generator), clipped to the difference's
range, and the two-sided p-value of a paired permutation test (sign flips of the d_i, as
``scipy.stats.permutation_test(permutation_type="samples")`` does for one sample: exact over all
2^n sign vectors when 2^n <= n_resamples, else ``n_resamples`` random flips from
``default_rng([seed, 1])`` with the (count + 1) / (resamples + 1) correction of Phipson & Smyth 2010).

Cost: the bootstrap and the flips are chunked matrix operations, O(n_resamples · n) for n keys with
at most ``_CHUNK_CELLS`` numbers in memory at once (issue 18: 100,000 trials plus 100,000
predictions with 1,000 resamples in under 5 s, ``bench/report.py``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

HUMAN = "human"
CONFIDENCE = 0.95
N_RESAMPLES = 1000
_CHUNK_CELLS = 1 << 22  # resamples x keys drawn at once (32 MB of int64)
_DIGITS = re.compile(r"(\d+)")


@dataclass(frozen=True)
class Metric:
    """A metric as people read it: ``words`` (the header), its range ``low``..``high`` (None: no
    bound), whether its values are 0/1 (``binary``: Wilson intervals) and whether ``higher`` is better."""

    key: str
    words: str
    low: float | None
    high: float | None
    binary: bool = False
    higher: bool = True

    @property
    def range(self) -> list[float | None]:
        return [self.low, self.high]


# Every metric a report, a results page or an evaluation page names, in words, with its range.
# Sources: ordering metrics, EGO-FLIGHT (seed 003 Sec. 3.5, App. D) and X-LeBench (seed 002 App. C.4);
# multiple choice, EgoExoBench and VUDG accuracy; judge scores, EgoNight (seed 000 App. A.5.1, 0-5)
# and VUDG (seed 004 Sec. 3.4, accuracy 0-5 + relevance 0-5); Likert ratings 1-5 (seed 002 App. D,
# seed 004 Sec. 4.5).
METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        Metric("kendall_tau_b", "Kendall's tau-b", -1.0, 1.0),
        Metric("pairwise_accuracy", "Pairwise accuracy", 0.0, 1.0),
        Metric("mean_abs_distance", "Mean absolute distance (positions)", 0.0, None, higher=False),
        Metric("lcs_ratio", "Longest-common-subsequence ratio", 0.0, 1.0),
        Metric("edit_distance", "Edit distance (elements)", 0.0, None, higher=False),
        Metric("exact_match", "Exact match", 0.0, 1.0, binary=True),
        Metric("position_accuracy", "Per-position accuracy", 0.0, 1.0),
        Metric("accuracy", "Accuracy", 0.0, 1.0, binary=True),
        Metric("token_f1", "Token F1", 0.0, 1.0),
        Metric("score", "Likert score (1-5)", 1.0, 5.0),
        Metric("instructed", "Instructed score given (attention items)", 0.0, 1.0, binary=True),
        Metric("judge_accuracy", "Judged correct", 0.0, 1.0, binary=True),
        Metric("judge_score", "Judge score (0-5)", 0.0, 5.0),
        Metric("judge_score_10", "Judge score, accuracy + relevance (0-10)", 0.0, 10.0),
        Metric("judge_accuracy_score", "Judge's accuracy score (0-5)", 0.0, 5.0),
        Metric("judge_relevance_score", "Judge's relevance score (0-5)", 0.0, 5.0),
        Metric("interval_r1", "Recall@1 at tIoU 0.3", 0.0, 1.0, binary=True),
        Metric("interval_r5", "Recall@5 at tIoU 0.3", 0.0, 1.0, binary=True),
        Metric("interval_tiou", "Mean tIoU of the first interval", 0.0, 1.0),
    )
}


def metric(key: str) -> Metric:
    """The ``Metric`` of ``key``; a key not in ``METRICS`` gets its own words (underscores as spaces,
    first letter upper case) and no range, so a new metric is shown readably before it is listed."""
    found = METRICS.get(key)
    if found is not None:
        return found
    words = key.replace("_", " ").strip() or key
    return Metric(key, words[:1].upper() + words[1:], None, None)


def words(key: str) -> str:
    """The metric's name in words ("kendall_tau_b" -> "Kendall's tau-b")."""
    return metric(key).words


def clip(interval: Sequence[float] | None, key: str) -> list[float] | None:
    """``interval`` (low, high) clipped to the metric's range, as a list; None stays None."""
    if interval is None or interval[0] is None or interval[1] is None:
        return None
    m = metric(key)
    low, high = float(interval[0]), float(interval[1])
    if m.low is not None:
        low, high = max(low, m.low), max(high, m.low)
    if m.high is not None:
        low, high = min(low, m.high), min(high, m.high)
    return [low, high]


# ----------------------------------------------------------------------------- one cell


def wilson(k: float, n: int, confidence: float = CONFIDENCE) -> list[float] | None:
    """Wilson score interval of ``k`` successes in ``n`` trials (Wilson 1927):
    (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), z the normal quantile. None for n = 0."""
    if n <= 0:
        return None
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    den = 1 + z * z / n
    return [max(0.0, (centre - half) / den), min(1.0, (centre + half) / den)]


def summarise(values: Iterable[float] | np.ndarray, key: str, confidence: float = CONFIDENCE) -> dict:
    """``{"value": mean or None, "ci": [low, high] or None, "n": count}`` of the finite ``values`` of
    metric ``key``: Wilson for a binary metric whose values are all 0 or 1, else Student's t clipped
    to the metric's range (None for n < 2). See the module docstring."""
    xs = np.asarray(values, dtype=float)
    xs = xs[np.isfinite(xs)]
    n = int(xs.size)
    if n == 0:
        return {"value": None, "ci": None, "n": 0}
    mean = float(xs.mean())
    m = metric(key)
    if m.binary and bool(np.all((xs == 0) | (xs == 1))):
        return {"value": mean, "ci": wilson(float(xs.sum()), n, confidence), "n": n}
    if n < 2:
        return {"value": mean, "ci": None, "n": n}
    sd = float(xs.std(ddof=1))
    if sd == 0:
        return {"value": mean, "ci": [mean, mean], "n": n}
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return {"value": mean, "ci": clip((mean - half, mean + half), key), "n": n}


# ----------------------------------------------------------------------------- paired comparison


def bootstrap_mean(d: np.ndarray, n_resamples: int, seed: int, confidence: float = CONFIDENCE) -> list[float]:
    """Percentile bootstrap interval of the mean of ``d``: ``n_resamples`` resamples of len(d) indices
    drawn with replacement from ``default_rng(seed)`` (row by row, the draws of
    ``scipy.stats.bootstrap((d,), np.mean, method="percentile", n_resamples=..., rng=default_rng(seed))``),
    then the (1-c)/2 and (1+c)/2 quantiles (linear interpolation) of the resampled means."""
    d = np.asarray(d, dtype=float)
    n = d.size
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, _CHUNK_CELLS // max(n, 1))
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        idx = rng.integers(0, n, (rows, n))
        means[start : start + rows] = d[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return [float(low), float(high)]


def sign_flip_p(d: np.ndarray, n_resamples: int, seed: int) -> float:
    """Two-sided p-value of the paired permutation test of mean(d) = 0 by sign flips (see the module
    docstring; the rule of ``scipy.stats.permutation_test(permutation_type="samples")``): exact over
    all 2^n flips when 2^n <= ``n_resamples``, else random flips with the +1 correction."""
    d = np.asarray(d, dtype=float)
    n = d.size
    observed = float(d.mean())
    gamma = abs(np.finfo(float).eps * 100 * observed)
    if n < 63 and 2**n <= n_resamples:
        signs = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
        null = signs @ d / n
        count_less = int(np.count_nonzero(null <= observed + gamma))
        count_greater = int(np.count_nonzero(null >= observed - gamma))
        total, adjust = 2**n, 0
    else:
        rng = np.random.default_rng([seed, 1])
        total_sum = float(d.sum())
        count_less = count_greater = 0
        chunk = max(1, _CHUNK_CELLS // max(n, 1))
        nbytes = (n + 7) // 8
        for start in range(0, n_resamples, chunk):
            rows = min(chunk, n_resamples - start)
            bits = np.unpackbits(rng.integers(0, 256, (rows, nbytes), dtype=np.uint8), axis=1, count=n)
            # sum of flipped values = 2 * (sum of those kept positive) - sum of all
            null = (2.0 * (bits @ d) - total_sum) / n
            count_less += int(np.count_nonzero(null <= observed + gamma))
            count_greater += int(np.count_nonzero(null >= observed - gamma))
        total, adjust = n_resamples, 1
    p_less = (count_less + adjust) / (total + adjust)
    p_greater = (count_greater + adjust) / (total + adjust)
    return float(min(1.0, 2 * min(p_less, p_greater)))


def paired(
    d: Iterable[float] | np.ndarray,
    key: str,
    *,
    seed: int,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> dict:
    """``{"diff", "ci", "p", "n"}`` of the per-key differences ``d`` (human minus model) of metric
    ``key``: the mean difference, its percentile bootstrap interval clipped to the difference's range
    (``[low - high, high - low]`` of the metric), the sign-flip p-value, and the number of keys.
    ``diff``/``ci``/``p`` are None for no keys; ``ci`` and ``p`` None for one key."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    n = int(d.size)
    if n == 0:
        return {"diff": None, "ci": None, "p": None, "n": 0}
    diff = float(d.mean())
    if n < 2:
        return {"diff": diff, "ci": None, "p": None, "n": n}
    ci = bootstrap_mean(d, n_resamples, seed, confidence)
    m = metric(key)
    if m.low is not None and m.high is not None:
        span = m.high - m.low
        ci = [max(ci[0], -span), min(ci[1], span)]
    return {"diff": diff, "ci": ci, "p": sign_flip_p(d, n_resamples, seed), "n": n}


# ----------------------------------------------------------------------------- the table


@dataclass
class Records:
    """Answers column-wise: ``respondent`` ("human" or a model's column), ``key`` (pairing key),
    ``fields`` (split field -> one value per record; None where the record has none) and ``values``
    (one metric's value per record; NaN where none). Every column has the same length."""

    respondent: list
    key: list
    fields: dict[str, list] = field(default_factory=dict)
    values: np.ndarray | list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.respondent)


def _codes(column) -> tuple[np.ndarray, list]:
    """(codes, distinct values) of a column of hashable values, None allowed; codes in first-seen order."""
    index: dict = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in column), dtype=np.int64, count=len(column))
    return codes, list(index)


def sort_key(value, order: Sequence | None = None):
    """Rows' order: values named in ``order`` first, in that order; then the rest, numbers by value,
    texts alphabetically; None last."""
    if order and value in order:
        return (0, order.index(value), 0, ())
    if value is None:
        return (3, 0, 0, ())
    if isinstance(value, (int, float)):
        return (1, 0, float(value), ())
    # Natural order: "2. x" before "10. y".
    return (2, 0, 0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in _DIGITS.split(str(value)) if p))


def _per_key(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys ascending, mean value per key) of records sorted by key."""
    uniq, start = np.unique(keys, return_index=True)
    sums = np.add.reduceat(values, start)
    counts = np.diff(np.append(start, keys.size))
    return uniq, sums / counts


def table(
    records: Records,
    *,
    by: Sequence[str],
    key: str,
    columns: Sequence[str] | None = None,
    order: Mapping[str, Sequence] | None = None,
    overall: bool = True,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> list[dict]:
    """The report's rows for metric ``key``: one per split cell (the distinct combinations of the
    ``by`` fields present, in ``order``'s order where given, see ``sort_key``), then, if
    ``overall`` and ``by`` is not empty, one over everything with every split value "all"::

        [{"split": {field: value}, "cells": {column: summarise(...)},
          "paired": {model column: paired(...)}}]

    ``columns``: the respondents shown, in order (default: "human" first, then the others
    alphabetically); a column with no record in a cell gets ``{"value": None, "ci": None, "n": 0}``.
    ``paired`` compares "human" with each other column. Records with a NaN value are left out.
    Raises KeyError for a ``by`` field the records do not have."""
    for name in by:
        if name not in records.fields:
            raise KeyError(name)
    values = np.asarray(records.values, dtype=float)
    keep = np.isfinite(values)
    resp_codes, resp_names = _codes(records.respondent)
    key_codes, _ = _codes(records.key)
    if columns is None:
        present = set(np.unique(resp_codes[keep]).tolist())
        others = sorted(resp_names[c] for c in present if resp_names[c] != HUMAN)
        columns = ([HUMAN] if HUMAN in resp_names else []) + others
    columns = list(columns)
    field_codes = [_codes(records.fields[name]) for name in by]
    if by:
        dims = [len(names) for _, names in field_codes]
        cell = np.ravel_multi_index([c for c, _ in field_codes], dims) if dims else np.zeros(len(values), np.int64)
    else:
        cell = np.zeros(len(values), dtype=np.int64)
    idx = np.flatnonzero(keep)
    cell, resp, keys, vals = cell[idx], resp_codes[idx], key_codes[idx], values[idx]
    perm = np.lexsort((keys, resp, cell))
    cell, resp, keys, vals = cell[perm], resp[perm], keys[perm], vals[perm]
    col_code = {name: resp_names.index(name) for name in columns if name in resp_names}

    def row(split: dict, lo: int, hi: int) -> dict:
        c_resp, c_keys, c_vals = resp[lo:hi], keys[lo:hi], vals[lo:hi]
        bounds = np.searchsorted(c_resp, np.arange(len(resp_names) + 1))
        cells, per_key = {}, {}
        for name in columns:
            code = col_code.get(name)
            a, b = (bounds[code], bounds[code + 1]) if code is not None else (0, 0)
            cells[name] = summarise(c_vals[a:b], key, confidence)
            if b > a:
                order_k = np.argsort(c_keys[a:b], kind="stable")
                per_key[name] = _per_key(c_keys[a:b][order_k], c_vals[a:b][order_k])
        out_paired = {}
        if HUMAN in columns:
            for name in columns:
                if name == HUMAN:
                    continue
                if HUMAN in per_key and name in per_key:
                    hk, hv = per_key[HUMAN]
                    mk, mv = per_key[name]
                    _, hi_idx, mi_idx = np.intersect1d(hk, mk, assume_unique=True, return_indices=True)
                    d = hv[hi_idx] - mv[mi_idx]
                else:
                    d = np.empty(0)
                out_paired[name] = paired(d, key, seed=seed, n_resamples=n_resamples, confidence=confidence)
        return {"split": split, "cells": cells, "paired": out_paired}

    rows = []
    distinct, starts = np.unique(cell, return_index=True)
    ends = np.append(starts[1:], cell.size)
    labelled = []
    for c, a, b in zip(distinct.tolist(), starts.tolist(), ends.tolist()):
        parts = np.unravel_index(c, [len(names) for _, names in field_codes]) if by else ()
        split = {name: field_codes[i][1][int(parts[i])] for i, name in enumerate(by)}
        labelled.append((split, a, b))
    order = order or {}
    labelled.sort(key=lambda t: tuple(sort_key(t[0][name], order.get(name)) for name in by))
    rows = [row(split, a, b) for split, a, b in labelled]
    if by and overall and cell.size:
        # Everything at once: re-sort by respondent and key only.
        perm = np.lexsort((keys, resp))
        cell, resp, keys, vals = cell[perm], resp[perm], keys[perm], vals[perm]
        rows.append(row({name: "all" for name in by}, 0, cell.size))
    return rows
