"""The gold API (admins): the policy, every attempt, the pauses and lifting one, another try. Bad
input is a 400 naming the field with nothing changed, never a 5xx; annotators get 403, strangers 404."""

import pytest
from rest_framework.test import APIClient

from annotator.gold import services
from annotator.gold.models import Attempt, Pause, Policy, Standing
from annotator.projects.services import ensure_member, ensure_project


def _client(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def paused(project, annotator):
    Standing.objects.create(project=project, user=annotator, paused=True)
    return Pause.objects.create(
        project=project,
        user=annotator,
        reason="gold accuracy 50% over the last 10 gold units, below 80%",
        accuracy=0.5,
        window=10,
        threshold=0.8,
    )


def test_admins_read_and_change_the_policy(project, admin_user):
    client = _client(admin_user)
    assert client.get(f"/api/projects/{project.slug}/gold/policy/").json() == {
        "gold_rate": 0.05,
        "threshold": 0.8,
        "tries": 3,
        "window": 10,
        "qualification_required": False,
        "seed": 0,
    }
    res = client.patch(
        f"/api/projects/{project.slug}/gold/policy/", {"gold_rate": 0.1, "qualification_required": True}, format="json"
    )
    assert res.status_code == 200 and res.json()["gold_rate"] == 0.1 and res.json()["qualification_required"] is True
    for body, field in [
        ({"gold_rate": 0.9}, "gold_rate"),
        ({"tries": 0}, "tries"),
        ({"window": 10**20}, "window"),
        ({"threshold": "high"}, "threshold"),
        ({"seed": 2**40}, "seed"),
    ]:
        bad = client.patch(f"/api/projects/{project.slug}/gold/policy/", body, format="json")
        assert bad.status_code == 400 and field in bad.json()["errors"], (body, bad.content)
    assert Policy.objects.get(project=project).gold_rate == 0.1  # unchanged by the refused ones


def test_admins_list_pauses_and_lift_one_once(project, admin_user, annotator, paused):
    client = _client(admin_user)
    listed = client.get(f"/api/projects/{project.slug}/gold/pauses/?state=open").json()
    assert listed["count"] == 1 and listed["results"][0]["username"] == "ann"
    assert listed["results"][0]["lifted_by"] is None
    assert client.get(f"/api/projects/{project.slug}/gold/pauses/?state=closed").status_code == 400
    too_long = client.post(f"/api/gold/pauses/{paused.pk}/lift/", {"note": "x" * 2001}, format="json")
    assert too_long.status_code == 400 and "note" in too_long.json()["errors"]
    assert Pause.objects.get(pk=paused.pk).lifted_at is None
    res = client.post(f"/api/gold/pauses/{paused.pk}/lift/", {"note": "we went through it"}, format="json")
    assert res.status_code == 200
    assert (res.json()["lifted_by"], res.json()["note"]) == ("boss", "we went through it")
    assert Standing.objects.get(project=project, user=annotator).paused is False
    again = client.post(f"/api/gold/pauses/{paused.pk}/lift/", {}, format="json")
    assert again.status_code == 409 and "already lifted" in again.json()["detail"]
    assert client.get(f"/api/projects/{project.slug}/gold/pauses/?state=open").json()["count"] == 0
    assert client.post("/api/gold/pauses/99999999/lift/", {}, format="json").status_code == 404
    assert client.post("/api/gold/pauses/99999999999999999999999/lift/", {}, format="json").status_code == 404


def test_attempts_and_another_try(project, admin_user, annotator):
    Attempt.objects.create(
        project=project, user=annotator, number=1, threshold=0.8, decisions=8, agreed=5, score=5 / 8, passed=False
    )
    client = _client(admin_user)
    rows = client.get(f"/api/projects/{project.slug}/qualification/attempts/?user={annotator.pk}").json()["results"]
    assert [(r["username"], r["number"], r["score"], r["passed"]) for r in rows] == [("ann", 1, 0.625, False)]
    assert client.get(f"/api/projects/{project.slug}/qualification/attempts/?user=-1").status_code == 400
    assert client.get(f"/api/projects/{project.slug}/qualification/attempts/?limit=100000").status_code == 400
    res = client.post(f"/api/projects/{project.slug}/qualification/tries/", {"user": annotator.pk}, format="json")
    assert res.json() == {"user": annotator.pk, "extra_tries": 1}
    stranger = ensure_member("elsewhere", role="annotator", project=ensure_project("other"))[0]
    assert (
        client.post(
            f"/api/projects/{project.slug}/qualification/tries/", {"user": stranger.pk}, format="json"
        ).status_code
        == 404
    )
    assert (
        client.post(f"/api/projects/{project.slug}/qualification/tries/", {"user": "x"}, format="json").status_code
        == 400
    )
    assert client.post(f"/api/projects/{project.slug}/qualification/tries/", [], format="json").status_code == 400


def test_annotators_get_403_and_strangers_404(project, annotator, paused):
    stranger = ensure_member("elsewhere", role="admin", project=ensure_project("other"))[0]
    for user, code in ((annotator, 403), (stranger, 404)):
        client = _client(user)
        assert client.get(f"/api/projects/{project.slug}/gold/pauses/").status_code == code
        assert client.get(f"/api/projects/{project.slug}/qualification/attempts/").status_code == code
        assert client.get(f"/api/projects/{project.slug}/gold/policy/").status_code == code
        assert client.post(f"/api/gold/pauses/{paused.pk}/lift/", {}, format="json").status_code == code
    assert Pause.objects.get(pk=paused.pk).lifted_at is None


def test_a_paused_annotator_claiming_over_the_api_gets_a_403_saying_why(project, annotator, paused, make_unit):
    make_unit()
    res = _client(annotator).post(f"/api/projects/{project.slug}/queue/next/")
    assert res.status_code == 403
    assert res.json()["detail"].startswith("Your work on Test project is paused since ")
    assert "50%, below the project's 80%. Ask an admin of the project (an admin)" in res.json()["detail"]
    services.lift_pause(paused.pk, None)
    assert _client(annotator).post(f"/api/projects/{project.slug}/queue/next/").status_code == 200
