"""Anonymous panel participants through a study link (issue 19), with Django's test client as the
browser (CSRF enforced): create or resume by panel id, consent, screening, the trials through the
participant API, decline, a full study, and what such a session may not do. A real multiple-choice
study built from verified QA pairs over ffmpeg clips."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from annotator.studies import links
from annotator.studies.links import pseudonym_of
from annotator.studies.models import Participant, StudyLink, Trial
from annotator.studies.services import create_study
from tests.studies.conftest import verified  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def panel(verified, project):
    """A multiple-choice study of 2 scored items and 1 practice item, one rater per item and one
    question each (so two participants fill it), and a link to it; returns (study, token)."""
    cache.clear()  # the link pages' rate limit counts per address and minute in the cache
    verified(3)
    study, _ = create_study(
        project,
        "panel",
        "mcq",
        seed=3,
        options={
            "per_type": 2,
            "questions_per_participant": 1,
            "practice_items": 1,
            "attention_items": 0,
            "raters_per_item": 1,
        },
    )
    study.completion_url = "https://app.prolific.com/submissions/complete"
    study.save()
    return study, links.create_link(study).token


def browser() -> Client:
    return Client(enforce_csrf_checks=True)


def enter(client, token, pid="5f1e0000aaaabbbbccccdddd"):
    return client.get(f"/s/{token}/", {"PROLIFIC_PID": pid, "STUDY_ID": "st-1", "SESSION_ID": "se-1"})


def form(client, url, data):
    return client.post(url, {**data, "csrfmiddlewaretoken": client.cookies["csrftoken"].value})


def api(client, url, body=None):
    return client.post(
        url, body or {}, content_type="application/json", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value
    )


def through_screening(client, token):
    assert client.get(f"/s/{token}/").status_code == 200  # the consent page sets the CSRF cookie
    assert form(client, f"/s/{token}/consent/", {"decision": "accept"}).status_code == 302
    res = form(client, f"/s/{token}/screening/", {"width": "1366", "height": "768", "codec": "yes", "played": "yes"})
    assert res.status_code == 302, res.content


def answer_all(client, study):
    """Begin, then answer every trial (practice first) with option 0, as the page does."""
    state = api(client, f"/api/studies/{study.pk}/enroll/").json()
    answered = 0
    while state.get("trial") or state.get("next") == "current":
        if not state.get("trial"):
            state = client.get(f"/api/studies/{study.pk}/current/").json()
            continue
        tid = state["trial"]["trial_id"]
        assert api(client, f"/api/trials/{tid}/shown/").status_code == 200
        res = api(
            client, f"/api/trials/{tid}/answer/", {"response": 0, "client_rt_ms": 5, "idempotency_key": f"k{tid}"}
        )
        assert res.status_code == 200, res.content
        answered += 1
        state = res.json()
    return answered, state


def test_a_panel_participant_goes_from_the_link_to_the_completion_code_without_an_account(panel):
    study, token = panel
    client = browser()
    res = enter(client, token)
    assert (res.status_code, res["Location"]) == (302, f"/s/{token}/")
    p = Participant.objects.get(study=study)
    assert (p.user_id, p.kind, p.pseudonym, p.external_id, p.panel_study_id, p.panel_session_id) == (
        None,
        "person",
        pseudonym_of("5f1e0000aaaabbbbccccdddd"),
        "5f1e0000aaaabbbbccccdddd",
        "st-1",
        "se-1",
    )
    assert Trial.objects.filter(participant=p).count() == 2  # 1 practice + 1 scored
    assert client.cookies["sessionid"]["httponly"] is True
    assert b'id="consent"' in client.get(f"/s/{token}/").content
    assert api(client, f"/api/studies/{study.pk}/enroll/").status_code == 409  # not consented yet
    through_screening(client, token)
    page = client.get(f"/s/{token}/")
    assert b'id="take-config"' in page.content and f'"afterUrl": "/s/{token}/"'.encode() in page.content
    answered, state = answer_all(client, study)
    assert (answered, state["stage"]) == (2, "done")
    assert b'id="debrief"' in client.get(f"/s/{token}/").content
    done = client.get(f"/s/{token}/done/")
    p.refresh_from_db()
    assert p.export_status == "completed" and len(p.completion_code) == 10
    assert p.completion_code.encode() in done.content
    assert (f"https://app.prolific.com/submissions/complete?cc={p.completion_code}").encode() in done.content


def test_the_same_panel_id_resumes_the_same_participant_from_another_browser_and_never_enrols_twice(panel):
    study, token = panel
    first, second = browser(), browser()
    enter(first, token)
    through_screening(first, token)
    enter(second, token)
    assert Participant.objects.filter(study=study).count() == 1
    assert b'id="take-config"' in second.get(f"/s/{token}/").content  # consent and screening kept
    enter(browser(), token, pid="another-person")
    assert Participant.objects.filter(study=study).count() == 2


def test_a_link_with_another_panel_id_does_not_take_over_a_browser_that_is_taking_part(panel):
    """Found by the security review: a cross-site GET with someone else's panel id rebound the
    session to that participant, whose completion code would then be paid for this person's work."""
    study, token = panel
    client = browser()
    enter(client, token, pid="victim-pid")
    through_screening(client, token)
    key = client.cookies["sessionid"].value
    res = enter(client, token, pid="attacker-pid")
    assert res.status_code == 409 and b"already taking this study" in res.content
    assert not Participant.objects.filter(study=study, pseudonym=pseudonym_of("attacker-pid")).exists()
    assert client.cookies["sessionid"].value == key
    assert b'id="take-config"' in client.get(f"/s/{token}/").content  # still the victim's own page


