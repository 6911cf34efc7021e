"""The study API as the page uses it, on ordering items: handles in, handles out; the server's clock
per trial starts at the page's "shown" report; people who can export the truth are refused in plain
words."""

import time

import pytest
from django.test import Client

from annotator.studies.models import Participant, Trial
from annotator.studies.selectors import server_rt_ms, trials_export
from tests.studies.conftest import api_as, people


@pytest.fixture
def pilot(build):
    return build(40.0, questions_per_participant=2, conditions_per_participant=1)


def test_feedback_read_for_3_s_does_not_count_into_the_next_trial(pilot, project):
    client = api_as(people(project, 1)[0])
    practice = client.post(f"/api/studies/{pilot.pk}/enroll/").json()["trial"]
    assert practice["practice"] and not practice["shown"] and practice["elapsed_ms"] is None
    client.post(f"/api/trials/{practice['trial_id']}/shown/")
    time.sleep(0.3)
    body = client.post(
        f"/api/trials/{practice['trial_id']}/answer/",
        {
            "response": [e["handle"] for e in practice["content"]["elements"]],
            "client_rt_ms": 300,
            "idempotency_key": "p",
        },
        format="json",
    ).json()
    truth = body["feedback"]["truth"]
    assert sorted(truth) == sorted(e["handle"] for e in practice["content"]["elements"])  # feedback in handles too
    assert body["trial"] is None  # the next trial comes when asked for
    time.sleep(3.0)  # reading the feedback
    nxt = client.get(f"/api/studies/{pilot.pk}/current/").json()["trial"]
    shown = client.post(f"/api/trials/{nxt['trial_id']}/shown/").json()
    time.sleep(1.5)  # a 1.5 s answer
    res = client.post(
        f"/api/trials/{nxt['trial_id']}/answer/",
        {"response": [e["handle"] for e in nxt["content"]["elements"]], "client_rt_ms": 1500, "idempotency_key": "t"},
        format="json",
    )
    assert res.status_code == 200, res.content
    trial = Trial.objects.get(pk=nxt["trial_id"])
    assert shown["elapsed_ms"] < 500
    assert 1500 <= server_rt_ms(trial) < 2000, server_rt_ms(trial)  # not 4.5 s
    answered_practice = Trial.objects.get(pk=practice["trial_id"]).answered_at
    assert (trial.served_at - answered_practice).total_seconds() >= 3.0  # served after the feedback was read
    row = next(r for r in trials_export(pilot) if r["item_id"] == trial.item_id)
    assert row["shown_at"] == trial.shown_at.isoformat() and row["server_rt_ms"] == server_rt_ms(trial)
    assert (
        row["response"] == trial.item.payload["shown"]
    )  # the researcher's export keeps element ids (answered in shown order)


def test_answers_name_elements_by_this_trials_handles_only(pilot, project):
    first, second = people(project, 2)
    client = api_as(first)
    trial = client.post(f"/api/studies/{pilot.pk}/enroll/").json()["trial"]
    client.post(f"/api/trials/{trial['trial_id']}/shown/")
    other = api_as(second).post(f"/api/studies/{pilot.pk}/enroll/").json()["trial"]
    element_ids = Trial.objects.get(pk=trial["trial_id"]).item.payload["shown"]
    url = f"/api/trials/{trial['trial_id']}/answer/"
    for order in (
        element_ids,
        [e["handle"] for e in other["content"]["elements"]],
    ):  # element ids; another trial's handles
        res = client.post(url, {"response": order, "client_rt_ms": 1, "idempotency_key": "x"}, format="json")
        assert res.status_code == 400, res.content
    assert Trial.objects.get(pk=trial["trial_id"]).response is None
    res = client.post(
        url,
        {"response": [e["handle"] for e in trial["content"]["elements"]], "client_rt_ms": 1, "idempotency_key": "x"},
        format="json",
    )
    assert res.status_code == 200
    assert Trial.objects.get(pk=trial["trial_id"]).response == element_ids  # stored as element ids


@pytest.mark.parametrize("role", ["admin", "reviewer", "researcher"])
def test_people_who_can_export_the_truth_are_refused_in_plain_words(pilot, project, role):
    person = people(project, 1, role=role, prefix=role)[0]
    res = api_as(person).post(f"/api/studies/{pilot.pk}/enroll/")
    assert res.status_code == 403
    assert res.json()["detail"].startswith(
        f"You cannot take part in this study: your role ({role}) lets you see or export"
    )
    page = Client()
    page.force_login(person)
    html = page.get(f"/projects/{project.slug}/studies/{pilot.name}/")
    assert html.status_code == 403
    assert (
        "You cannot take part in this study" in html.content.decode() and "studies/take.js" not in html.content.decode()
    )
    assert not Participant.objects.exists()
