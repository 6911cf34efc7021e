"""Study results over the API and on the dashboard, on a multiple-choice study whose answers are
known: two annotators take part through the API as the page does, one of them too fast for the
study's exclusion rule (median response time under 1 s), and two models' predictions are imported
and scored. Then the means, 95% intervals (Student's t) and n, without and with the excluded
participant; the response-time summaries; the trials export as JSONL and CSV; the roles."""

import csv
import io
import json

import pytest
from django.test import Client

from annotator.qa.selectors import pseudonym
from annotator.studies import dashboard
from annotator.studies.models import Item, Participant, Trial
from annotator.studies.selectors import TRIAL_COLUMNS
from annotator.studies.services import create_study, import_predictions, score_pending
from tests.studies.conftest import api_as, people

# Student's t quantiles for a two-sided 95% interval: t(0.975, 2) and t(0.975, 5).
T_2, T_5 = 4.302652729911275, 2.570581835636314
EXPORT_KEYS = {
    "trial_id",
    "item_id",
    "participant",
    "condition",
    "response",
    "scores",
    "timed_out",
    "client_rt_ms",
    "shown_at",
    "answered_at",
}


def _take_part(user, study, answers: list[tuple[bool, float]]) -> None:
    """Take the study through the API: trial i answered right or wrong with client RT ms ``answers[i]``."""
    client = api_as(user)
    trial = client.post(f"/api/studies/{study.pk}/enroll/").json()["trial"]
    for right, rt_ms in answers:
        client.post(f"/api/trials/{trial['trial_id']}/shown/")
        truth = Trial.objects.get(pk=trial["trial_id"]).item.truth
        choice = truth if right else (truth + 1) % len(trial["content"]["options"])
        res = client.post(
            f"/api/trials/{trial['trial_id']}/answer/",
            {"response": choice, "client_rt_ms": rt_ms, "idempotency_key": f"k{trial['trial_id']}"},
            format="json",
        )
        assert res.status_code == 200, res.content
        trial = res.json()["trial"]
    assert trial is None


@pytest.fixture
def study(verified, project):
    """The study after both people took part (``kept``: 2 of 3 right in 1.8, 1.5 and 1.2 s;
    ``fast``: 3 of 3 right in 0.1, 0.2 and 0.3 s, so excluded) and two models were scored
    (``oracle`` always right, ``contrarian`` never)."""
    verified(3)
    study, report = create_study(
        project,
        "mc",
        "mcq",
        seed=3,
        options={"time_limits": [60], "questions_per_participant": 3, "exclusion": {"min_median_rt_s": 1.0}},
    )
    assert report.items == {1: 3}
    kept, fast = people(project, 2)
    _take_part(kept, study, [(True, 1800.0), (True, 1500.0), (False, 1200.0)])
    _take_part(fast, study, [(True, 100.0), (True, 200.0), (True, 300.0)])
    items = Item.objects.filter(condition__study=study, role=Item.Role.SCORED)
    lines = [json.dumps({"model": "oracle", "item_id": i.pk, "predicted": i.truth}) for i in items]
    lines += [json.dumps({"model": "contrarian", "item_id": i.pk, "predicted": (i.truth + 1) % 4}) for i in items]
    assert import_predictions(study, lines).imported == 6
    assert score_pending(study.pk) == 12
    study.kept, study.fast = kept, fast
    return study


@pytest.fixture
def researcher(project):
    return people(project, 1, role="researcher", prefix="r")[0]


def _by_respondent(rows):
    return {r["respondent"]: r for r in rows}


