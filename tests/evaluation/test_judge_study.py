"""One judge for people and models (issue 18, part 3): ``study_scores NAME --judge-server S`` judges an
open-answer study's answers, people's and a model participant's, with the judge stage and rubric
evaluations use (EgoNight seed 000 App. A.5.1), through a real worker and the loopback server; the
judgement joins exact match and token F1 in each trial's scores and in the table, per respondent;
judging again is answered from the cache."""

# ruff: noqa: F811 (fixtures imported from tests/studies/conftest.py are test parameters)
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.evaluation import prompts
from annotator.inference.models import ModelCall
from annotator.studies import services
from annotator.studies.models import Participant, Trial
from tests.fake_model_server import user_text
from tests.studies.conftest import people, verified  # noqa: F401 (fixture: verified units)

pytestmark = pytest.mark.django_db(transaction=True)


def _judge(body: dict) -> dict:
    """The loopback judge: an answer containing "right" is correct (5), anything else incorrect (1)."""
    answer = user_text(body).split("Predicted Answer:")[-1].split("\n")[0]
    return (
        {"pred": "correct", "score": 5, "reason": "matches"}
        if "right" in answer
        else {"pred": "incorrect", "score": 1, "reason": "does not match"}
    )


def test_people_and_a_model_are_judged_by_one_judge_beside_exact_match(
    verified, project, worker, add_server, model_server
):
    verified(2)
    study, _ = services.create_study(project, "open", "open_answer", seed=1, options={"questions_per_participant": 4})
    n_items = study.conditions.get().items.count()
    assert n_items >= 2
    # Two people answer every item: one "right ...", one "wrong ...".
    for person, word in zip(people(project, 2, prefix="o"), ("right", "wrong")):
        p = services.enroll(study, person)
        services.start(p)
        while (trial := services.current_trial(p)) is not None:
            services.mark_shown(p, trial.pk)
            services.answer_trial(p, trial.pk, f"{word} answer", client_rt_ms=1.0, idempotency_key=f"{p.pk}-{trial.pk}")
            p.refresh_from_db()
    # The model answers through evaluate --study; its open answers are "right" too.
    model_server.responders[""] = lambda body: "A right answer."
    model_server.responders["judge"] = _judge
    add_server("fake")
    call_command("evaluate", "--study", "open", "--server", "fake", stdout=StringIO(), stderr=StringIO())
    asked = len(model_server.requests)

    out = StringIO()
    call_command("study_scores", "open", "--judge-server", "fake", "--json", stdout=out, stderr=StringIO())
    judged = [b for b in model_server.requests[asked:]]
    # Every answer of the people was judged; the model's were judged in its evaluation with the same
    # judge, rubric and text, so they came from the cache.
    by_people = Trial.objects.filter(participant__study=study, participant__kind="person").count()
    # (People's answers with the same question, truth and text are one judge input: asked once.)
    assert by_people == 8 and 0 < len(judged) <= by_people
    person_trials = set(
        Trial.objects.filter(participant__study=study, participant__kind="person").values_list("pk", flat=True)
    )
    assert {c.request["trial"] for c in ModelCall.objects.filter(request__has_key="trial")} >= person_trials
    assert all(b["messages"][0]["content"] == prompts.JUDGE.system for b in judged)
    rows = json.loads(out.getvalue())["rows"]
    got = {}
    for r in rows:  # one row per QA type and respondent: pooled here
        acc, score = r["metrics"]["judge_accuracy"], r["metrics"]["judge_score"]
        a, s, n = got.get(r["respondent"], (0.0, 0.0, 0))
        got[r["respondent"]] = (a + acc["mean"] * acc["n"], s + score["mean"] * score["n"], n + acc["n"])
    got = {who: (a / n, s / n, n) for who, (a, s, n) in got.items()}
    assert got == {"human": (0.5, 3.0, 8), "fake-vlm": (1.0, 5.0, n_items)}
    for trial in Trial.objects.filter(participant__study=study):
        right = "right" in trial.response
        assert trial.scores["judge_accuracy"] == (1.0 if right else 0.0)
        assert trial.scores["judge_score"] == (5.0 if right else 1.0)
        assert set(trial.scores) >= {"exact_match", "token_f1"}  # kept beside the judge's

    # Judged again: every answer from the cache, no request, no cost.
    before, calls = len(model_server.requests), ModelCall.objects.count()
    call_command("study_scores", "open", "--judge-server", "fake", stdout=StringIO(), stderr=StringIO())
    assert len(model_server.requests) == before
    assert ModelCall.objects.filter(cached_from__isnull=False).count() >= ModelCall.objects.count() - calls

    # Only open answers are judged, by a server the project has.
    with pytest.raises(CommandError, match="has no model server 'nope'"):
        call_command("study_scores", "open", "--judge-server", "nope", stdout=StringIO(), stderr=StringIO())
    assert Participant.objects.filter(study=study, kind="model").count() == 1
