"""Ordering metrics on hand-worked examples (EGO-FLIGHT App. D), the hint rule, and the shuffle;
the vectorised ``score_many`` against scipy's tau-b and against ``score`` one row at a time."""

import random
from collections import Counter
from itertools import permutations

import pytest
from scipy import stats

from annotator.scoring import ordering
from annotator.scoring.ordering import METRICS, OrderingError, mean_ci, score, score_many, shown_order

TRUTH = ["a", "b", "c", "d"]


def test_the_true_order_scores_perfectly():
    s = score(TRUTH, TRUTH)
    assert s.as_dict() == {
        "kendall_tau_b": 1.0,
        "pairwise_accuracy": 1.0,
        "mean_abs_distance": 0.0,
        "lcs_ratio": 1.0,
        "edit_distance": 0.0,
        "exact_match": 1.0,
        "position_accuracy": 1.0,
    }


def test_the_reversed_order_has_tau_minus_one():
    s = score(["d", "c", "b", "a"], TRUTH)
    assert s.kendall_tau_b == pytest.approx(-1.0)
    assert s.pairwise_accuracy == 0.0
    assert s.mean_abs_distance == 2.0  # |0-3| + |1-2| + |2-1| + |3-0| = 8, over 4
    assert s.lcs_ratio == 0.25  # any single element
    assert s.edit_distance == 4.0  # 4 substitutions (b/c do not line up either)
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


@pytest.mark.parametrize(
    "bad, message",
    [
        (["a", "b", "c"], "expected 4 elements, got 3"),
        (["a", "b", "c", "x"], "not the item's elements"),
        (["a", "a", "b", "c"], "not the item's elements"),
    ],
)
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
    assert ci["ci_high"] - ci["mean"] == pytest.approx(4.302653 * 0.1 / 3**0.5, rel=1e-5)
    assert mean_ci([0.4]) == {"mean": 0.4, "ci_low": None, "ci_high": None, "n": 1}
    assert mean_ci([None, None])["n"] == 0


# ------------------------------------------------------------------------------ many at once


def one_at_a_time(predicted, truth, hints, timed_out) -> dict:
    """The scores of one row by the documented rule, through ``score`` (scipy's tau-b): a missing or
    late answer scores as its non-hint elements reversed in their slots, with exact match and
    position accuracy 0."""
    if predicted is None or timed_out:
        pinned = {truth[p - 1] for p in hints}
        free = [x for x in truth if x not in pinned]
        slots = iter(reversed(free))
        worst = [x if x in pinned else next(slots) for x in truth]
        return {**score(worst, truth, hints).as_dict(), "exact_match": 0.0, "position_accuracy": 0.0}
    return score(predicted, truth, hints).as_dict()


def random_rows(rng: random.Random, count: int, sizes=range(2, 16)) -> list[tuple]:
    """Rows like the ones stored: int or text element ids, hints kept in place (or moved, as a
    model's prediction may), some exactly right, some late, some unanswered."""
    rows = []
    for _ in range(count):
        n = rng.choice(sizes)
        if rng.random() < 0.7:
            truth = rng.sample(range(1, 10**6), n)
        else:
            truth = [f"text {j}" for j in rng.sample(range(999), n)]
        hints = sorted(rng.sample(range(1, n + 1), rng.randint(1, n))) if rng.random() < 0.4 else []
        predicted = truth[:]
        rng.shuffle(predicted)
        if hints and rng.random() < 0.5:
            free = [x for j, x in enumerate(truth) if j + 1 not in hints]
            rng.shuffle(free)
            rest = iter(free)
            predicted = [x if j + 1 in hints else next(rest) for j, x in enumerate(truth)]
        if rng.random() < 0.1:
            predicted = truth[:]
        luck = rng.random()
        rows.append((None if luck < 0.05 else predicted, truth, hints, 0.05 <= luck < 0.12))
    return rows


def test_tau_b_equals_scipys_variant_b_on_random_permutations():
    rng = random.Random(3)
    for n in range(2, 33):
        truth = list(range(100, 100 + n))
        orders = [rng.sample(truth, n) for _ in range(60)] + [truth, truth[::-1]]
        many = score_many([(order, truth, [], False) for order in orders])
        for order, scores in zip(orders, many):
            ranks = [truth.index(x) for x in order]
            expected = stats.kendalltau(range(n), ranks, variant="b").statistic
            assert scores["kendall_tau_b"] == pytest.approx(expected, abs=1e-12)
            assert scores["kendall_tau_b"] == round(float(expected), 12)


