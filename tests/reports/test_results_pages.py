"""Issue 18's finding on results pages: intervals stayed outside the metric's range (tau-b "[-1.84, 1.84]",
Likert "[-16.6, 21.6]") and raw keys such as ``kendall_tau_b`` were table headers. The study results page
and the evaluation pages now clip every interval to its metric's range and name metrics in words."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotator.evaluation import metrics, selectors
from annotator.evaluation.models import Evaluation, Prediction, Rubric
from annotator.projects.services import ensure_member
from annotator.scoring.ordering import METRICS as ORDERING
from annotator.studies.models import Condition, Item, Participant, Study, Trial

pytestmark = pytest.mark.django_db


def _study_with_two_answers(project, kind, name, metric, values, others=()):
    study = Study.objects.create(project=project, name=name, kind=kind)
    cond = Condition.objects.create(study=study, number=1, label="only", variables={"criterion": "relevance"})
    item = Item.objects.create(condition=cond, index=0, subtask="t", payload={}, truth=None)
    now = timezone.now()
    for i, v in enumerate(values):
        user = ensure_member(f"{name}-p{i}", role="annotator", project=project)[0]
        p = Participant.objects.create(study=study, user=user)
        Trial.objects.create(
            participant=p,
            item=item,
            position=0,
            response=0,
            answered_at=now,
            scored_at=now,
            scores={metric: v, **{m: 0.5 for m in others}},
        )
    return study


def test_study_results_clip_tau_b_and_name_metrics_in_words(client, project):
    # tau-b of 1 and -1: mean 0, Student's t half-width 12.7 -> [-12.7, 12.7] unclipped; shown [-1.00, 1.00].
    _study_with_two_answers(
        project, "ordering", "order", "kendall_tau_b", [1.0, -1.0], others=[m for m in ORDERING if m != "kendall_tau_b"]
    )
    client.force_login(ensure_member("res", role="researcher", project=project)[0])
    html = client.get(f"/projects/{project.slug}/studies/order/results/").content.decode()
    assert '<th class="num">Kendall\'s tau-b</th>' in html or '<th class="num">Kendall&#x27;s tau-b</th>' in html
    assert ">kendall_tau_b<" not in html
    assert "[-1.00, 1.00]" in html and "-12.7" not in html
    assert "Longest-common-subsequence ratio" in html


def test_study_results_clip_likert_scores_to_one_to_five(client, project):
    # ratings 2 and 5: mean 3.5, half-width 19.06 -> [-15.56, 22.56] unclipped; shown [1.00, 5.00].
    _study_with_two_answers(project, "likert", "rate", "score", [2.0, 5.0])
    client.force_login(ensure_member("res", role="researcher", project=project)[0])
    r = client.get(f"/projects/{project.slug}/studies/rate/results/")
    html = r.content.decode()
    assert "[1.00, 5.00]" in html and "Likert score (1-5)" in html
    bars = r.context["charts"]["views"]["kept"]["likert"]["series"][0]["points"][0]
    assert (bars["yMin"], bars["y"], bars["yMax"]) == (1.0, 3.5, 5.0)
    csv_text = b"".join(client.get(f"/projects/{project.slug}/studies/rate/scores.csv").streaming_content).decode()
    assert ",3.5,1.0,5.0,2" in csv_text


def _scored(score, status="done"):
    return metrics.Scored(
        "open", status, None, "correct", score, score // 2, score - score // 2, "t", "day", "real", "", []
    )


def test_a_vudg_judge_score_interval_reaches_ten_not_five():
    # VUDG judge scores (accuracy + relevance, 0-10) 9 and 10: mean 9.5, s = 0.7071, t(0.975, 1) = 12.706,
    # half-width 6.353 -> [3.147, 15.853] clipped to [3.147, 10]. Clipped to 0-5, the top was below the mean.
    summary = metrics.summarize([_scored(9), _scored(10)], score_max=10)
    assert summary["judge_score"]["value"] == 9.5
    assert summary["judge_score"]["ci"] == pytest.approx((3.146898, 10.0), abs=1e-6)
    # EgoNight scores 4 and 5 (0-5): [-1.85, 10.85] clipped to [0, 5].
    assert metrics.summarize([_scored(4), _scored(5)])["judge_score"]["ci"] == (0.0, 5.0)


def test_the_evaluation_report_and_leaderboard_use_the_rubrics_scale(project):
    e = Evaluation.objects.create(
        project=project,
        model="m",
        judge_model="j",
        endpoint={},
        judge_endpoint={},
        prompt_version="v",
        rubric=Rubric.VUDG,
        status=Evaluation.Status.DONE,
    )
    for score in (9, 10):
        Prediction.objects.create(
            evaluation=e,
            kind="open",
            qa_type="t",
            illumination="day",
            source="real",
            question="q",
            truth="a",
            clip_start_s=0,
            clip_end_s=1,
            status="done",
            judge_pred="correct",
            judge_score=score,
            judge_accuracy=5,
            judge_relevance=score - 5,
        )
    assert selectors.report(e)["summary"]["judge_score"]["ci"] == pytest.approx([3.146898, 10.0], abs=1e-5)
    assert selectors.leaderboard(project)[0]["judge_score"]["ci"] == pytest.approx([3.146898, 10.0], abs=1e-5)
