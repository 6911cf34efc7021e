"""People re-judging the LLM judge: a seeded sample that draws the same answers for the same seed, a
queue that never gives two people the same answer, one verdict per answer, and agreement through
the agreement engine (percent agreement and Cohen's kappa of the judge's labels against people's)."""

import random

import pytest
from django.contrib.auth import get_user_model

from annotator.agreement import services as agreement
from annotator.agreement.models import Rating, RatingSet, Report
from annotator.errors import Conflict, Invalid, NotHeld
from annotator.evaluation import rejudge
from annotator.evaluation.models import RejudgeItem, RejudgeSample


@pytest.fixture
def people(project):
    from annotator.projects.services import ensure_member

    return [ensure_member(name, role="reviewer", project=project)[0] for name in ("rev1", "rev2")]


@pytest.mark.django_db
def test_the_sample_is_drawn_from_its_seed_and_the_same_seed_draws_the_same_answers(judged_evaluation):
    e = judged_evaluation(["correct", "incorrect"] * 20)
    ids = rejudge.candidates(e)
    sample = rejudge.create_sample(e, size=7, seed=1234)
    drawn = list(sample.items.order_by("position").values_list("prediction_id", flat=True))
    assert drawn == random.Random(1234).sample(ids, 7)
    assert (sample.size, sample.seed, sample.n_items) == (7, 1234, 7)

    again = rejudge.create_sample(e, size=7, seed=1234, replace=True)
    assert list(again.items.order_by("position").values_list("prediction_id", flat=True)) == drawn
    other = rejudge.create_sample(e, size=7, seed=99, replace=True)
    assert list(other.items.order_by("position").values_list("prediction_id", flat=True)) != drawn
    assert RejudgeSample.objects.count() == 1


@pytest.mark.django_db
def test_a_sample_larger_than_the_judged_answers_takes_them_all_and_a_seed_is_recorded(judged_evaluation):
    e = judged_evaluation(["correct"] * 5)
    sample = rejudge.create_sample(e)  # default 300, random seed
    assert (sample.size, sample.n_items) == (300, 5) and 0 <= sample.seed < 2**31
    assert set(sample.items.values_list("judge_label", flat=True)) == {"correct"}


@pytest.mark.django_db
@pytest.mark.parametrize("size, seed", [(0, 1), (5001, 1), (True, 1), (3.5, 1), (10, -1), (10, 2**63)])
def test_sizes_and_seeds_out_of_bounds_are_refused_and_nothing_is_drawn(judged_evaluation, size, seed):
    e = judged_evaluation(["correct"] * 3)
    with pytest.raises(Invalid):
        rejudge.create_sample(e, size=size, seed=seed)
    assert RejudgeSample.objects.count() == 0 and RejudgeItem.objects.count() == 0


@pytest.mark.django_db
def test_a_second_sample_needs_replace_and_an_evaluation_without_judged_answers_has_none(judged_evaluation):
    e = judged_evaluation(["correct"] * 3)
    first = rejudge.create_sample(e, size=2, seed=1)
    with pytest.raises(Conflict, match="has a re-judge sample already"):
        rejudge.create_sample(e, size=2, seed=2)
    assert RejudgeSample.objects.get().pk == first.pk
    with pytest.raises(Invalid, match="no judged open answer"):
        rejudge.create_sample(judged_evaluation([]), size=2)


@pytest.mark.django_db
def test_two_people_never_get_the_same_answer_and_an_answer_gets_one_verdict(judged_evaluation, people):
    e = judged_evaluation(["correct", "incorrect", "correct"])
    sample = rejudge.create_sample(e, size=3, seed=5)
    a, b = people
    first, second = rejudge.next_item(sample, a), rejudge.next_item(sample, b)
    assert (first.position, second.position) == (0, 1)
    assert rejudge.next_item(sample, a).pk == first.pk  # the one a holds, again
    with pytest.raises(NotHeld):
        rejudge.record(first.pk, b, "right")
    rejudge.record(first.pk, a, "wrong")
    item = RejudgeItem.objects.get(pk=first.pk)
    other = {"correct": "incorrect", "incorrect": "correct"}[item.judge_label]
    assert (item.verdict, item.human_label, item.judged_by) == ("wrong", other, a)
    with pytest.raises(Conflict, match="re-judged already"):
        rejudge.record(first.pk, a, "right")
    with pytest.raises(Invalid):
        rejudge.record(second.pk, b, "maybe")
    assert RejudgeItem.objects.get(pk=second.pk).verdict == ""
    assert rejudge.next_item(sample, a).position == 2
    assert rejudge.next_item(sample, get_user_model().objects.create(username="third")) is None


@pytest.mark.django_db
def test_nine_of_ten_marked_right_is_ninety_percent_agreement_from_the_engine(judged_evaluation, people, project):
    labels = ["correct"] * 6 + ["incorrect"] * 4
    e = judged_evaluation(labels)
    sample = rejudge.create_sample(e, size=10, seed=3)
    person = people[0]
    wrong_one = None
    for n in range(10):
        item = rejudge.next_item(sample, person)
        verdict = "right"
        if item.judge_label == "incorrect" and wrong_one is None:
            verdict, wrong_one = "wrong", item.prediction_id
        rejudge.record(item.pk, person, verdict)

    rs = RatingSet.objects.get(project=project, name=f"evaluation-{e.pk}-rejudge")
    assert (rs.source, rs.level) == ("judge", "nominal")
    human = dict(Rating.objects.filter(rating_set=rs, rater="human").values_list("item", "value"))
    judge = dict(Rating.objects.filter(rating_set=rs, rater="judge").values_list("item", "value"))
    assert len(human) == len(judge) == 10
    assert [k for k in judge if judge[k] != human[k]] == [f"prediction-{wrong_one}"]
    assert human[f"prediction-{wrong_one}"] == "correct"

    comp = agreement.compute(project, f"ratings:{rs.name}", n_resamples=200)
    reports = {r.metric: r for r in Report.objects.filter(computation=comp, subset="")}
    assert set(reports) == {"percent_agreement", "cohen_kappa"}
    assert reports["percent_agreement"].value == pytest.approx(0.9)
    # judge: 6 correct, 4 incorrect; people: 7 correct, 3 incorrect; observed 0.9, expected
    # 0.6 x 0.7 + 0.4 x 0.3 = 0.54; kappa = (0.9 - 0.54) / (1 - 0.54).
    assert reports["cohen_kappa"].value == pytest.approx((0.9 - 0.54) / 0.46)
    assert reports["percent_agreement"].n_items == 10

    status = rejudge.status(e)
    assert (status["judged"], status["right"], status["wrong"], status["percent_right"]) == (10, 9, 1, 0.9)
    assert status["agreement"]["percent_agreement"]["value"] == pytest.approx(0.9)
    assert status["agreement"]["cohen_kappa"]["value"] == pytest.approx(0.36 / 0.46)
    assert status["agreement"]["fresh"] is True