def test_results_give_exact_means_intervals_and_n_without_and_with_the_excluded_participant(study, researcher):
    res = api_as(researcher).get(f"/api/studies/{study.pk}/results/")
    assert res.status_code == 200, res.content
    body = res.json()
    assert body["study"] == {"id": study.pk, "name": "mc", "status": "ready"}
    assert (body["kind"], body["metrics"], body["unscored"]) == ("mcq", ["accuracy"], 0)
    assert (body["participants"], body["excluded"]) == (2, 1)
    assert Participant.objects.get(user=study.fast).exclusion_reasons == ["median response time 0.20 s is under 1 s"]

    kept = _by_respondent(body["rows"])
    assert list(kept) == ["human", "contrarian", "oracle"]  # humans first, then models by name
    human = kept["human"]
    assert human["condition"]["number"] == 1 and human["condition"]["time_limit_s"] == 60.0
    assert human["subtask"] == Item.objects.filter(condition__study=study).first().subtask and human["group"] == ""
    # 1, 1, 0: mean 2/3, standard error 1/3, t(0.975, 2) wide, clipped to accuracy's range [0, 1] (issue 18:
    # the API gave [-0.77, 2.10]).
    assert 2 / 3 - T_2 / 3 < 0 and 2 / 3 + T_2 / 3 > 1
    assert human["metrics"]["accuracy"] == pytest.approx({"mean": 2 / 3, "ci_low": 0.0, "ci_high": 1.0, "n": 3})
    assert kept["oracle"]["metrics"]["accuracy"] == {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 3}
    assert kept["contrarian"]["metrics"]["accuracy"] == {"mean": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 3}

    everyone = _by_respondent(body["rows_with_excluded"])
    # 1, 1, 0, 1, 1, 1: mean 5/6, standard deviation sqrt(1/6), standard error 1/6.
    assert everyone["human"]["metrics"]["accuracy"] == pytest.approx(
        {"mean": 5 / 6, "ci_low": 5 / 6 - T_5 / 6, "ci_high": 1.0, "n": 6}
    )
    assert everyone["oracle"] == kept["oracle"] and everyone["contrarian"] == kept["contrarian"]
    # One subtask: the overall rows hold the same numbers, with subtask null.
    assert [{**r, "subtask": human["subtask"]} for r in body["overall"]] == body["rows"]
    assert [r["subtask"] for r in body["overall_with_excluded"]] == [None] * 3
    assert _by_respondent(body["overall_with_excluded"])["human"]["metrics"] == everyone["human"]["metrics"]

    [rt] = body["rt"]
    assert rt["condition"]["number"] == 1 and (rt["n"], rt["timed_out"]) == (3, 0)
    assert {k: rt[k] for k in ("mean_s", "median_s", "q1_s", "q3_s", "min_s", "max_s")} == pytest.approx(
        {"mean_s": 1.5, "median_s": 1.5, "q1_s": 1.35, "q3_s": 1.65, "min_s": 1.2, "max_s": 1.8}
    )
    [rt_all] = body["rt_with_excluded"]
    assert (rt_all["n"], rt_all["median_s"], rt_all["min_s"]) == (6, pytest.approx(0.75), pytest.approx(0.1))
    assert rt_all["mean_s"] == pytest.approx(5.1 / 6)


def test_results_count_answers_still_waiting_for_the_scoring_worker(study, researcher):
    Trial.objects.filter(participant__user=study.kept).update(scores=None, scored_at=None)
    body = api_as(researcher).get(f"/api/studies/{study.pk}/results/").json()
    assert body["unscored"] == 3
    assert "human" not in _by_respondent(body["rows"])  # the kept person's answers are not scored yet
    assert _by_respondent(body["rows_with_excluded"])["human"]["metrics"]["accuracy"]["n"] == 3


def test_the_trials_export_streams_one_jsonl_line_per_trial_with_pseudonyms(study, researcher):
    client = api_as(researcher)
    res = client.get(f"/api/studies/{study.pk}/trials/?format=jsonl")
    assert res.status_code == 200
    assert res["Content-Type"].startswith("application/jsonl")
    assert res["Content-Disposition"] == 'attachment; filename="mc-trials.jsonl"'
    text = b"".join(res.streaming_content).decode()
    rows = [json.loads(line) for line in text.splitlines()]
    assert len(rows) == 6 and all(EXPORT_KEYS <= set(r) for r in rows)
    assert {r["participant"] for r in rows} == {pseudonym(study.kept.pk), pseudonym(study.fast.pk)}
    assert "p0" not in text and "p1" not in text  # no usernames
    trials = {t.pk: t for t in Trial.objects.filter(participant__study=study).select_related("participant")}
    assert {r["trial_id"] for r in rows} == set(trials)
    for r in rows:
        t = trials[r["trial_id"]]
        assert (r["item_id"], r["condition"], r["response"], r["timed_out"]) == (t.item_id, 1, t.response, False)
        assert r["scores"] == {"accuracy": 1.0 if t.response == t.item.truth else 0.0}
        assert r["client_rt_ms"] == t.client_rt_ms and r["shown_at"] == t.shown_at.isoformat()
        assert r["answered_at"] == t.answered_at.isoformat() and r["excluded"] == t.participant.excluded
    assert sorted(r["client_rt_ms"] for r in rows) == [100.0, 200.0, 300.0, 1200.0, 1500.0, 1800.0]
    # Without a format, JSONL too.
    assert b"".join(client.get(f"/api/studies/{study.pk}/trials/").streaming_content).decode() == text


