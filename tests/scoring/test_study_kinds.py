"""Each study kind's ``score`` on hand-worked cases: multiple choice (EgoExoBench accuracy), open
answers (SQuAD exact match and token F1), Likert ratings (the score, attention checks) and ordering
(EGO-FLIGHT's metrics, with and without hints). No database: ``score`` takes ``ScoreRow``s."""

import random

import pytest

from annotator.studies.kinds import ScoreRow, likert, mcq, open_answer, ordering

# ------------------------------------------------------------------------------ multiple choice


def test_multiple_choice_is_right_only_for_the_right_option_in_time():
    rows = [
        ScoreRow(2, {}, 2),
        ScoreRow(2, {}, 1),
        ScoreRow(0, {}, 0),
        ScoreRow(2, {}, 2, timed_out=True),
        ScoreRow(3, {}, None, timed_out=True),
    ]
    assert mcq.score(rows) == [
        {"accuracy": 1.0},
        {"accuracy": 0.0},
        {"accuracy": 1.0},
        {"accuracy": 0.0},
        {"accuracy": 0.0},
    ]


def test_multiple_choice_scores_are_plain_floats_and_no_rows_give_no_scores():
    assert [type(s["accuracy"]) for s in mcq.score([ScoreRow(1, {}, 1), ScoreRow(1, {}, 0)])] == [float, float]
    assert mcq.score([]) == []


# ------------------------------------------------------------------------------ open answers


def test_an_open_answer_that_differs_only_in_case_punctuation_and_articles_is_an_exact_match():
    [s] = open_answer.score([ScoreRow("red cup", {}, "The red cup.")])
    assert s == {"exact_match": 1.0, "token_f1": 1.0}


def test_token_f1_on_hand_counted_tokens():
    rows = [
        # "red cup on table" vs "blue cup on shelf": 2 common tokens, P = 2/4, R = 2/4, F1 = 1/2.
        ScoreRow("the blue cup on a shelf", {}, "A red cup on the table"),
        # "cup cup plate" vs "cup plate plate knife": common min(2,1) + min(1,2) = 2, P = 2/3, R = 2/4,
        # F1 = 2 (2/3)(1/2) / (2/3 + 1/2) = 4/7.
        ScoreRow("cup plate plate knife", {}, "cup, cup; plate"),
        # No token in common.
        ScoreRow("a knife", {}, "spoon"),
        # Only articles: no tokens against some tokens is 0; none against none is 1 (SQuAD's rule).
        ScoreRow("a cup", {}, "The"),
        ScoreRow("an", {}, "The!"),
    ]
    assert open_answer.score(rows) == [
        {"exact_match": 0.0, "token_f1": 0.5},
        {"exact_match": 0.0, "token_f1": pytest.approx(4 / 7)},
        {"exact_match": 0.0, "token_f1": 0.0},
        {"exact_match": 0.0, "token_f1": 0.0},
        {"exact_match": 1.0, "token_f1": 1.0},
    ]


def test_a_late_or_missing_open_answer_scores_zero_even_when_right():
    rows = [ScoreRow("red cup", {}, "red cup", timed_out=True), ScoreRow("red cup", {}, None, timed_out=True)]
    assert open_answer.score(rows) == [{"exact_match": 0.0, "token_f1": 0.0}] * 2


def test_open_answers_scored_together_equal_token_f1_one_by_one():
    rng = random.Random(2)
    words = "the a an cup Cup red blue, knife. opens fridge water glass left hand".split()
    truths = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 8))) for _ in range(20)]
    rows = [
        ScoreRow(rng.choice(truths), {}, " ".join(rng.choice(words) for _ in range(rng.randint(1, 10))))
        for _ in range(2000)
    ]
    assert open_answer.score(rows) == [
        {
            "exact_match": float(open_answer.normalise(r.response) == open_answer.normalise(r.truth)),
            "token_f1": open_answer.token_f1(r.response, r.truth),
        }
        for r in rows
    ]


# ------------------------------------------------------------------------------ Likert


def test_likert_keeps_the_rating_and_checks_the_instructed_score_of_attention_items():
    rows = [
        ScoreRow(None, {}, {"score": 4, "justification": ""}),  # a real item: no right answer
        ScoreRow(2, {}, {"score": 2, "justification": "as asked"}),  # attention item, followed
        ScoreRow(2, {}, {"score": 3, "justification": ""}),  # attention item, not followed
        ScoreRow(None, {}, 5),  # a model's prediction: the score itself
    ]
    assert likert.score(rows) == [
        {"score": 4.0, "instructed": None},
        {"score": 2.0, "instructed": 1.0},
        {"score": 3.0, "instructed": 0.0},
        {"score": 5.0, "instructed": None},
    ]


def test_a_timed_out_likert_rating_has_no_score_and_fails_an_attention_check():
    rows = [
        ScoreRow(None, {}, {"score": 4, "justification": ""}, timed_out=True),
        ScoreRow(None, {}, None, timed_out=True),
        ScoreRow(3, {}, {"score": 3, "justification": ""}, timed_out=True),
        ScoreRow(3, {}, None, timed_out=True),
    ]
    assert likert.score(rows) == [
        {"score": None, "instructed": None},
        {"score": None, "instructed": None},
        {"score": None, "instructed": 0.0},
        {"score": None, "instructed": 0.0},
    ]


