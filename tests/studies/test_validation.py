"""Response validation per kind: ``validate`` (a participant's answer, the API's shape) refuses bad
answers with Invalid in plain words, naming the field, and returns the stored form of good ones;
``validate_prediction`` (an imported model prediction) does the same with ValueError. Items and
trials are real rows without media (nothing here reads a file)."""

from datetime import timedelta

import pytest
from django.db.models import F

from annotator.errors import Invalid
from annotator.studies.handles import handles_of
from annotator.studies.kinds import likert, mcq, open_answer, ordering
from annotator.studies.models import Condition, Item, Participant, Study, Trial
from annotator.studies.services import answer_trial, current_trial, enroll, mark_shown, start

ELEMENTS = [101, 102, 103, 104]


@pytest.fixture
def make_trial(project, annotator):
    """Factory: a trial of ``annotator`` on one item of a one-condition study of ``kind``."""

    def make(kind: str, truth, payload: dict) -> Trial:
        study = Study.objects.create(project=project, name=f"v-{kind}", kind=kind, questions_per_participant=1)
        cond = Condition.objects.create(study=study, number=1, label="one")
        item = Item.objects.create(condition=cond, index=0, truth=truth, payload=payload)
        participant = Participant.objects.create(study=study, user=annotator, stage="trials")
        return Trial.objects.create(participant=participant, item=item, position=0)

    return make


def _refused(validate, trial, response) -> Invalid:
    with pytest.raises(Invalid) as caught:
        validate(trial, response)
    return caught.value


# ------------------------------------------------------------------------------ multiple choice

MCQ = {"question": "Which object appears?", "options": ["pan", "cup", "lamp"], "media": []}


@pytest.mark.parametrize("response", [3, -1, "1", 1.0, True, None, [1]])
def test_multiple_choice_refuses_anything_but_an_option_index(make_trial, response):
    trial = make_trial("mcq", 1, MCQ)
    error = _refused(mcq.validate, trial, response)
    assert str(error) == "the answer must be an option index from 0 to 2"
    assert error.errors == {"response": "the answer must be an option index from 0 to 2"}
    with pytest.raises(ValueError, match="the answer must be an option index from 0 to 2"):
        mcq.validate_prediction(trial.item, response)


def test_multiple_choice_takes_any_option_index_right_or_wrong(make_trial):
    trial = make_trial("mcq", 1, MCQ)
    assert [mcq.validate(trial, i) for i in (0, 1, 2)] == [0, 1, 2]
    assert mcq.validate_prediction(trial.item, 2) == 2


# ------------------------------------------------------------------------------ open answers

OPEN = {"question": "What does the person pour?", "media": []}


@pytest.mark.parametrize("response", ["", "   \n", "x" * 4001, 7, None, ["water"]])
def test_an_open_answer_must_be_a_text_of_1_to_4000_characters(make_trial, response):
    trial = make_trial("open_answer", "water", OPEN)
    error = _refused(open_answer.validate, trial, response)
    assert str(error) == "the answer must be a text of 1 to 4000 characters"
    assert error.errors == {"response": "the answer must be a text of 1 to 4000 characters"}
    with pytest.raises(ValueError, match="the answer must be a text of 1 to 4000 characters"):
        open_answer.validate_prediction(trial.item, response)


def test_an_open_answer_is_kept_trimmed(make_trial):
    trial = make_trial("open_answer", "water", OPEN)
    assert open_answer.validate(trial, "  Some water.\n") == "Some water."
    assert open_answer.validate(trial, "x" * 4000) == "x" * 4000
    assert open_answer.validate_prediction(trial.item, " milk ") == "milk"


# ------------------------------------------------------------------------------ Likert

LIKERT = {
    "criterion": "realism",
    "scale": likert.CRITERIA["realism"],
    "justify_below": 3,
    "description": "a day",
    "media": [],
}


@pytest.mark.parametrize(
    "response, message, field",
    [
        (4, 'the answer must be {"score": 1-5, "justification": "..."}', "response"),
        ({"score": 4, "comment": "x"}, 'the answer must be {"score": 1-5, "justification": "..."}', "response"),
        ({"score": 0}, "the score must be a whole number from 1 to 5", "score"),
        ({"score": 6}, "the score must be a whole number from 1 to 5", "score"),
        ({"score": 4.5}, "the score must be a whole number from 1 to 5", "score"),
        ({"score": True}, "the score must be a whole number from 1 to 5", "score"),
        ({"justification": "fine"}, "the score must be a whole number from 1 to 5", "score"),
        (
            {"score": 4, "justification": 5},
            "the justification must be a text of at most 2000 characters",
            "justification",
        ),
        (
            {"score": 4, "justification": "x" * 2001},
            "the justification must be a text of at most 2000 characters",
            "justification",
        ),
        ({"score": 2}, "a score below 3 needs a short justification: say what is wrong", "justification"),
        (
            {"score": 1, "justification": "   "},
            "a score below 3 needs a short justification: say what is wrong",
            "justification",
        ),
    ],
)
def test_likert_refuses_a_bad_rating_in_plain_words(make_trial, response, message, field):
    trial = make_trial("likert", None, LIKERT)
    error = _refused(likert.validate, trial, response)
    assert str(error) == message
    assert list(error.errors) == [field]


def test_likert_takes_a_score_with_its_justification_trimmed(make_trial):
    trial = make_trial("likert", None, LIKERT)
    assert likert.validate(trial, {"score": 2, "justification": " the kitchen changes mid-way "}) == {
        "score": 2,
        "justification": "the kitchen changes mid-way",
    }
    assert likert.validate(trial, {"score": 3}) == {"score": 3, "justification": ""}
    assert likert.validate(trial, {"score": 5, "justification": None}) == {"score": 5, "justification": ""}