def test_the_trials_export_as_csv_parses_with_the_same_rows(study, researcher):
    client = api_as(researcher)
    jsonl = {
        r["trial_id"]: r
        for r in map(
            json.loads,
            b"".join(client.get(f"/api/studies/{study.pk}/trials/?format=jsonl").streaming_content)
            .decode()
            .splitlines(),
        )
    }
    res = client.get(f"/api/studies/{study.pk}/trials/?format=csv")
    assert res.status_code == 200 and res["Content-Type"].startswith("text/csv")
    reader = csv.DictReader(io.StringIO(b"".join(res.streaming_content).decode()))
    assert tuple(reader.fieldnames) == TRIAL_COLUMNS
    rows = list(reader)
    assert len(rows) == 6
    for r in rows:
        want = jsonl[int(r["trial_id"])]
        assert int(r["item_id"]) == want["item_id"] and r["participant"] == want["participant"]
        assert json.loads(r["scores"]) == want["scores"] and int(r["response"]) == want["response"]
        assert float(r["client_rt_ms"]) == want["client_rt_ms"] and r["timed_out"] == "False"
        assert r["shown_at"] == want["shown_at"] and r["answered_at"] == want["answered_at"]


def test_a_study_nobody_answered_exports_the_csv_header_alone(verified, project, researcher):
    verified(1)
    study, _ = create_study(project, "empty", "mcq", options={"time_limits": [60]})
    res = api_as(researcher).get(f"/api/studies/{study.pk}/trials/?format=csv")
    assert res.status_code == 200
    assert b"".join(res.streaming_content).decode().splitlines() == [",".join(TRIAL_COLUMNS)]


@pytest.mark.parametrize("value", ["xml", "json", "", "JSONL", "csv,jsonl"])
def test_a_format_other_than_jsonl_or_csv_is_refused_in_plain_words(study, researcher, value):
    res = api_as(researcher).get(f"/api/studies/{study.pk}/trials/?format={value}")
    assert res.status_code == 400
    assert res.json() == {"detail": "format must be jsonl or csv", "errors": {"format": "jsonl or csv"}}


def test_the_export_answers_json_errors_whatever_the_accept_header(study):
    annotator = api_as(study.kept)
    res = annotator.get(f"/api/studies/{study.pk}/trials/?format=csv", HTTP_ACCEPT="text/csv")
    assert res.status_code == 403 and res["Content-Type"] == "application/json"
    assert "detail" in res.json()


@pytest.mark.parametrize("role", ["admin", "reviewer", "researcher"])
def test_overseers_read_results_and_trials(study, project, role):
    client = api_as(people(project, 1, role=role, prefix=role)[0])
    assert client.get(f"/api/studies/{study.pk}/results/").status_code == 200
    assert client.get(f"/api/studies/{study.pk}/trials/?format=csv").status_code == 200


def test_annotators_outsiders_and_strangers_are_refused_results_and_trials(study):
    from annotator.projects.models import Project
    from annotator.projects.services import ensure_member

    other = Project.objects.create(slug="other", name="Other")
    outsider = ensure_member("outsider", role="researcher", project=other, password="pw-outsider-123")[0]
    for path in (f"/api/studies/{study.pk}/results/", f"/api/studies/{study.pk}/trials/?format=jsonl"):
        assert api_as(study.kept).get(path).status_code == 403  # a participant
        assert api_as(outsider).get(path).status_code == 404  # a researcher of another project
        assert Client().get(path).status_code == 401  # nobody logged in
    assert api_as(study.kept).get("/api/studies/999999/results/").status_code == 404


