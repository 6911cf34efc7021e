"""annotator_stats and pay_report checked by hand on the scripted team of tests/team/conftest.py.
Every number is worked out in the comments from the script there."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.team import figures, selectors, services
from annotator.team.figures import Period
from annotator.team.models import PayRate

NO_GOLD = {"value": None, "ci": None, "n": None}


@pytest.fixture(autouse=True)
def _only_this_apps_figures(monkeypatch):
    # gold_accuracy and rework_rate belong to other apps; these tests check the rows without them
    # (null), and one test registers them by hand.
    monkeypatch.delitem(figures.REGISTRY, "gold_accuracy", raising=False)
    monkeypatch.delitem(figures.REGISTRY, "rework_rate", raising=False)


def _stats(*args) -> dict:
    out = StringIO()
    call_command("annotator_stats", "--project", "proj", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def _pay(*args) -> dict:
    out, err = StringIO(), StringIO()
    call_command("pay_report", "--project", "proj", *args, "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue())


# A: U1 100 s (09:00:00 -> 09:01:40: 30 + 30 + 20 + 20), U2 40 s (10 s from U1's submit to U2's claim,
#    credited to U2's claim, + 30), the 3 h to 12:00 idle, U4 (gold) 45 s: 185 s in all, 140 s on real units.
# B: U1 overlap 70 s (30 + 30 + 10), 110 s to U3's claim: idle, U3 65 s (30 + 30 + 5): 135 s.
# C: DC U1 40 s, DC U2 30 s (10 + 20), U5 (qualification) 80 s (50 from 14:01:10 + 30): 150 s, 70 s real.
A_DAY1 = {
    "user": "ann",
    "units": 2,
    "qa_pairs": 4,
    "active_s": 185.0,
    "gold_accuracy": NO_GOLD,
    # A's first-pass decisions on real units, all double-checked by C: q1 modify, m1, q2, m2 keep (4);
    # C deleted q1: 1 of 4 changed.
    "override_rate": 0.25,
    "override_n": 4,
    # Blind decisions shared with a peer: q1 (A modify, B delete: differ), m1 (both keep: same). U4 is gold.
    "agreement": 0.5,
    "agreement_n": 2,
    "rework_rate": None,
    "passes": 2,
    "reported_s": 133.0,  # the page reported 95,000 + 38,000 ms
    "time_per_unit_s": 70.0,
}  # 140 s on real units / 2 units
B_DAY1 = {
    "user": "ann2",
    "units": 2,
    "qa_pairs": 4,
    "active_s": 135.0,
    "gold_accuracy": NO_GOLD,
    "override_rate": None,
    "override_n": None,  # B's first pass (U3) was never double-checked
    "agreement": 0.5,
    "agreement_n": 2,
    "rework_rate": None,
    "passes": 2,
    "reported_s": 0.0,
    "time_per_unit_s": 67.5,
}  # (70 + 65) / 2
C_DAY2 = {
    "user": "ann3",
    "units": 2,
    "qa_pairs": 4,
    "active_s": 150.0,
    "gold_accuracy": NO_GOLD,
    "override_rate": None,
    "override_n": None,
    "agreement": None,
    "agreement_n": None,  # no blind pass
    "rework_rate": None,
    "passes": 2,
    "reported_s": 0.0,
    "time_per_unit_s": 35.0,
}  # 70 s real / 2
NOTHING = {
    "units": 0,
    "qa_pairs": 0,
    "active_s": 0,
    "gold_accuracy": NO_GOLD,
    "override_rate": None,
    "override_n": None,
    "agreement": None,
    "agreement_n": None,
    "rework_rate": None,
    "passes": 0,
    "reported_s": 0,
    "time_per_unit_s": None,
}


def _rows(data, team):
    ids = {team[k].pk: k for k in "ABC"}
    rows = data["annotators"]
    assert [ids[r.pop("user_id")] for r in rows] == ["A", "B", "C"]  # the annotators, by username; boss did nothing
    return rows


@pytest.mark.django_db
def test_annotator_stats_over_all_time_match_the_hand_count(team):
    # Every real submit went through the submit hook: one submit beat each (A: U1, U2; B: U1, U3; C: DC U1, DC U2).
    assert sorted((u, k) for u, k, _ in team["hooked"]) == [
        ("ann", "submit"),
        ("ann", "submit"),
        ("ann2", "submit"),
        ("ann2", "submit"),
        ("ann3", "submit"),
        ("ann3", "submit"),
    ]
    assert _rows(_stats(), team) == [A_DAY1, B_DAY1, C_DAY2]


@pytest.mark.django_db
def test_annotator_stats_of_one_day_count_that_day_only(team):
    assert _rows(_stats("--from", "2026-03-02", "--to", "2026-03-02"), team) == [
        A_DAY1,
        B_DAY1,
        {"user": "ann3", **NOTHING},
    ]
    # Day 2: C's double-checks; A's override rate is of first passes made in the period, so none.
    assert _rows(_stats("--from", "2026-03-03", "--to", "2026-03-03"), team) == [
        {"user": "ann", **NOTHING},
        {"user": "ann2", **NOTHING},
        C_DAY2,
    ]


@pytest.mark.django_db
def test_the_json_has_the_issues_keys_in_its_order(team):
    row = _stats()["annotators"][0]
    assert list(row)[:9] == [
        "user",
        "user_id",
        "units",
        "qa_pairs",
        "active_s",
        "gold_accuracy",
        "override_rate",
        "agreement",
        "rework_rate",
    ]
    assert set(row["gold_accuracy"]) == {"value", "ci", "n"}


@pytest.mark.django_db
def test_gold_accuracy_and_rework_rate_show_when_their_apps_register_them(team, monkeypatch):
    a, b = team["A"].pk, team["B"].pk
    monkeypatch.setitem(
        figures.REGISTRY,
        "gold_accuracy",
        lambda project, users, period: {a: {"value": 0.9, "ci": (0.8, 0.95), "n": 20}, b: 0.5},
    )
    monkeypatch.setitem(figures.REGISTRY, "rework_rate", lambda project, users, period: {b: 0.125})
    rows = {r["user"]: r for r in _stats()["annotators"]}
    assert rows["ann"]["gold_accuracy"] == {"value": 0.9, "ci": [0.8, 0.95], "n": 20}
    assert rows["ann2"]["gold_accuracy"] == {"value": 0.5, "ci": None, "n": None}
    assert rows["ann3"]["gold_accuracy"] == NO_GOLD
    assert (rows["ann"]["rework_rate"], rows["ann2"]["rework_rate"]) == (None, 0.125)


@pytest.mark.django_db
def test_the_text_table_names_its_columns(team):
    out = StringIO()
    call_command("annotator_stats", "--project", "proj", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "proj: the start to today"
    assert lines[1].split() == [
        "user",
        "units",
        "QA",
        "pairs",
        "active",
        "s/unit",
        "gold",
        "override",
        "agreement",
        "rework",
    ]
    assert lines[2].split() == ["ann", "2", "4", "3.1", "min", "70.0", "-", "25.0%", "50.0%", "-"]


# ------------------------------------------------------------------------------ pay


def _people(data):
    return [
        (p["user"], p["units"], p["videos"], p["active_s"], p["active_hours"], p["amount"], p["currency"])
        for p in data["people"]
    ]


@pytest.mark.django_db
def test_pay_at_eur_20_per_video_over_day_one(team):
    services.set_rate(team["project"], basis="video", amount="20", currency="eur")
    data = _pay("--from", "2026-03-02", "--to", "2026-03-02")
    assert data["rate"] == {
        "basis": "video",
        "basis_label": "per video",
        "amount": "20.00",
        "currency": "EUR",
        "count_gold": True,
        "count_qualification": False,
        "count_rework": True,
    }
    assert (data["from"], data["to"]) == ("2026-03-02", "2026-03-02")
    assert _people(data) == [
        # A: U1, U2 and the gold U4 (gold counts by default): 3 units; U4 is on U1's video: 2 videos, 40.00.
        # 185 s = 0.0514 h -> 0.05.
        ("ann", 3, 2, 185, "0.05", "40.00", "EUR"),
        # B: U1 (overlap) and U3 (sent back for rework, counted once by default): 2 videos. 135 s = 0.0375 h -> 0.04.
        ("ann2", 2, 2, 135, "0.04", "40.00", "EUR"),
        ("ann3", 0, 0, 0, "0.00", "0.00", "EUR"),
    ]
    assert data["total"] == {"amount": "80.00", "currency": "EUR"}


@pytest.mark.django_db
def test_pay_counts_a_unit_once_in_the_period_of_the_first_submit(team):
    services.set_rate(team["project"], basis="video", amount="20", currency="EUR")
    day2 = _pay("--from", "2026-03-03", "--to", "2026-03-03")
    # C's double-checks of U1 (v1) and U2 (v2); U5 is qualification (not counted): 70 s = 0.0194 h -> 0.02.
    assert _people(day2) == [
        ("ann", 0, 0, 0, "0.00", "0.00", "EUR"),
        ("ann2", 0, 0, 0, "0.00", "0.00", "EUR"),
        ("ann3", 2, 2, 70, "0.02", "40.00", "EUR"),
    ]
    both = _pay("--from", "2026-03-02", "--to", "2026-03-03")
    assert both["total"] == {"amount": "120.00", "currency": "EUR"}


@pytest.mark.django_db
def test_pay_counts_gold_qualification_and_rework_as_the_rate_says(team):
    project = team["project"]
    services.set_rate(
        project,
        basis="video",
        amount="20",
        currency="EUR",
        count_gold=False,
        count_qualification=True,
        count_rework=False,
    )
    data = _pay("--from", "2026-03-02", "--to", "2026-03-03")
    assert _people(data) == [
        ("ann", 2, 2, 140, "0.04", "40.00", "EUR"),  # U4 (gold) out: 2 units, 140 s
        ("ann2", 1, 1, 70, "0.02", "20.00", "EUR"),  # U3 was sent back for rework: out, with its 65 s
        ("ann3", 3, 3, 150, "0.04", "60.00", "EUR"),  # U5 (qualification, its own video v5) in: 3 units, 150 s
    ]
    assert data["total"]["amount"] == "120.00"


@pytest.mark.django_db
def test_pay_per_active_hour_rounds_half_up_to_the_cent(team):
    services.set_rate(team["project"], basis="hour", amount="18.00", currency="EUR")
    data = _pay("--from", "2026-03-02", "--to", "2026-03-03")
    # A 18 x 185 / 3600 = 0.925 -> 0.93 (half up; half-even would give 0.92); B 18 x 135 / 3600 = 0.675 -> 0.68;
    # C 18 x 70 / 3600 = 0.35. Total 1.96.
    assert [(p["user"], p["amount"]) for p in data["people"]] == [("ann", "0.93"), ("ann2", "0.68"), ("ann3", "0.35")]
    assert data["total"]["amount"] == "1.96"


@pytest.mark.django_db
def test_pay_per_unit(team):
    services.set_rate(team["project"], basis="unit", amount="2.50", currency="USD", count_gold=False)
    data = _pay("--from", "2026-03-02", "--to", "2026-03-03")
    assert [(p["user"], p["units"], p["amount"], p["currency"]) for p in data["people"]] == [
        ("ann", 2, "5.00", "USD"),
        ("ann2", 2, "5.00", "USD"),
        ("ann3", 2, "5.00", "USD"),
    ]


@pytest.mark.django_db
def test_without_a_rate_the_report_counts_and_says_so(team):
    out, err = StringIO(), StringIO()
    call_command(
        "pay_report",
        "--project",
        "proj",
        "--from",
        "2026-03-02",
        "--to",
        "2026-03-02",
        "--json",
        stdout=out,
        stderr=err,
    )
    data = json.loads(out.getvalue())
    assert data["rate"] is None and data["total"] is None
    assert _people(data)[0] == ("ann", 3, 2, 185, "0.05", None, None)
    assert err.getvalue() == "proj has no pay rate: counts only, no amounts (set one with pay_rate)\n"


@pytest.mark.django_db
def test_pay_report_csv_guards_cells_against_formulas(team):
    from django.contrib.auth import get_user_model

    get_user_model().objects.filter(pk=team["C"].pk).update(username="@SUM(1+1)")
    services.set_rate(team["project"], basis="video", amount="20", currency="EUR")
    out = StringIO()
    call_command("pay_report", "--project", "proj", "--from", "2026-03-02", "--to", "2026-03-03", "--csv", stdout=out)
    assert out.getvalue().splitlines() == [
        "user,units,videos,active_hours,amount,currency",
        "'@SUM(1+1),2,2,0.02,40.00,EUR",  # sorted first: "@" comes before letters
        "ann,3,2,0.05,40.00,EUR",
        "ann2,2,2,0.04,40.00,EUR",
    ]


@pytest.mark.django_db
def test_the_text_report_has_a_total(team):
    services.set_rate(team["project"], basis="video", amount="20", currency="EUR")
    out = StringIO()
    call_command("pay_report", "--project", "proj", "--from", "2026-03-02", "--to", "2026-03-02", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "pay report of proj, 2026-03-02 to 2026-03-02: 20.00 EUR per video"
    assert lines[2].split() == ["ann", "3", "2", "0.05", "40.00", "EUR"]
    assert lines[-1].split() == ["total", "80.00", "EUR"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "args, message",
    [
        (["--from", "2026-3-2", "--to", "2026-03-02"], "the period has errors: from: a date written YYYY-MM-DD"),
        (["--from", "2026-03-03", "--to", "2026-03-02"], "the period has errors: to: must not be before from"),
        (
            ["--from", "1999-12-31", "--to", "2026-03-02"],
            "the period has errors: from: a date from 2000-01-01 to 2100-12-31",
        ),
    ],
)
def test_bad_dates_are_refused_in_plain_words(team, args, message):
    with pytest.raises(CommandError) as exc:
        call_command("pay_report", "--project", "proj", *args, stdout=StringIO())
    assert str(exc.value) == message


@pytest.mark.django_db
def test_a_bad_rate_is_refused_and_nothing_is_saved(team):
    with pytest.raises(CommandError) as exc:
        call_command(
            "pay_rate",
            "--project",
            "proj",
            "--per",
            "video",
            "--amount",
            "20.001",
            "--currency",
            "EURO",
            stdout=StringIO(),
        )
    assert str(exc.value) == (
        "the pay rate has errors; nothing was saved: amount: an amount from 0 to 99999999.99 with "
        "at most 2 decimals, e.g. 20 or 12.50; currency: a currency code of 3 letters, e.g. EUR"
    )
    assert not PayRate.objects.exists()
    out = StringIO()
    call_command(
        "pay_rate",
        "--project",
        "proj",
        "--per",
        "hour",
        "--amount",
        "12.5",
        "--currency",
        "gbp",
        "--no-count-gold",
        stdout=out,
    )
    assert out.getvalue() == "proj: 12.50 GBP per active hour\n"
    assert PayRate.objects.get().count_gold is False


@pytest.mark.django_db
def test_own_figures_give_one_persons_figures_and_pay(team):
    services.set_rate(team["project"], basis="video", amount="20", currency="EUR")
    period = selectors.period_of(selectors.parse_day("2026-03-02", "from"), selectors.parse_day("2026-03-02", "to"))
    mine = selectors.own_figures(team["project"], team["B"], period)
    assert mine["figures"] == {**B_DAY1, "user_id": team["B"].pk}
    assert mine["pay"] == {
        "user": "ann2",
        "user_id": team["B"].pk,
        "units": 2,
        "videos": 2,
        "active_s": 135,
        "active_hours": "0.04",
        "amount": "40.00",
        "currency": "EUR",
    }
    assert mine["rate"]["amount"] == "20.00"
    # Someone who did nothing still gets a row of zeros.
    assert selectors.own_figures(team["project"], team["admin"], Period())["pay"]["units"] == 0
