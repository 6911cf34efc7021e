"""The team page and its CSV download, through Django's test client: admins only, a bad period or
rate refused in words (400) with nothing saved, the CSV as the pay report."""

import pytest
from django.test import Client

from annotator.team import figures, services
from annotator.team.models import PayRate

DAYS = {"period": "custom", "from": "2026-03-02", "to": "2026-03-03"}


@pytest.fixture(autouse=True)
def _only_this_apps_figures(monkeypatch):
    monkeypatch.delitem(figures.REGISTRY, "gold_accuracy", raising=False)
    monkeypatch.delitem(figures.REGISTRY, "rework_rate", raising=False)


def _as(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("who, status", [("admin", 200), ("reviewer", 403), ("A", 403)])
def test_only_admins_open_the_team_page(team, who, status):
    client = _as(team[who])
    assert client.get("/projects/proj/team/", DAYS).status_code == status
    assert client.get("/projects/proj/team/pay.csv", DAYS).status_code == status


@pytest.mark.django_db
def test_the_page_shows_the_figures_and_the_pay_of_the_period(team):
    services.set_rate(team["project"], basis="video", amount="20", currency="EUR")
    res = _as(team["admin"]).get("/projects/proj/team/", DAYS)
    html = res.content.decode()
    assert res.status_code == 200
    # ann: 2 units, 4 QA pairs, 185 s active = 3 min 05 s, 70 s per unit, 25.0% overridden of 4, 50.0% agreement of 2.
    assert (
        '<tr><th scope="row">ann</th><td class="num">2</td><td class="num">4</td>\n        '
        '<td class="num">3 min 05 s</td><td class="num">1 min 10 s</td><td class="num">–</td>\n        '
        '<td class="num">25.0% (n = 4)</td><td class="num">50.0% (n = 2)</td><td class="num">–</td>'
    ) in html
    assert '<td class="num" id="pay-total">120.00 EUR</td>' in html
    assert 'href="/projects/proj/team/pay.csv?period=custom&amp;from=2026-03-02&amp;to=2026-03-03"' in html


@pytest.mark.django_db
def test_a_bad_period_is_a_400_in_words_with_no_figures(team):
    res = _as(team["admin"]).get("/projects/proj/team/", {"period": "custom", "from": "2026-03-04", "to": "2026-03-02"})
    assert res.status_code == 400
    html = res.content.decode()
    assert "The period has errors: to: must not be before from" in html
    assert 'id="figures"' not in html and 'id="pay-report"' not in html
    assert 'value="2026-03-04"' in html  # the form keeps what was typed
    res = _as(team["admin"]).get("/projects/proj/team/", {"period": "fortnight"})
    assert res.status_code == 400
    csv = _as(team["admin"]).get("/projects/proj/team/pay.csv", {"period": "custom", "from": "2026-02-30"})
    assert (csv.status_code, csv.content.decode()) == (400, "the period has errors: from: a date written YYYY-MM-DD")


@pytest.mark.django_db
def test_the_csv_download_is_the_pay_report(team):
    services.set_rate(team["project"], basis="video", amount="20", currency="EUR")
    res = _as(team["admin"]).get("/projects/proj/team/pay.csv", DAYS)
    assert res["Content-Type"] == "text/csv; charset=utf-8"
    assert res["Content-Disposition"] == 'attachment; filename="proj-pay-2026-03-02-to-2026-03-03.csv"'
    assert res.content.decode().splitlines() == [
        "user,units,videos,active_hours,amount,currency",
        "ann,3,2,0.05,40.00,EUR",
        "ann2,2,2,0.04,40.00,EUR",
        "ann3,2,2,0.02,40.00,EUR",
    ]


@pytest.mark.django_db
def test_a_bad_rate_keeps_what_was_typed_and_saves_nothing(team):
    client = _as(team["admin"])
    res = client.post(
        "/projects/proj/team/?period=all", {"basis": "video", "amount": "-3", "currency": "euro", "count_gold": "on"}
    )
    assert res.status_code == 400
    html = res.content.decode()
    assert '<span class="field-error" id="amount-error">an amount from 0 to 99999999.99 with at most 2 decimals' in html
    assert '<span class="field-error" id="currency-error">a currency code of 3 letters, e.g. EUR</span>' in html
    assert 'value="-3"' in html and 'value="euro"' in html
    assert not PayRate.objects.exists()
    res = client.post("/projects/proj/team/?period=all", {"basis": "hour", "amount": "18", "currency": "eur"})
    assert (res.status_code, res["Location"]) == (302, "/projects/proj/team/?period=all#pay")
    rate = PayRate.objects.get()
    assert (
        rate.basis,
        str(rate.amount),
        rate.currency,
        rate.count_gold,
        rate.count_qualification,
        rate.count_rework,
        rate.updated_by,
    ) == ("hour", "18.00", "EUR", False, False, False, team["admin"])
