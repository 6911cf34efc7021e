"""Time limits are the server's (issue 8, Timing): an answer later than the condition's limit plus
STUDY_TIME_GRACE_MS is stored as timed out and scored wrong, whatever the page says; an empty answer
is only accepted once the limit has run out; a trial left open past its limit is closed when the
person comes back; a reload resumes with the time already spent."""

from datetime import timedelta

import pytest
from django.db.models import F

from annotator.errors import Invalid
from annotator.studies import selectors
from annotator.studies.models import Condition, Item, Study, Trial
from annotator.studies.services import answer_trial, current_trial, enroll, mark_shown, score_pending, start


@pytest.fixture
def quick(project):
    """A multiple-choice study with one 60 s condition and three items whose right option is B."""
    study = Study.objects.create(project=project, name="quick", kind="mcq", questions_per_participant=3)
    cond = Condition.objects.create(study=study, number=1, label="quick (60 s)", time_limit_s=60)
    for i in range(3):
        Item.objects.create(
            condition=cond,
            index=i,
            subtask="counting",
            key=f"q{i}",
            truth=1,
            payload={"question": f"How many cups, {i}?", "options": ["one", "two", "three"], "media": []},
        )
    return study


def _begin(study, person):
    p = enroll(study, person)
    start(p)
    return p


def _shown_ago(p, trial, ms: float):
    mark_shown(p, trial.pk)
    Trial.objects.filter(pk=trial.pk).update(shown_at=F("shown_at") - timedelta(milliseconds=ms))


def test_a_right_answer_in_time_scores_and_a_late_one_is_timed_out_and_wrong(quick, annotator, settings):
    settings.STUDY_TIME_GRACE_MS = 1500
    p = _begin(quick, annotator)
    first = current_trial(p)
    _shown_ago(p, first, 61_000)  # 1 s past the limit: within the grace
    assert answer_trial(p, first.pk, 1, 60_500, "a").timed_out is False
    second = current_trial(p)
    _shown_ago(p, second, 62_000)  # 2 s past: the page's clock says 59 s, the server knows better
    late = answer_trial(p, second.pk, 1, 59_000, "b")
    assert (late.timed_out, late.response) == (True, 1)  # stored as given, flagged
    score_pending(quick.pk)
    scores = dict(Trial.objects.filter(participant=p).values_list("pk", "scores__accuracy"))
    assert scores[first.pk] == 1.0 and scores[second.pk] == 0.0


def test_an_empty_answer_is_refused_before_the_limit_and_taken_as_timed_out_after(quick, annotator, settings):
    settings.STUDY_RT_SLACK_MS = 500
    p = _begin(quick, annotator)
    trial = current_trial(p)
    _shown_ago(p, trial, 30_000)
    with pytest.raises(Invalid, match="only a trial whose time has run out may be left unanswered"):
        answer_trial(p, trial.pk, None, 30_000, "x")
    assert Trial.objects.get(pk=trial.pk).answered_at is None  # nothing written
    Trial.objects.filter(pk=trial.pk).update(shown_at=F("shown_at") - timedelta(milliseconds=29_700))
    gave_up = answer_trial(p, trial.pk, None, 60_000, "x")  # the page's countdown ended
    assert (gave_up.timed_out, gave_up.response) == (True, None)
    assert current_trial(p).pk != trial.pk


def test_a_trial_left_open_past_its_limit_is_closed_as_timed_out_when_the_person_returns(quick, annotator):
    p = _begin(quick, annotator)
    trial = current_trial(p)
    _shown_ago(p, trial, 10 * 60_000)  # the person closed the page ten minutes ago
    nxt = current_trial(p)
    closed = Trial.objects.get(pk=trial.pk)
    assert nxt.pk != trial.pk
    assert (closed.timed_out, closed.response, closed.client_rt_ms) == (
        True,
        None,
        None,
    ) and closed.answered_at is not None
    assert score_pending(quick.pk) == 1
    assert Trial.objects.get(pk=trial.pk).scores == {"accuracy": 0.0}


def test_a_reload_resumes_the_same_trial_with_the_time_already_spent(quick, annotator):
    p = _begin(quick, annotator)
    trial = current_trial(p)
    before = selectors.trial_payload(trial)
    assert (before["time_limit_ms"], before["elapsed_ms"], before["shown"]) == (60_000.0, None, False)
    _shown_ago(p, trial, 25_000)
    again = current_trial(p)
    after = selectors.trial_payload(again)
    assert again.pk == trial.pk and after["shown"] is True
    assert 25_000 <= after["elapsed_ms"] < 26_000
    mark_shown(p, trial.pk)  # the reloaded page reports it visible again: the first time stays
    assert 25_000 <= selectors.trial_payload(current_trial(p))["elapsed_ms"] < 26_000


def test_a_trial_without_a_limit_never_times_out(quick, annotator):
    Condition.objects.filter(study=quick).update(time_limit_s=None)
    p = _begin(quick, annotator)
    trial = current_trial(p)
    _shown_ago(p, trial, 3_600_000)
    assert current_trial(p).pk == trial.pk
    with pytest.raises(Invalid, match="give an answer"):
        answer_trial(p, trial.pk, None, 1000, "n")
    assert answer_trial(p, trial.pk, 1, 3_600_000, "n").timed_out is False
