"""Scoring without Django: the option letter a free-text answer names, the intervals, and the
breakdown of scores by dimension."""

import pytest
from statsmodels.stats.proportion import proportion_confint

from annotator.evaluation.metrics import (
    Scored,
    breakdown,
    extract_choice,
    mean_interval,
    provenance_group,
    summarize,
    wilson,
)

OPTIONS = ["pan", "cup", "lamp", "shoe"]


@pytest.mark.parametrize(
    "answer, index",
    [
        ("B", 1),
        ("b", 1),
        ("(B)", 1),
        ("B.", 1),
        ("Answer: B.", 1),
        ("The answer is (C)", 2),
        ("answer:B", 1),
        ("B) cup", 1),
        ("B. cup", 1),
        ("B: cup", 1),
        ("**B**", 1),
        ("[D]", 3),
        ("Option B", 1),
        ("The correct option is D because it is worn", 3),
        ("I would say (D), the shoe", 3),
        ("I think it's B.", 1),
        ("cup", 1),
        ("Cup.", 1),
        ("It is a cup", 1),
        ("A cup.", 1),
        ("A", 0),
        ("lamp", 2),
    ],
)
def test_the_option_an_answer_names_is_found(answer, index):
    assert extract_choice(answer, OPTIONS) == index


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "I cannot tell.",
        "E",
        "(E)",
        "Answer: E",
        "the answer is a guess",
        "A cup and a pan",
        "(A) or (B)",
        "Option A or option C",
    ],
)
def test_an_answer_naming_no_option_or_two_is_none(answer):
    assert extract_choice(answer, OPTIONS) is None


def test_an_option_inside_a_longer_one_named_in_the_answer_is_not_chosen():
    assert extract_choice("It is the cup holder", ["cup", "cup holder", "lid"]) == 1
    assert extract_choice("It is the cup", ["cup", "cup holder", "lid"]) == 0


def test_wilson_is_statsmodels_proportion_confint_and_none_without_trials():
    assert wilson(9, 10) == pytest.approx(proportion_confint(9, 10, alpha=0.05, method="wilson"))
    assert wilson(9, 10) == pytest.approx((0.595850, 0.982124), abs=1e-6)
    assert wilson(0, 0) is None


def test_the_mean_interval_is_student_t_and_undefined_below_two_values():
    # mean 3, sd 1, n 4: 3 +- t(0.975, 3) x 1 / 2 = 3 +- 3.182446 / 2
    assert mean_interval(4, 3.0, 1.0) == pytest.approx((3 - 1.591223, 3 + 1.591223), abs=1e-6)
    assert mean_interval(1, 3.0, None) is None
    assert mean_interval(5, 2.0, 0.0) == (2.0, 2.0)
    # Two scores, 4 and 5: the t interval (-1.85, 10.85 from 4.5 +- 6.35) is clipped to the 0-5 scale.
    assert mean_interval(2, 4.5, 0.5**0.5) == pytest.approx((0.0, 5.0))
    assert mean_interval(2, 4.5, 0.5**0.5, within=None) == pytest.approx((4.5 - 6.353102, 4.5 + 6.353102), abs=1e-5)


def test_provenance_splits_kept_from_modified_or_added():
    assert [provenance_group(p) for p in ("machine_kept", "machine_modified", "human_added", "")] == [
        "kept",
        "modified_or_added",
        "modified_or_added",
        "unknown",
    ]


def test_the_summary_leaves_failed_items_out_of_the_scores_and_counts_them():
    rows = [
        Scored("mcq", "done", correct=True),
        Scored("mcq", "done", correct=False),
        Scored("mcq", "failed"),
        Scored("open", "done", judge_pred="correct", judge_score=5),
        Scored("open", "done", judge_pred="incorrect", judge_score=1),
        Scored("open", "cancelled"),
        Scored("open", "queued"),
    ]
    s = summarize(rows)
    assert (s["items"], s["done"], s["failed"], s["cancelled"], s["pending"]) == (7, 4, 1, 1, 1)
    assert (s["mcq"]["n"], s["mcq"]["k"], s["mcq"]["value"]) == (2, 1, 0.5)
    assert (s["judge_accuracy"]["n"], s["judge_accuracy"]["k"]) == (2, 1)
    assert (s["judge_score"]["n"], s["judge_score"]["value"]) == (2, 3.0)
    assert s["judge_score"]["ci"] == pytest.approx(mean_interval(2, 3.0, 2**1.5))
    assert s["judge_relevance_score"] == {"n": 0, "value": None, "sd": None, "ci": None}


def test_the_breakdown_groups_by_each_dimension():
    rows = [
        Scored(
            "open",
            "done",
            judge_pred="correct",
            judge_score=4,
            illumination="night",
            provenance="machine_kept",
            qa_type="a",
            source="real",
        ),
        Scored(
            "open",
            "done",
            judge_pred="incorrect",
            judge_score=0,
            illumination="day",
            provenance="human_added",
            qa_type="a",
            source="synthetic",
        ),
        Scored("mcq", "done", correct=True, illumination="", provenance="machine_modified", qa_type="b", source="real"),
    ]
    table = breakdown(rows)
    assert list(table) == ["all", "qa_type", "illumination", "source", "provenance"]
    assert list(table["illumination"]) == ["day", "night", "unknown"]
    assert table["provenance"]["kept"]["judge_accuracy"]["k"] == 1
    assert table["provenance"]["modified_or_added"]["judge_accuracy"]["n"] == 1
    assert table["provenance"]["modified_or_added"]["mcq"]["k"] == 1
    assert table["qa_type"]["a"]["judge_score"]["value"] == 2.0


def test_csv_cells_of_model_text_never_start_a_formula():
    from annotator.evaluation.selectors import _cell

    assert [
        _cell(v) for v in ('=HYPERLINK("http://x")', "+1", "-2 apples", "@SUM(A1)", "a cup", -2, 0.5, None, ["A", "B"])
    ] == ['\'=HYPERLINK("http://x")', "'+1", "'-2 apples", "'@SUM(A1)", "a cup", -2, 0.5, "", '["A", "B"]']
