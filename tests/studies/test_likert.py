"""Likert studies (VUDG Sec. 4.5; X-LeBench App. D): the control groups the platform builds, records
as items, and the written justification required below a score."""

import pytest

from annotator.errors import Invalid
from annotator.qa.models import QAPair
from annotator.studies.models import Item, Trial
from annotator.studies.services import answer_trial, create_study, current_trial, enroll, mark_shown, start
from tests.studies.conftest import api_as, people


def test_control_groups_pair_questions_with_other_answers_and_take_deleted_pairs(verified, project):
    verified(3, delete_open=1)
    study, report = create_study(
        project, "vudg", "likert", preset="vudg-quality", seed=11, options={"per_type": 30, "criteria": ["relevance"]}
    )
    items = list(Item.objects.filter(condition__study=study, role="scored").select_related("qa_pair"))
    groups = {g: [i for i in items if i.group == g] for g in ("real", "random_matched", "filtered")}
    verified_pairs = QAPair.objects.filter(status="verified")
    # Real: every verified pair (3 open + 3 multiple choice), with its own question and answer.
    assert sorted(i.qa_pair_id for i in groups["real"]) == sorted(verified_pairs.values_list("id", flat=True))
    assert all(
        i.payload["question"] == i.qa_pair.question and i.payload["answer"] == i.qa_pair.answer for i in groups["real"]
    )
    # Random-matched: one per real pair, the question and clip of that pair with another verified pair's answer.
    assert sorted(i.qa_pair_id for i in groups["random_matched"]) == sorted(i.qa_pair_id for i in groups["real"])
    other_answers = set(verified_pairs.values_list("answer", flat=True))
    for i in groups["random_matched"]:
        assert i.payload["question"] == i.qa_pair.question and i.payload["answer"] != i.qa_pair.answer
        assert i.payload["answer"] in other_answers
    # Filtered: the pairs deleted in review, as they were.
    assert sorted(i.qa_pair_id for i in groups["filtered"]) == sorted(
        QAPair.objects.filter(status="deleted").values_list("id", flat=True)
    )
    assert len(groups["filtered"]) == 3
    assert study.sampling["controls"] == {"random_matched": 6, "filtered": 3}
    # The same seed and data draw the same random matches.
    again, _ = create_study(
        project,
        "vudg-again",
        "likert",
        preset="vudg-quality",
        seed=11,
        options={"per_type": 30, "criteria": ["relevance"]},
    )
    assert sorted(
        (i.qa_pair_id, i.payload["answer"]) for i in Item.objects.filter(condition__study=again, group="random_matched")
    ) == sorted((i.qa_pair_id, i.payload["answer"]) for i in groups["random_matched"])


def test_records_are_rated_on_both_criteria_and_a_score_below_3_needs_a_justification(verified, project):
    verified(2)
    study, report = create_study(
        project,
        "realism",
        "likert",
        preset="xlebench-realism",
        options={"attention_items": 0, "questions_per_participant": 4},
    )
    assert report.items == {1: 2, 2: 2}  # two records (the two videos), realism and contextual consistency
    assert [c.variables["criterion"] for c in study.conditions.all()] == ["realism", "contextual_consistency"]
    person = people(project, 1)[0]
    participant = enroll(study, person)
    start(participant)
    trial = current_trial(participant)
    assert {t.item.condition.number for t in Trial.objects.filter(participant=participant)} == {1, 2}
    mark_shown(participant, trial.pk)
    with pytest.raises(Invalid, match="below 3 needs a short justification"):
        answer_trial(participant, trial.pk, {"score": 2, "justification": "  "}, 5.0, "k1")
    with pytest.raises(Invalid, match="whole number from 1 to 5"):
        answer_trial(participant, trial.pk, {"score": 6}, 5.0, "k2")
    trial.refresh_from_db()
    assert trial.answered_at is None and trial.response is None  # nothing kept from the refusals
    answer_trial(
        participant, trial.pk, {"score": 2, "justification": " daytime light at a night timestamp "}, 5.0, "k3"
    )
    trial.refresh_from_db()
    assert trial.response == {"score": 2, "justification": "daytime light at a night timestamp"}
    nxt = current_trial(participant)
    mark_shown(participant, nxt.pk)
    answer_trial(participant, nxt.pk, {"score": 4}, 5.0, "k4")  # 3 and up need none
    assert Trial.objects.get(pk=nxt.pk).response == {"score": 4, "justification": ""}


def test_the_api_refuses_an_unjustified_low_score_in_plain_words(verified, project):
    verified(1)
    study, _ = create_study(project, "realism", "likert", preset="xlebench-realism", options={"attention_items": 0})
    client = api_as(people(project, 1)[0])
    trial = client.post(f"/api/studies/{study.pk}/enroll/").json()["trial"]
    assert trial["content"]["justify_below"] == 3 and trial["content"]["criterion"] in (
        "realism",
        "contextual consistency",
    )
    client.post(f"/api/trials/{trial['trial_id']}/shown/")
    res = client.post(
        f"/api/trials/{trial['trial_id']}/answer/",
        {"response": {"score": 1}, "client_rt_ms": 3.0, "idempotency_key": "a"},
        format="json",
    )
    assert res.status_code == 400
    assert "justification" in res.json()["detail"]
    assert Trial.objects.get(pk=trial["trial_id"]).answered_at is None


def test_an_attention_item_says_which_score_to_pick_and_a_wrong_pick_flags_the_participant(verified, project):
    verified(1)
    study, _ = create_study(
        project,
        "att",
        "likert",
        preset="vudg-quality",
        options={
            "criteria": ["relevance"],
            "control_groups": False,
            "attention_items": 1,
            "questions_per_participant": 2,
        },
    )
    attention = Item.objects.get(condition__study=study, role="attention")
    assert f"give it the score {attention.truth}" in attention.payload["instruction"]
    for person, pick in zip(people(project, 2), (attention.truth, attention.truth % 5 + 1)):
        participant = enroll(study, person)
        start(participant)
        while (trial := current_trial(participant)) is not None:
            mark_shown(participant, trial.pk)
            score = pick if trial.item.role == "attention" else 4
            answer_trial(participant, trial.pk, {"score": score}, 5.0, f"k{trial.pk}")
        participant.refresh_from_db()
        if pick == attention.truth:
            assert not participant.excluded
        else:
            assert participant.excluded and participant.exclusion_reasons == ["1 attention checks failed, more than 0"]