def test_the_dashboard_plots_both_views_with_humans_beside_models(study, researcher, project):
    page = Client()
    page.force_login(researcher)
    res = page.get(f"/projects/{project.slug}/studies/mc/results/")
    assert res.status_code == 200
    html = res.content.decode()
    assert 'id="results-data"' in html and 'id="bars-accuracy"' in html and 'id="rt-hist"' in html
    assert "<script>" not in html  # configuration by json_script only
    assert "vendor/chartjs-4.6.1/chart.umd.min.js" in html and "vendor/chartjs-chart-error-bars-4.4.5/" in html
    assert "median response time 0.20 s is under 1 s" in html  # the participants list says why
    charts = res.context["charts"]
    for view, mean, low, n in (("kept", 2 / 3, 2 / 3 - T_2 / 3, 3), ("all", 5 / 6, 5 / 6 - T_5 / 6, 6)):
        [bars] = charts["views"][view]["bars"]
        assert bars["id"] == "bars-accuracy" and bars["axis"] == "Accuracy (share of questions right, 0–1)"
        assert (bars["low"], bars["high"], bars["categoryAxis"]) == (0, 1, "Condition")
        assert bars["categories"] == ["1. quick (60 s)"]
        assert [s["label"] for s in bars["series"]] == ["humans", "contrarian", "oracle"]
        # The t interval is clipped to accuracy's range [0, 1] (issue 18: no interval outside the metric's range).
        assert bars["series"][0]["points"] == [
            pytest.approx({"y": mean, "yMin": max(low, 0.0), "yMax": min(2 * mean - low, 1.0), "n": n})
        ]
        assert bars["series"][2]["points"] == [{"y": 1.0, "yMin": 1.0, "yMax": 1.0, "n": 3}]
        rt = charts["views"][view]["rt"]
        assert [s["label"] for s in rt["series"]] == ["1. quick (60 s)"] and sum(rt["series"][0]["counts"]) == n
    assert charts["views"]["kept"]["likert"] is None
    assert charts["views"]["all"]["rt"]["labels"][:2] == ["0–0.1", "0.1–0.2"]


def test_annotators_do_not_get_the_dashboard(study, project):
    page = Client()
    page.force_login(study.kept)
    assert page.get(f"/projects/{project.slug}/studies/mc/results/").status_code == 403


def test_response_times_share_bins_and_long_ones_go_to_a_last_open_bin():
    cond = {"number": 1, "label": "quick (60 s)", "time_limit_s": 60.0}
    hist = dashboard.rt_histogram(
        [
            {"condition": cond, "rts_s": [0.1, 0.2, 0.3, 1.2, 1.5, 1.8], "timed_out": 1},
            {"condition": {**cond, "number": 2, "label": "none"}, "rts_s": [], "timed_out": 0},
        ]
    )
    assert hist["edges_s"] == [round(i * 0.1, 6) for i in range(19)]  # 0.1 s bins up to the longest, 1.8 s
    assert hist["series"][0]["counts"] == [0, 1, 1, 1] + [0] * 8 + [1, 0, 0, 1, 0, 1]
    assert hist["series"][1] == {"label": "2. none", "n": 0, "timed_out": 0, "median_s": None, "counts": [0] * 18}
    assert hist["series"][0]["median_s"] == pytest.approx(0.75) and hist["series"][0]["timed_out"] == 1
    # 99 answers in 1-10 s and one of an hour: bins of 0.5 s up to the 99th percentile, the hour past them.
    slow = dashboard.rt_histogram(
        [{"condition": cond, "rts_s": [1 + i * 0.09 for i in range(99)] + [3600.0], "timed_out": 0}]
    )
    assert slow["labels"][-1] == f"≥ {slow['edges_s'][-1]:g}" and slow["edges_s"][-1] < 20
    assert slow["series"][0]["counts"][-1] == 1 and sum(slow["series"][0]["counts"]) == 100
