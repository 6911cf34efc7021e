"""The team API: GET /api/projects/{slug}/annotators/ (admins and reviewers) and /pay/ (admins), their
roles and bounds (bad input is a 400 naming the field, never a 5xx), and the beats the verify API
writes (claim, heartbeat, autosave, submit)."""

import pytest
from rest_framework.test import APIClient

from annotator.projects.services import ensure_member, ensure_project, token_for
from annotator.team import figures, services
from annotator.team.models import Beat
from tests.conftest import row_id, uh


@pytest.fixture(autouse=True)
def _only_this_apps_figures(monkeypatch):
    monkeypatch.delitem(figures.REGISTRY, "gold_accuracy", raising=False)
    monkeypatch.delitem(figures.REGISTRY, "rework_rate", raising=False)


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


@pytest.mark.django_db
def test_a_reviewer_reads_the_figures_of_one_day(team):
    res = _client(team["reviewer"]).get("/api/projects/proj/annotators/", {"from": "2026-03-02", "to": "2026-03-02"})
    assert res.status_code == 200
    rows = res.json()["annotators"]
    assert [
        (r["user"], r["units"], r["qa_pairs"], r["active_s"], r["override_rate"], r["agreement"]) for r in rows
    ] == [("ann", 2, 4, 185.0, 0.25, 0.5), ("ann2", 2, 4, 135.0, None, 0.5), ("ann3", 0, 0, 0, None, None)]
    assert rows[0]["gold_accuracy"] == {"value": None, "ci": None, "n": None} and rows[0]["rework_rate"] is None


@pytest.mark.django_db
def test_an_admin_reads_the_pay_report(team):
    services.set_rate(team["project"], basis="video", amount="20", currency="EUR")
    res = _client(team["admin"]).get("/api/projects/proj/pay/", {"from": "2026-03-02", "to": "2026-03-03"})
    assert res.status_code == 200
    body = res.json()
    assert list(body) == ["project", "from", "to", "rate", "people", "total"]
    assert (body["project"], body["from"], body["to"]) == ("proj", "2026-03-02", "2026-03-03")
    assert [
        (p["user"], p["units"], p["videos"], p["active_hours"], p["amount"], p["currency"]) for p in body["people"]
    ] == [
        ("ann", 3, 2, "0.05", "40.00", "EUR"),
        ("ann2", 2, 2, "0.04", "40.00", "EUR"),
        ("ann3", 2, 2, "0.02", "40.00", "EUR"),
    ]
    assert body["total"] == {"amount": "120.00", "currency": "EUR"}


@pytest.mark.django_db
@pytest.mark.parametrize("who, annotators, pay", [("A", 403, 403), ("reviewer", 200, 403), ("admin", 200, 200)])
def test_roles(team, who, annotators, pay):
    client = _client(team[who])
    days = {"from": "2026-03-02", "to": "2026-03-02"}
    assert client.get("/api/projects/proj/annotators/", days).status_code == annotators
    assert client.get("/api/projects/proj/pay/", days).status_code == pay


@pytest.mark.django_db
def test_a_researcher_gets_403_and_a_stranger_404(team):
    researcher = ensure_member("res", role="researcher", project=team["project"])[0]
    stranger = ensure_member("other", role="admin", project=ensure_project("elsewhere"))[0]
    assert _client(researcher).get("/api/projects/proj/annotators/").status_code == 403
    assert _client(stranger).get("/api/projects/proj/annotators/").status_code == 404
    assert (
        _client(stranger).get("/api/projects/proj/pay/", {"from": "2026-03-02", "to": "2026-03-02"}).status_code == 404
    )
    assert APIClient().get("/api/projects/proj/annotators/").status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query, errors",
    [
        ({"from": "2026-02-30"}, {"from": "a date written YYYY-MM-DD"}),
        ({"from": "yesterday!!"}, {"from": "Ensure this field has no more than 10 characters."}),
        ({"from": "0001-01-01"}, {"from": "a date from 2000-01-01 to 2100-12-31"}),
        ({"to": "9999-12-31"}, {"to": "a date from 2000-01-01 to 2100-12-31"}),
        ({"from": "2026-03-03", "to": "2026-03-02"}, {"to": "must not be before from"}),
        ({"from": "9" * 5000}, {"from": "Ensure this field has no more than 10 characters."}),
    ],
)
def test_bad_dates_are_400s_naming_the_field(team, query, errors):
    admin = _client(team["admin"])
    for url in ("/api/projects/proj/annotators/", "/api/projects/proj/pay/"):
        full = {"from": "2026-03-01", "to": "2026-03-31", **query} if url.endswith("pay/") else query
        res = admin.get(url, full)
        assert res.status_code == 400, (url, res.content)
        assert res.json() == {"detail": "the period has errors", "errors": errors}


@pytest.mark.django_db
def test_a_nul_in_a_date_is_a_400_from_the_middleware(team):
    res = _client(team["admin"]).get("/api/projects/proj/annotators/", {"from": "2026\x00-03-0"})
    assert res.status_code == 400
    assert res.json() == {
        "detail": "the request contains a NUL character, which cannot be stored",
        "errors": {"from": "must not contain NUL (\\u0000) characters"},
    }


@pytest.mark.django_db
def test_the_pay_report_needs_both_dates(team):
    res = _client(team["admin"]).get("/api/projects/proj/pay/", {"from": "2026-03-02"})
    assert res.status_code == 400
    assert res.json() == {"detail": "the period has errors", "errors": {"to": "required (a date written YYYY-MM-DD)"}}


@pytest.mark.django_db
def test_the_verify_api_writes_a_beat_per_claim_heartbeat_autosave_and_submit(project, make_unit, annotator):
    unit = make_unit(n_open=1)
    client = _client(annotator)
    body = client.post(f"/api/projects/{project.slug}/queue/next/").json()
    assert body["id"] == uh(unit)
    assert client.post(f"/api/units/{uh(unit.pk)}/heartbeat/").status_code == 200
    assert (
        client.put(
            f"/api/units/{uh(unit.pk)}/autosave/",
            {"state": {"items": []}, "client_saved_at_ms": 1, "time_spent_ms": 0},
            format="json",
        ).status_code
        == 204
    )
    decisions = [{"qa_id": p["id"], "action": "keep"} for p in body["qa_pairs"]]
    res = client.post(
        f"/api/units/{uh(unit.pk)}/submit/",
        {"idempotency_key": "k1", "decisions": decisions, "added": []},
        format="json",
    )
    assert res.status_code == 200
    item = row_id("item", body["queue"]["item_id"])
    assert list(Beat.objects.order_by("at", "id").values_list("user_id", "item_id", "kind")) == [
        (annotator.pk, item, "claim"),
        (annotator.pk, item, "heartbeat"),
        (annotator.pk, item, "autosave"),
        (annotator.pk, item, "submit"),
    ]
    # A heartbeat refused (the unit is submitted: 409) writes nothing.
    assert client.post(f"/api/units/{uh(unit.pk)}/heartbeat/").status_code == 409
    assert Beat.objects.count() == 4