def test_tau_b_is_concordant_minus_discordant_over_all_pairs_for_every_order_of_five():
    truth = list("abcde")
    orders = [list(p) for p in permutations(truth)]
    for order, scores in zip(orders, score_many([(o, truth, [], False) for o in orders])):
        pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
        concordant = sum(truth.index(order[i]) < truth.index(order[j]) for i, j in pairs)
        assert scores["kendall_tau_b"] == round((2 * concordant - 10) / 10, 12)
        assert scores["pairwise_accuracy"] == concordant / 10


def test_many_rows_score_exactly_as_one_at_a_time():
    """5,000 random rows (2 to 15 elements, hints, late and missing answers): every metric equal,
    to the bit and in type (JSON keeps floats and None), key order included."""
    rows = random_rows(random.Random(11), 5_000)
    many = score_many(rows)
    assert len(many) == len(rows)
    for row, got in zip(rows, many):
        expected = one_at_a_time(*row)
        assert list(got) == list(METRICS)
        assert got == expected, row
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()], row


def test_single_elements_and_all_hint_items_score_as_one_at_a_time():
    rows = [
        (["a"], ["a"], [], False),
        (None, ["a"], [], True),
        (["a", "b", "c"], ["a", "b", "c"], [1, 2], False),
        (["a", "b", "c"], ["a", "b", "c"], [1, 2], True),
        (["a", "b"], ["a", "b"], [1, 2], False),
        (None, ["a", "b"], [1, 2], True),
        ([], [], [], False),
    ]
    assert score_many(rows) == [one_at_a_time(*row) for row in rows]


def test_large_items_compared_in_blocks_score_as_one_at_a_time(monkeypatch):
    monkeypatch.setattr(ordering, "_PAIR_BLOCK", 1000)  # 32 elements: 496 pairs, so 2 rows per block
    rows = random_rows(random.Random(5), 101, sizes=[32])
    assert score_many(rows) == [one_at_a_time(*row) for row in rows]


def test_a_late_or_missing_answer_scores_as_the_free_elements_reversed():
    # Frames 1 and 3 pinned: the free ones, b and d, reversed (d before b); nothing counts as right.
    late = {
        "kendall_tau_b": -1.0,
        "pairwise_accuracy": 0.0,
        "mean_abs_distance": 1.0,
        "lcs_ratio": 0.5,
        "edit_distance": 2.0,
        "exact_match": 0.0,
        "position_accuracy": 0.0,
    }
    assert score_many([(TRUTH, TRUTH, [1, 3], True), (None, TRUTH, [1, 3], True)]) == [late, late]


def test_rows_come_back_in_their_order_across_groups():
    # Three groups, (2, no hints), (4, no hints) and (4, hints 1 and 3), interleaved.
    rows = [
        (["b", "a"], ["a", "b"], [], False),
        (TRUTH, TRUTH, [], False),
        (["b", "a", "c", "d"], TRUTH, [], False),
        (["a", "d", "c", "b"], TRUTH, [1, 3], False),
        (["a", "b"], ["a", "b"], [], False),
    ]
    assert [s["kendall_tau_b"] for s in score_many(rows)] == [-1.0, 1.0, 0.666666666667, -1.0, 1.0]


@pytest.mark.parametrize(
    "bad, message",
    [
        (["a", "b", "c"], "expected 4 elements, got 3"),
        (["a", "b", "c", "x"], r"not the item's elements \(missing \['d'\], unknown \['x'\]\)"),
        (["a", "a", "b", "c"], r"not the item's elements \(missing \['d'\], unknown \[\]\)"),
    ],
)
def test_many_rows_refuse_a_response_that_is_not_a_permutation_as_one_row_does(bad, message):
    good = (TRUTH, TRUTH, [], False)
    with pytest.raises(OrderingError, match=message):
        score_many([good, (bad, TRUTH, [], False), good])


def test_many_rows_refuse_a_truth_that_repeats_and_a_hint_outside_the_item():
    with pytest.raises(OrderingError, match="the true order repeats an element"):
        score_many([(["a", "a"], ["a", "a"], [], False)])
    with pytest.raises(OrderingError, match=r"hint positions must be between 1 and 4, got \[0, 2\]"):
        score_many([(TRUTH, TRUTH, [0, 2], False)])


def test_no_rows_score_to_no_scores():
    assert score_many([]) == []