# ------------------------------------------------------------------------------ ordering

TRUTH = [11, 12, 13, 14]


def _ordering(response, hints=(), timed_out=False, truth=TRUTH):
    [s] = ordering.score([ScoreRow(truth, {"shown": truth[::-1], "hints": list(hints)}, response, timed_out)])
    return s


def test_ordering_two_swapped_pairs():
    # True positions in the order given: 1 0 3 2. Of 6 pairs, (0,1) and (2,3) are discordant:
    # tau-b = (4 - 2) / 6 = 1/3, pairwise = 4/6; every element one place off: MAD 1; the longest
    # common subsequence has 2 elements (12 14); Levenshtein 3 (insert 11 first, 11 -> 13, drop 13);
    # no element in place.
    assert _ordering([12, 11, 14, 13]) == {
        "kendall_tau_b": 0.333333333333,
        "pairwise_accuracy": 4 / 6,
        "mean_abs_distance": 1.0,
        "lcs_ratio": 0.5,
        "edit_distance": 3.0,
        "exact_match": 0.0,
        "position_accuracy": 0.0,
    }


def test_ordering_eight_frames_with_the_first_moved_to_the_end():
    # Element 1 last is discordant with the 7 others: tau-b = (21 - 7) / 28 = 0.5, pairwise 21/28;
    # distances 1 x 7 + 7 = 14 over 8; LCS 7 of 8; Levenshtein 2 (drop it at the end, insert it first).
    truth = list(range(1, 9))
    assert _ordering([2, 3, 4, 5, 6, 7, 8, 1], truth=truth) == {
        "kendall_tau_b": 0.5,
        "pairwise_accuracy": 0.75,
        "mean_abs_distance": 1.75,
        "lcs_ratio": 0.875,
        "edit_distance": 2.0,
        "exact_match": 0.0,
        "position_accuracy": 0.0,
    }


def test_ordering_one_adjacent_swap_keeps_half_the_positions():
    assert _ordering([12, 11, 13, 14])["position_accuracy"] == 0.5
    assert _ordering([11, 12, 14, 13])["kendall_tau_b"] == 0.666666666667


def test_ordering_with_hints_scores_only_the_free_elements():
    # Positions 1 and 3 pinned (11, 13): the free 12 and 14 given as 14, 12 are reversed.
    assert _ordering([11, 14, 13, 12], hints=[1, 3]) == {
        "kendall_tau_b": -1.0,
        "pairwise_accuracy": 0.0,
        "mean_abs_distance": 1.0,
        "lcs_ratio": 0.5,
        "edit_distance": 2.0,
        "exact_match": 0.0,
        "position_accuracy": 0.0,
    }
    # Positions 2 and 4 pinned, the free 11 and 13 in order: perfect.
    assert _ordering([11, 12, 13, 14], hints=[2, 4]) == {
        "kendall_tau_b": 1.0,
        "pairwise_accuracy": 1.0,
        "mean_abs_distance": 0.0,
        "lcs_ratio": 1.0,
        "edit_distance": 0.0,
        "exact_match": 1.0,
        "position_accuracy": 1.0,
    }


def test_ordering_with_hints_of_8_scores_the_6_free_elements():
    # 8 frames, 2 and 7 pinned; the free 1 3 4 5 6 8 given as 3 1 4 5 6 8: one adjacent swap of 6.
    # tau-b = (14 - 1) / 15, pairwise 14/15, MAD 2/6, LCS 5/6, Levenshtein 2, 4 of 6 in place.
    truth = list(range(1, 9))
    s = _ordering([3, 2, 1, 4, 5, 6, 7, 8], hints=[2, 7], truth=truth)
    assert s == {
        "kendall_tau_b": 0.866666666667,
        "pairwise_accuracy": 14 / 15,
        "mean_abs_distance": 2 / 6,
        "lcs_ratio": 5 / 6,
        "edit_distance": 2.0,
        "exact_match": 0.0,
        "position_accuracy": 4 / 6,
    }


def test_a_late_or_missing_ordering_scores_as_the_free_elements_reversed():
    # No hints: 14 13 12 11. Tau-b -1, MAD (3+1+1+3)/4, LCS 1/4; Levenshtein 4 (without insertions
    # no position matches; an insertion needs a deletion and keeps at most one element). Nothing is right.
    late = _ordering(None, timed_out=True)
    assert late == {
        "kendall_tau_b": -1.0,
        "pairwise_accuracy": 0.0,
        "mean_abs_distance": 2.0,
        "lcs_ratio": 0.25,
        "edit_distance": 4.0,
        "exact_match": 0.0,
        "position_accuracy": 0.0,
    }
    # A right answer that came late scores the same.
    assert _ordering(TRUTH, timed_out=True) == late
    # Hints 2 and 4: the free 11 and 13 swapped.
    assert _ordering(None, hints=[2, 4], timed_out=True) == {
        "kendall_tau_b": -1.0,
        "pairwise_accuracy": 0.0,
        "mean_abs_distance": 1.0,
        "lcs_ratio": 0.5,
        "edit_distance": 2.0,
        "exact_match": 0.0,
        "position_accuracy": 0.0,
    }
