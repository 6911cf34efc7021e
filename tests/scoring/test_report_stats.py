"""The benchmark report's statistics (annotator/scoring/report.py), against hand-computed values and
against scipy (``stats.bootstrap``, ``stats.permutation_test``) and statsmodels on fixed data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from annotator.scoring import report

DIFFS = np.array([0.5, -0.25, 1.0, 0.0, 0.75, 0.25, -0.5, 1.0, 0.5, 0.25, 0.0, 0.75])


def test_metric_names_are_words_with_ranges():
    assert report.words("kendall_tau_b") == "Kendall's tau-b"
    assert report.metric("kendall_tau_b").range == [-1.0, 1.0]
    assert report.metric("score").range == [1.0, 5.0]
    assert report.metric("judge_score").range == [0.0, 5.0]
    assert report.metric("judge_score_10").range == [0.0, 10.0]
    # An unlisted key still reads as words, with no range.
    assert report.words("brand_new_metric") == "Brand new metric"
    assert report.metric("brand_new_metric").range == [None, None]


def test_two_tau_b_trials_give_an_interval_inside_minus_one_to_one():
    # mean 0, s = sqrt(2), t(0.975, 1) = 12.706: t gives [-12.7, 12.7]; clipped to tau-b's range.
    assert report.summarise([1.0, -1.0], "kendall_tau_b") == {"value": 0.0, "ci": [-1.0, 1.0], "n": 2}


def test_likert_interval_stays_on_the_scale():
    # ratings 2 and 5: mean 3.5, s = 2.1213, half-width 12.706 * 2.1213 / sqrt(2) = 19.06 -> [1, 5].
    assert report.summarise([2, 5], "score") == {"value": 3.5, "ci": [1.0, 5.0], "n": 2}


def test_a_wide_enough_sample_is_not_clipped():
    # 1, 2, 3, 4, 5 (Likert): mean 3, s = 1.5811, t(0.975, 4) = 2.7764, half = 2.7764 * 1.5811 / sqrt(5) = 1.9632.
    out = report.summarise([1, 2, 3, 4, 5], "score")
    assert out["value"] == 3.0 and out["n"] == 5
    assert out["ci"] == pytest.approx([3 - 1.963243, 3 + 1.963243], abs=1e-6)


def test_accuracy_gets_the_wilson_interval():
    # 3 of 4 right, z = 1.959964: centre (0.75 + z^2/8) = 1.230182, half z * sqrt(0.1875/4 + z^2/64) = 0.640817,
    # denominator 1 + z^2/4 = 1.960365 -> [0.30064, 0.95441] (hand rounding: to 1e-5).
    out = report.summarise([1, 0, 1, 1], "accuracy")
    assert out["value"] == 0.75 and out["n"] == 4
    assert out["ci"] == pytest.approx([0.30064, 0.95441], abs=1e-5)
    assert out["ci"] == pytest.approx(list(proportion_confint(3, 4, method="wilson")), abs=1e-12)
    # All right: not an empty interval at 1.
    assert report.summarise([1, 1, 1], "accuracy")["ci"] == pytest.approx(
        list(proportion_confint(3, 3, method="wilson"))
    )


def test_few_values_have_no_interval_and_none_have_no_value():
    assert report.summarise([0.5], "kendall_tau_b") == {"value": 0.5, "ci": None, "n": 1}
    assert report.summarise([], "kendall_tau_b") == {"value": None, "ci": None, "n": 0}
    assert report.summarise([float("nan"), 0.25, 0.25], "lcs_ratio") == {"value": 0.25, "ci": [0.25, 0.25], "n": 2}


def test_bootstrap_interval_is_scipys_with_the_same_seed():
    for seed in (0, 7, 12345):
        ours = report.bootstrap_mean(DIFFS, 1000, seed)
        theirs = stats.bootstrap(
            (DIFFS,), np.mean, method="percentile", n_resamples=1000, rng=np.random.default_rng(seed)
        ).confidence_interval
        assert ours == pytest.approx([theirs.low, theirs.high], abs=1e-12)


def test_bootstrap_in_chunks_draws_what_one_draw_would(monkeypatch):
    whole = report.bootstrap_mean(DIFFS, 1000, 3)
    monkeypatch.setattr(report, "_CHUNK_CELLS", 50)  # 4 resamples at a time
    assert report.bootstrap_mean(DIFFS, 1000, 3) == whole


def test_exact_sign_flip_p_is_scipys():
    # 2^8 = 256 <= 1000 resamples: both enumerate every sign vector, so they agree exactly.
    d = DIFFS[:8]
    theirs = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=1000, rng=np.random.default_rng(0)
    ).pvalue
    assert report.sign_flip_p(d, 1000, 0) == pytest.approx(theirs, abs=1e-15)
    # Hand check on three differences 1, 1, 1: of the 8 sign vectors only +++ reaches mean 1 and only
    # --- reaches -1: p = 2 * 1/8 = 0.25.
    assert report.sign_flip_p(np.array([1.0, 1.0, 1.0]), 1000, 0) == 0.25


def test_random_sign_flip_p_is_scipys_up_to_monte_carlo_error():
    # 2^12 = 4096 sign vectors; 1,000 random flips. scipy's exact p (n_resamples >= 4096) is 0.04296875;
    # the standard error of an estimate from 1,000 flips is sqrt(p(1-p)/1000) = 0.0064: allow 4 of them.
    exact = stats.permutation_test((DIFFS,), np.mean, permutation_type="samples", n_resamples=10_000).pvalue
    assert exact == 0.04296875
    for seed in range(5):
        assert abs(report.sign_flip_p(DIFFS, 1000, seed) - exact) < 4 * math.sqrt(exact * (1 - exact) / 1000)
    # With more flips than sign vectors, ours is exact too.
    assert report.sign_flip_p(DIFFS, 4096, 0) == exact


def test_paired_reports_difference_interval_and_p():
    out = report.paired(DIFFS, "accuracy", seed=7)
    assert out["diff"] == pytest.approx(DIFFS.mean()) and out["n"] == 12
    assert out["ci"] == pytest.approx(report.bootstrap_mean(DIFFS, 1000, 7))
    assert out["p"] == report.sign_flip_p(DIFFS, 1000, 7)
    assert report.paired([], "accuracy", seed=0) == {"diff": None, "ci": None, "p": None, "n": 0}
    assert report.paired([0.5], "accuracy", seed=0) == {"diff": 0.5, "ci": None, "p": None, "n": 1}


def test_paired_interval_is_clipped_to_the_differences_range():
    # Accuracy differences lie in [-1, 1]; every per-key difference 1: interval [1, 1], p = 2/4 (two keys, exact).
    out = report.paired([1.0, 1.0], "accuracy", seed=0)
    assert out == {"diff": 1.0, "ci": [1.0, 1.0], "p": 0.5, "n": 2}


def _records():
    # Two people (p1, p2) and a model on keys a, b, c; split by "illumination".
    #   key a (day):   p1 1, p2 0 -> human mean 0.5; model 1 -> d = -0.5
    #   key b (day):   p1 1       -> human 1.0;      model 0 -> d = +1.0
    #   key c (night): p2 0       -> human 0.0;      model 0 -> d = 0
    #   key d (night): nobody     ;                  model 1 (unpaired)
    rows = [
        ("human", "a", "day", 1),
        ("human", "a", "day", 0),
        ("human", "b", "day", 1),
        ("human", "c", "night", 0),
        ("m1", "a", "day", 1),
        ("m1", "b", "day", 0),
        ("m1", "c", "night", 0),
        ("m1", "d", "night", 1),
    ]
    return report.Records(
        respondent=[r[0] for r in rows],
        key=[r[1] for r in rows],
        fields={"illumination": [r[2] for r in rows]},
        values=[float(r[3]) for r in rows],
    )


def test_table_splits_cells_and_pairs_on_keys_both_answered():
    rows = report.table(_records(), by=["illumination"], key="accuracy", seed=0)
    assert [r["split"] for r in rows] == [{"illumination": "day"}, {"illumination": "night"}, {"illumination": "all"}]
    day, night, everything = rows
    # day: humans 1, 0, 1 -> 2/3 over 3 trials; the model 1, 0 -> 1/2.
    assert day["cells"]["human"]["value"] == pytest.approx(2 / 3) and day["cells"]["human"]["n"] == 3
    assert day["cells"]["m1"] == {"value": 0.5, "ci": report.wilson(1, 2), "n": 2}
    # paired on a and b: d = -0.5, +1.0 -> mean 0.25; two keys: exact flips (4 vectors), |mean| >= 0.25 for
    # (+,+) 0.25, (-,-) -0.25, (+,-) -0.75, (-,+) 0.75: all four -> p = 1.
    assert day["paired"]["m1"]["diff"] == pytest.approx(0.25)
    assert day["paired"]["m1"]["n"] == 2 and day["paired"]["m1"]["p"] == 1.0
    # night: the model answered c and d, people only c: one pair, d = 0.
    assert night["cells"]["m1"]["n"] == 2 and night["cells"]["human"] == {
        "value": 0.0,
        "ci": report.wilson(0, 1),
        "n": 1,
    }
    assert night["paired"]["m1"] == {"diff": 0.0, "ci": None, "p": None, "n": 1}
    # all: three pairs, d = -0.5, 1, 0 -> mean 1/6.
    assert everything["paired"]["m1"]["diff"] == pytest.approx(1 / 6) and everything["paired"]["m1"]["n"] == 3
    assert everything["cells"]["human"]["n"] == 4 and everything["cells"]["m1"]["n"] == 4


def test_table_by_nothing_is_one_row_and_order_is_kept():
    rows = report.table(_records(), by=[], key="accuracy", seed=0)
    assert len(rows) == 1 and rows[0]["split"] == {}
    ordered = report.table(
        _records(), by=["illumination"], key="accuracy", order={"illumination": ["night", "day"]}, overall=False
    )
    assert [r["split"]["illumination"] for r in ordered] == ["night", "day"]


def test_table_columns_are_given_or_human_first():
    rows = report.table(_records(), by=[], key="accuracy", columns=["human", "m1", "m2"])
    assert list(rows[0]["cells"]) == ["human", "m1", "m2"]
    assert rows[0]["cells"]["m2"] == {"value": None, "ci": None, "n": 0}
    assert rows[0]["paired"]["m2"] == {"diff": None, "ci": None, "p": None, "n": 0}
    with pytest.raises(KeyError):
        report.table(_records(), by=["domain"], key="accuracy")
