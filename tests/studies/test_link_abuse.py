"""Abuse of study links (issue 19): link pages are rate-limited per address (a plain 429); the
participant's pages and POST endpoints need the CSRF token; an anonymous session learns nothing of
other studies and has no rights beyond its own trials, and fetches only the media of the trial it
is on."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from annotator.studies.models import Participant, Study, Trial
from tests.studies.conftest import verified  # noqa: F401 (a fixture)
from tests.studies.test_link_participants import api, browser, enter, panel, through_screening  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def test_link_pages_are_rate_limited_per_address_with_a_plain_429(panel, settings):
    study, token = panel
    settings.STUDY_LINK_RATE_PER_MIN = 3
    cache.clear()
    # Each panel id from its own browser, all from one address (one browser taking part is not
    # taken over by another id: test_link_participants).
    assert [enter(browser(), token, pid=f"p{i}").status_code for i in range(3)] == [302, 302, 200]  # p2: full
    res = enter(browser(), token, pid="p3")
    assert (res.status_code, res["Content-Type"]) == (429, "text/plain; charset=utf-8")
    assert res.content == b"Too many requests from your address. Wait a minute and try again.\n"
    assert 1 <= int(res["Retry-After"]) <= 60
    assert browser().get("/s/" + "B" * 32 + "/").status_code == 429  # guessing tokens counts too
    assert Participant.objects.filter(study=study).count() == 2  # p2 found the study full, p3 never got in
    other = browser()
    res = other.get(f"/s/{token}/", {"pid": "p9"}, REMOTE_ADDR="10.1.2.3")  # another address is not held back
    assert res.status_code == 200 and b"This study is full" in res.content


def test_posts_without_the_csrf_token_are_refused_and_change_nothing(panel):
    study, token = panel
    client = browser()
    enter(client, token)
    client.get(f"/s/{token}/")
    assert client.post(f"/s/{token}/consent/", {"decision": "accept"}).status_code == 403
    assert Participant.objects.get().consented_at is None
    through_screening(client, token)
    assert client.post(f"/api/studies/{study.pk}/enroll/", {}, content_type="application/json").status_code == 403
    state = api(client, f"/api/studies/{study.pk}/enroll/").json()
    tid = state["trial"]["trial_id"]
    assert client.post(f"/api/trials/{tid}/shown/", {}, content_type="application/json").status_code == 403
    assert Trial.objects.get(pk=tid).shown_at is None


def test_a_session_has_no_rights_beyond_its_own_trials(panel, project):
    study, token = panel
    other = Study.objects.create(project=project, name="elsewhere", kind="mcq")
    mine, theirs = browser(), browser()
    for client, pid in ((mine, "me"), (theirs, "them")):
        enter(client, token, pid=pid)
        through_screening(client, token)
    my_trial = api(mine, f"/api/studies/{study.pk}/enroll/").json()["trial"]
    their_trial = api(theirs, f"/api/studies/{study.pk}/enroll/").json()["trial"]
    for url in (f"/api/studies/{other.pk}/current/", "/api/studies/999999/current/"):
        res = mine.get(url)
        assert (res.status_code, res.json()) == (404, {"detail": "no such study", "errors": {}})
    assert api(mine, f"/api/studies/{other.pk}/enroll/").status_code == 404
    for url in (f"/api/trials/{their_trial['trial_id']}/shown/", f"/api/trials/{their_trial['trial_id']}/answer/"):
        assert api(mine, url, {"response": 0, "client_rt_ms": 5, "idempotency_key": "x"}).status_code == 404
    assert Trial.objects.get(pk=their_trial["trial_id"]).shown_at is None
    for url in (
        f"/api/studies/{study.pk}/results/",
        f"/api/studies/{study.pk}/items/",
        f"/api/studies/{study.pk}/trials/",
        f"/api/studies/{study.pk}/participants/",
        f"/api/projects/{project.slug}/studies/",
    ):
        assert mine.get(url).status_code in (401, 403), url
    assert api(mine, f"/api/studies/{study.pk}/links/").status_code in (401, 403)
    assert mine.get(f"/projects/{project.slug}/studies/{study.name}/results/").status_code == 302  # to the login page
    assert my_trial["trial_id"] != their_trial["trial_id"]


def test_a_session_fetches_only_the_media_of_the_trial_it_is_on(panel, project):
    from annotator.studies.selectors import current_trials_show

    study, token = panel
    client = browser()
    enter(client, token)
    through_screening(client, token)
    state = api(client, f"/api/studies/{study.pk}/enroll/").json()
    p = Participant.objects.get()
    practice, scored = Trial.objects.filter(participant=p).order_by("-practice", "position")
    clip = practice.item.payload["media"][0]["name"]
    assert client.get(f"/files/{clip}").status_code == 200  # the current trial's clip
    assert browser().get(f"/files/{clip}").status_code == 302  # anyone else: to the login page
    video = practice.item.footage
    assert client.get(f"/files/{video.rendition}").status_code == 404  # source footage: never
    # The next trial's clip (the test's clips share bytes, so its name is made distinct here) only once it is current.
    scored.item.payload["media"][0]["name"] = "studyclips/next.mp4"
    scored.item.save()
    assert current_trials_show([p.pk], "studyclips/next.mp4") is False
    tid = state["trial"]["trial_id"]
    api(client, f"/api/trials/{tid}/shown/")
    api(client, f"/api/trials/{tid}/answer/", {"response": 0, "client_rt_ms": 5, "idempotency_key": "k"})
    assert current_trials_show([p.pk], "studyclips/next.mp4") is True
    assert current_trials_show([p.pk], clip) is False  # answered: no longer
    assert client.get(f"/files/{clip}").status_code == 404
    Participant.objects.filter(pk=p.pk).update(status="timed_out")
    assert current_trials_show([p.pk], "studyclips/next.mp4") is False  # left: nothing
    assert client.get(f"/s/{token}/test-clip.mp4").status_code == 200
    assert browser().get(f"/s/{token}/test-clip.mp4").status_code == 404  # not without the session
