"""Nothing a participant's browser receives reveals the truth, in any kind (issue 8, Integrity).

Real studies are built from verified QA pairs over real clips (cut by ffmpeg), and two annotators
take part through the API as the page does, while every body they receive (the take page's HTML,
enrol, current, shown and answer responses) is kept. Then: no right option, no verified answer, no
draft, no item id, no source file name or video hash, and the only media are the content-named
clips of the current trial, fetchable only while it is open.
"""

import json
import re

import pytest
from django.test import Client

from annotator.qa.models import QAPair
from annotator.studies.kinds.mcq import option_seed, shuffled
from annotator.studies.models import Item, Trial
from annotator.studies.services import create_study
from tests.conftest import without_random_tokens
from tests.studies.conftest import api_as, people

CLIP_URL = re.compile(r"^/files/studyclips/[0-9a-f]{64}\.mp4$")
TRIAL_KEYS = {"trial_id", "kind", "practice", "number", "of", "time_limit_ms", "elapsed_ms", "shown", "content"}


def _take_part(user, study, answer) -> list[str]:
    """Take the whole study as ``user`` through the API, answering with ``answer(content)``; returns
    every body received (the take page's HTML first), and checks each trial's clips on the way."""
    page = Client()
    page.force_login(user)
    html = page.get(f"/projects/{study.project.slug}/studies/{study.name}/")
    assert html.status_code == 200
    client = api_as(user)
    bodies = [html.content.decode()]
    res = client.post(f"/api/studies/{study.pk}/enroll/")
    while True:
        assert res.status_code == 200, res.content
        bodies.append(res.content.decode())
        trial = res.json()["trial"]
        if trial is None:
            return bodies
        assert set(trial) == TRIAL_KEYS
        for video in trial["content"].get("videos", []):
            assert CLIP_URL.match(video["url"]) and re.fullmatch(r"Video \d+", video["label"])
            assert page.get(video["url"]).status_code == 200  # the open trial's clip plays
        shown = client.post(f"/api/trials/{trial['trial_id']}/shown/")
        bodies.append(shown.content.decode())
        res = client.post(
            f"/api/trials/{trial['trial_id']}/answer/",
            {"response": answer(trial["content"]), "client_rt_ms": 5.0, "idempotency_key": f"k{trial['trial_id']}"},
            format="json",
        )


