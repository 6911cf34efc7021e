"""Ordering metrics on hand-worked examples (EGO-FLIGHT App. D), the hint rule, and the shuffle."""

from collections import Counter
from itertools import permutations

import pytest
from scipy import stats

from annotator.scoring.ordering import OrderingError, mean_ci, score, shown_order

TRUTH = ["a", "b", "c", "d"]


def test_the_true_order_scores_perfectly():
    s = score(TRUTH, TRUTH)
    assert s.as_dict() == {"kendall_tau_b": 1.0, "pairwise_accuracy": 1.0, "mean_abs_distance": 0.0, "lcs_ratio": 1.0,
                           "edit_distance": 0.0, "exact_match": 1.0}


def test_the_reversed_order_has_tau_minus_one():
    s = score(["d", "c", "b", "a"], TRUTH)
    assert s.kendall_tau_b == pytest.approx(-1.0)
    assert s.pairwise_accuracy == 0.0
    assert s.mean_abs_distance == 2.0          # |0-3| + |1-2| + |2-1| + |3-0| = 8, over 4
    assert s.lcs_ratio == 0.25                 # any single element
    assert s.edit_distance == 4.0              # 4 substitutions (b/c do not line up either)
    assert s.exact_match == 0.0


def test_one_adjacent_swap():
    s = score(["b", "a", "c", "d"], TRUTH)
    # 6 pairs, 1 discordant: tau = (5 - 1) / 6, pairwise = 5/6
    assert s.kendall_tau_b == pytest.approx(4 / 6)
    assert s.pairwise_accuracy == pytest.approx(5 / 6)
    assert s.mean_abs_distance == 0.5
    assert s.lcs_ratio == 0.75
    assert s.edit_distance == 2.0
    assert s.exact_match == 0.0


def test_hint_conditions_score_only_the_non_hint_frames():
    # Frames 1 and 3 (a, c) pinned; the person swapped b and d: of the two free frames, wrong order.
    s = score(["a", "d", "c", "b"], TRUTH, hint_positions=[1, 3])
    assert s.kendall_tau_b == pytest.approx(-1.0)
    assert (s.pairwise_accuracy, s.exact_match, s.mean_abs_distance) == (0.0, 0.0, 1.0)
    right = score(["a", "b", "c", "d"], TRUTH, hint_positions=[2, 4])
    assert (right.kendall_tau_b, right.exact_match) == (1.0, 1.0)


def test_two_frames_and_a_single_free_frame():
    assert score(["b", "a"], ["a", "b"]).kendall_tau_b == pytest.approx(-1.0)
    one = score(["a", "b", "c"], ["a", "b", "c"], hint_positions=[1, 2])
    assert one.kendall_tau_b is None and one.pairwise_accuracy is None and one.exact_match == 1.0


@pytest.mark.parametrize("bad, message", [
    (["a", "b", "c"], "expected 4 elements, got 3"),
    (["a", "b", "c", "x"], "not the item's elements"),
    (["a", "a", "b", "c"], "not the item's elements"),
])
def test_a_response_that_is_not_a_permutation_is_refused(bad, message):
    with pytest.raises(OrderingError, match=message):
        score(bad, TRUTH)


def test_every_frame_is_equally_likely_in_every_position():
    """Over 4800 items of 4 frames, each (frame, position) cell is counted; a chi-square test of
    uniformity over the 16 cells must not reject at the 0.1% level, and all 24 orders occur."""
    n_items = 4800
    cells = Counter()
    orders = Counter()
    for seed in range(n_items):
        order = shown_order(4, seed)
        orders[tuple(order)] += 1
        for position, frame in enumerate(order):
            cells[(frame, position)] += 1
    counts = [cells[(f, p)] for f in range(4) for p in range(4)]
    # Each frame is in exactly one position per item, so rows sum to n_items: compare to n_items/4.
    assert stats.chisquare(counts).pvalue > 0.001
    assert set(orders) == set(permutations(range(4)))


def test_the_same_seed_gives_the_same_shuffle_and_hints_stay_put():
    assert shown_order(8, 12345) == shown_order(8, 12345)
    for seed in range(200):
        order = shown_order(4, seed, hint_positions=[2, 4])
        assert order[1] == 1 and order[3] == 3 and sorted(order) == [0, 1, 2, 3]


def test_mean_and_confidence_interval():
    ci = mean_ci([0.5, 0.7, 0.6])
    assert ci["mean"] == pytest.approx(0.6) and ci["n"] == 3
    # t(0.975, 2) = 4.3027; sem = 0.1 / sqrt(3)
    assert ci["ci_high"] - ci["mean"] == pytest.approx(4.302653 * 0.1 / 3 ** 0.5, rel=1e-5)
    assert mean_ci([0.4]) == {"mean": 0.4, "ci_low": None, "ci_high": None, "n": 1}
    assert mean_ci([None, None])["n"] == 0