def test_no_trial_is_shown_or_answered_before_consent_and_screening(panel):
    """Found by the security review: a trial id could be shown and answered straight after entering,
    before the consent page was accepted, and a decline then kept those answers."""
    study, token = panel
    client = browser()
    enter(client, token)
    client.get(f"/s/{token}/")
    p = Participant.objects.get(study=study)
    for trial in Trial.objects.filter(participant=p):
        assert api(client, f"/api/trials/{trial.pk}/shown/").status_code == 409
        res = api(client, f"/api/trials/{trial.pk}/answer/", {"response": 0, "client_rt_ms": 5, "idempotency_key": "k"})
        assert res.status_code == 409 and "consent" in res.json()["detail"]
    assert not Trial.objects.filter(participant=p).exclude(shown_at=None).exists()
    assert not Trial.objects.filter(participant=p).exclude(answered_at=None).exists()


def test_a_declined_consent_ends_with_a_returned_code_and_releases_the_items(panel):
    study, token = panel
    client = browser()
    enter(client, token)
    client.get(f"/s/{token}/")
    form(client, f"/s/{token}/consent/", {"decision": "decline"})
    p = Participant.objects.get(study=study)
    assert (p.status, p.export_status, p.completion_code[:4]) == ("returned", "returned", "RET-")
    assert Trial.objects.filter(participant=p).count() == 0
    page = client.get(f"/s/{token}/")
    assert p.completion_code.encode() in page.content and b"You chose not to take part" in page.content


def test_a_full_study_shows_its_page_and_keeps_no_participant(panel):
    study, token = panel
    for pid in ("first-person", "second-person"):
        enter(browser(), token, pid=pid)
    res = enter(browser(), token, pid="third-person")
    assert res.status_code == 200 and b"This study is full" in res.content
    assert b"All your questions are answered" not in res.content
    assert not Participant.objects.filter(pseudonym=pseudonym_of("third-person")).exists()
    assert Participant.objects.filter(study=study).count() == 2


def test_a_link_admits_at_most_its_maximum(panel):
    study, _ = panel
    token = links.create_link(study, max_participants=1).token
    enter(browser(), token, pid="first-person")
    assert b"This study is full" in enter(browser(), token, pid="second-person").content
    assert StudyLink.objects.get(token_hash=links.token_hash(token)).participants.count() == 1


def test_the_screening_refuses_a_small_window_in_plain_words(panel):
    study, token = panel
    client = browser()
    enter(client, token)
    client.get(f"/s/{token}/")
    form(client, f"/s/{token}/consent/", {"decision": "accept"})
    res = form(client, f"/s/{token}/screening/", {"width": "800", "height": "500", "codec": "yes", "played": "yes"})
    assert res.status_code == 400
    assert b"Your window is 800 x 500 pixels; this study needs at least 1024 x 600." in res.content
    assert Participant.objects.get(study=study).screened_at is None


def test_unknown_tokens_and_a_link_without_a_panel_id_say_nothing_of_any_study(panel):
    study, token = panel
    client = browser()
    res = client.get("/s/" + "A" * 32 + "/", {"PROLIFIC_PID": "x"})
    assert res.status_code == 404 and study.name.encode() not in res.content
    res = client.get(f"/s/{token}/")
    assert res.status_code == 400 and Participant.objects.count() == 0
    res = client.get(f"/s/{token}/", {"PROLIFIC_PID": "bad id with spaces"})
    assert res.status_code == 400 and Participant.objects.count() == 0