def _keys(value) -> set[str]:
    """Every key of every object in a JSON value, at any depth."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _assert_nothing_given_away(bodies: list[str], study, forbidden: list[str], forbidden_keys=frozenset()):
    # Random tokens blanked first: "cup" turns up in the page's CSRF tokens about once in 3,800 pages.
    text, blanked = without_random_tokens("\n".join(bodies))
    assert blanked >= 1  # the page's CSRF meta tag at least: the pattern still finds the tokens
    keys = {k for b in bodies[1:] for k in _keys(json.loads(b))}
    bad = keys & {
        "item_id",
        "qa_pair_id",
        "truth",
        "answer",
        "answer_index",
        "group",
        "subtask",
        "seed",
        "key",
        *forbidden_keys,
    }
    assert not bad, bad
    for item in Item.objects.filter(condition__study=study).select_related("footage"):
        video = item.footage
        assert video.sha256[:16] not in text and video.filename not in text
        assert "renditions/" not in text and "original" not in text
    for value in forbidden:
        assert value not in text, value


@pytest.fixture
def taken(verified, project):
    builder, units = verified(3)
    return builder, people(project, 2)


def test_multiple_choice_sends_no_correctness_and_shuffles_the_right_option(taken, project):
    builder, takers = taken
    study, report = create_study(
        project, "mc", "mcq", seed=3, options={"time_limits": [60], "questions_per_participant": 3}
    )
    assert report.items == {1: 3}
    pairs = list(QAPair.objects.filter(options__isnull=False))
    places = {Item.objects.get(qa_pair=p).payload["options"].index(p.options[p.answer_index]) for p in pairs}
    for person in takers:
        bodies = _take_part(person, study, lambda content: 0)
        _assert_nothing_given_away(bodies, study, [], {"correct", "feedback"})
        # The content names the options only by letter and text.
        assert all('"letter"' in b for b in bodies if '"options"' in b)
    assert Trial.objects.filter(participant__study=study, answered_at__isnull=False).count() == 6
    # Drafted options put "cup" second every time. Each item's options are shuffled from its pair's
    # recorded seed, and those seeds move the right option (whether three pairs land in one place
    # depends on their ids, which depend on the tests run before: checked over many seeds instead).
    for p in pairs:
        assert (
            Item.objects.get(qa_pair=p).payload["options"]
            == shuffled(list(p.options), p.answer_index, option_seed(3, p.pk))[0]
        )
    assert places <= {0, 1, 2, 3}
    assert (
        len(
            {shuffled(list(pairs[0].options), pairs[0].answer_index, option_seed(s, pairs[0].pk))[1] for s in range(40)}
        )
        > 1
    )
    # Every clip the participants fetched is closed to them once their trials are answered.
    person = takers[0]
    page = Client()
    page.force_login(person)
    for item in Item.objects.filter(condition__study=study):
        for media in item.payload["media"]:
            assert page.get(f"/files/{media['name']}").status_code == 404


def test_open_answers_send_neither_the_draft_nor_the_verified_answer_nor_anyone_elses(taken, project):
    builder, (first, second) = taken
    study, _ = create_study(project, "open", "open_answer", options={"questions_per_participant": 9})
    answers = list(QAPair.objects.filter(status="verified").values_list("answer", flat=True))
    _take_part(first, study, lambda content: "a secret sentence from the first person")
    bodies = _take_part(second, study, lambda content: "my own words")
    _assert_nothing_given_away(bodies, study, [*answers, "a secret sentence from the first person", "draft"])
    assert set(Trial.objects.filter(participant__user=second).values_list("response", flat=True)) == {"my own words"}


def test_the_people_who_built_the_pairs_cannot_take_the_multiple_choice_study(taken, project):
    builder, _ = taken
    study, _ = create_study(project, "mc", "mcq", options={"time_limits": [60]})
    res = api_as(builder).post(f"/api/studies/{study.pk}/enroll/")
    assert res.status_code == 403
    assert "independent evaluators" in res.json()["detail"]
    assert not Trial.objects.filter(participant__user=builder).exists()


def test_the_queue_does_not_serve_a_unit_whose_pair_the_person_still_has_to_answer(verified, project):
    from annotator.qa.queue import claim_next
    from annotator.qa.services import set_queue_policy
    from annotator.studies.services import answer_trial, current_trial, enroll, mark_shown, start

    set_queue_policy(project, double_check_share=1.0)  # every first pass queues a double-check, showing the answers
    verified(2)
    study, _ = create_study(project, "open", "open_answer", options={"questions_per_participant": 6})
    person = people(project, 1)[0]
    participant = enroll(study, person)
    start(participant)
    assert Trial.objects.filter(participant=participant).count() == 4  # 2 open pairs per unit (no multiple choice)
    assert claim_next(project, person) is None  # both double-checks would show pairs of open trials
    while (trial := current_trial(participant)) is not None:
        mark_shown(participant, trial.pk)
        answer_trial(participant, trial.pk, "an answer", 1.0, f"k{trial.pk}")
    assert claim_next(project, person).kind == "double_check"  # answered: the units come back


def test_likert_items_never_say_which_group_they_are_in(verified, project):
    verified(3, delete_open=1)
    study, _ = create_study(
        project,
        "vudg",
        "likert",
        preset="vudg-quality",
        seed=2,
        options={"criteria": ["correctness"], "questions_per_participant": 30, "attention_items": 0},
    )
    assert set(Item.objects.filter(condition__study=study).values_list("group", flat=True)) == {
        "real",
        "random_matched",
        "filtered",
    }
    person = people(project, 1)[0]
    bodies = _take_part(person, study, lambda content: {"score": 3})
    keys = {k for b in bodies[1:] for k in _keys(json.loads(b))}
    assert not keys & {"item_id", "qa_pair_id", "truth", "group", "subtask", "seed", "key", "status", "deleted"}
    text = "\n".join(bodies)
    for word in ("random_matched", "random-matched", "filtered", "deleted", "vague"):
        assert word not in text, word
    # The person rated one version of each verified pair (real or random-matched, never both: they share a
    # key) and each filtered pair, each shown with a clip of its question's pair.
    assert Trial.objects.filter(participant__user=person, answered_at__isnull=False).count() == 9