def test_likert_without_a_justification_rule_takes_a_bare_low_score(make_trial):
    trial = make_trial("likert", None, {**LIKERT, "justify_below": 0})
    assert likert.validate(trial, {"score": 1}) == {"score": 1, "justification": ""}


@pytest.mark.parametrize("predicted", [0, 6, 3.0, "3", True, {"score": 3}])
def test_a_likert_prediction_must_be_a_whole_score(make_trial, predicted):
    trial = make_trial("likert", None, LIKERT)
    with pytest.raises(ValueError, match='"predicted" must be a score, a whole number from 1 to 5'):
        likert.validate_prediction(trial.item, predicted)
    assert likert.validate_prediction(trial.item, 3) == 3


# ------------------------------------------------------------------------------ ordering


def _ordering_trial(make_trial, hints=()):
    return make_trial("ordering", ELEMENTS, {"shown": [103, 101, 104, 102], "hints": list(hints), "annotation": ""})


def _handles(trial, ids):
    handles = handles_of(trial.pk, trial.item.truth)
    return [handles.get(i, "0123456789abcdef") for i in ids]


def test_an_ordering_in_handles_is_stored_as_element_ids(make_trial):
    trial = _ordering_trial(make_trial)
    assert ordering.validate(trial, _handles(trial, [102, 101, 104, 103])) == [102, 101, 104, 103]


@pytest.mark.parametrize(
    "order, message, field",
    [
        ([101, 102, 103], "the answer must name each of the 4 elements exactly once", "response"),
        ([101, 102, 103, 103], "the answer must name each of the 4 elements exactly once", "response"),
        ([101, 102, 103, 999], "order[3] is not one of this trial's elements", "order[3]"),
    ],
)
def test_an_ordering_that_is_not_the_trials_elements_is_refused(make_trial, order, message, field):
    trial = _ordering_trial(make_trial)
    error = _refused(ordering.validate, trial, _handles(trial, order))
    assert str(error) == message
    assert list(error.errors) == [field]


def test_another_trials_handles_are_not_this_trials_elements(make_trial):
    trial = _ordering_trial(make_trial)
    other = Trial(pk=trial.pk + 1000, item=trial.item)
    error = _refused(ordering.validate, trial, _handles(other, ELEMENTS))
    assert str(error) == "order[0] is not one of this trial's elements"


@pytest.mark.parametrize("response", ["101,102,103,104", [101, 102, 103, 104], None, ["a"] * 33])
def test_an_ordering_must_be_a_list_of_handles(make_trial, response):
    trial = _ordering_trial(make_trial)
    error = _refused(ordering.validate, trial, response)
    assert str(error) == "response must be the list of this trial's element handles, earliest first"
    assert error.errors == {"response": "a list of handles"}


def test_a_hint_must_stay_in_its_place(make_trial):
    trial = _ordering_trial(make_trial, hints=[2, 4])  # 102 pinned second, 104 fourth
    error = _refused(ordering.validate, trial, _handles(trial, [101, 104, 103, 102]))
    assert (str(error), error.errors) == ("the hint at position 2 must stay where it is", {"response": "a hint moved"})
    error = _refused(ordering.validate, trial, _handles(trial, [103, 102, 104, 101]))
    assert str(error) == "the hint at position 4 must stay where it is"
    assert ordering.validate(trial, _handles(trial, [103, 102, 101, 104])) == [103, 102, 101, 104]


def test_an_ordering_prediction_is_the_items_element_ids(make_trial):
    trial = _ordering_trial(make_trial)
    assert ordering.validate_prediction(trial.item, [104, 103, 102, 101]) == [104, 103, 102, 101]
    with pytest.raises(ValueError, match='"predicted" must be a list of element ids'):
        ordering.validate_prediction(trial.item, "101 102 103 104")
    with pytest.raises(ValueError, match="expected 4 elements, got 2"):
        ordering.validate_prediction(trial.item, [101, 102])
    with pytest.raises(ValueError, match=r"not the item's elements \(missing \[104\], unknown \[105\]\)"):
        ordering.validate_prediction(trial.item, [101, 102, 103, 105])


# ------------------------------------------------------------------------------ through the service


@pytest.mark.parametrize(
    "kind, truth, payload, bad, good",
    [
        ("mcq", 1, MCQ, 7, 1),
        ("open_answer", "water", OPEN, "   ", "water"),
        ("likert", None, LIKERT, {"score": 2}, {"score": 2, "justification": "blurry"}),
    ],
)
def test_a_refused_answer_leaves_the_trial_unanswered(project, annotator, kind, truth, payload, bad, good):
    study = Study.objects.create(project=project, name=f"svc-{kind}", kind=kind, questions_per_participant=1)
    cond = Condition.objects.create(study=study, number=1, label="one")
    Item.objects.create(condition=cond, index=0, truth=truth, payload=payload)
    p = enroll(study, annotator)
    start(p)
    trial = current_trial(p)
    mark_shown(p, trial.pk)
    Trial.objects.filter(pk=trial.pk).update(shown_at=F("shown_at") - timedelta(seconds=5))
    before = Trial.objects.filter(pk=trial.pk).values().get()
    with pytest.raises(Invalid):
        answer_trial(p, trial.pk, bad, 4000.0, "k1")
    assert Trial.objects.filter(pk=trial.pk).values().get() == before
    assert answer_trial(p, trial.pk, good, 4000.0, "k2").response == good
