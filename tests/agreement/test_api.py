"""The agreement API on real judgments: overlap verdicts submitted through the queue, measured by
``services.compute``; the dashboard's JSON and the CSV of every stored report; rating sets brought
over the API; computing on demand; the consensus round end to end."""

from __future__ import annotations

import csv
import io

import pytest
from rest_framework.test import APIClient

from annotator.agreement import services
from annotator.agreement.models import ConsensusItem, ConsensusRating, Rating, RatingSet, Report
from annotator.core.models import Job
from annotator.projects.services import ensure_member, token_for
from annotator.qa.selectors import pseudonym

R = 50  # bootstrap resamples: an interval, quickly

CSV_HEADER = [
    "scope",
    "subset",
    "metric",
    "level",
    "round",
    "value",
    "ci_low",
    "ci_high",
    "n_items",
    "n_raters",
    "method",
    "fingerprint",
    "computed_at",
]


def client_of(project, role: str) -> APIClient:
    user = ensure_member(f"api-{role}", role=role, project=project, password="pw-agree-1")[0]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


def _csv(res) -> list[dict]:
    return list(csv.DictReader(io.StringIO(b"".join(res.streaming_content).decode())))


def _whole(body, key="verification") -> dict:
    scope = next(s for s in body["scopes"] if s["key"] == key)
    return next(sub for sub in scope["subsets"] if sub["subset"] == "")


def _report(subset, metric, round_="first") -> dict:
    return next(r for r in subset["reports"] if r["metric"] == metric and r["round"] == round_)


# ------------------------------------------------------------------------------ the dashboard's data


def test_the_json_gives_each_metric_with_its_interval_the_matrices_and_the_disputed_items(
    project, two_raters, annotator, annotator2
):
    comp = services.compute(project, "verification", trigger="api", n_resamples=R)
    body = client_of(project, "researcher").get(f"/api/projects/{project.slug}/agreement/").json()

    scope = body["scopes"][0]
    assert [s["key"] for s in body["scopes"]] == ["verification"]
    assert scope["computation"]["id"] == comp.pk and scope["computation"]["n_resamples"] == R
    assert (
        scope["computation"]["fingerprint"] == comp.fingerprint
        and "krippendorff" in scope["computation"]["library_versions"]
    )
    assert scope["new_responses"] is False and scope["computing_since"] is None
    assert scope["consensus"] == {"open": 0, "done": 0}
    assert [s["subset"] for s in scope["subsets"]] == [
        "",
        "answers",
        "illumination=day",
        "qa_type=object_recognition",
        "qa_type=scene_description",
    ]
    whole = scope["subsets"][0]
    assert (whole["title"], whole["kind"], whole["level"], whole["can_reconcile"]) == (
        "All QA pairs",
        "ratings",
        "nominal",
        True,
    )
    pa = _report(whole, "percent_agreement")
    assert (pa["value"], pa["n_items"], pa["n_raters"], pa["label"]) == (0.5, 12, 2, "Percent agreement (nominal)")
    assert pa["ci"][0] <= 0.5 <= pa["ci"][1]
    # The bars: one category per metric, one series (no consensus round yet), the interval as yMin/yMax.
    bars = whole["bars"]
    assert [s["round"] for s in bars["series"]] == ["first"]
    at = bars["categories"].index("Percent agreement")
    assert bars["series"][0]["points"][at] == {
        "y": 0.5,
        "yMin": pa["ci"][0],
        "yMax": pa["ci"][1],
        "n_items": 12,
        "n_raters": 2,
    }
    assert "Cohen's κ" in bars["categories"] and bars["high"] == 1.0
    # Who agreed with whom: the two of them on all 12 pairs, half the time.
    names = whole["raters"]["raters"]
    assert sorted(names) == sorted([pseudonym(annotator.pk), pseudonym(annotator2.pk)])
    assert whole["raters"]["agreement"] == [[1.0, 0.5], [0.5, 1.0]] and whole["raters"]["shared"] == [
        [12, 12],
        [12, 12],
    ]
    confusion = whole["confusion"]
    keep, delete = confusion["categories"].index("keep"), confusion["categories"].index("delete")
    assert confusion["counts"][keep][delete] == 3
    # The six disputed pairs, each linked to its history, with both answers.
    assert len(whole["top"]) == 6 and whole["top"][0]["disagreement"] == 1.0
    first = whole["top"][0]
    assert first["link"] == f"/projects/{project.slug}/qa/{first['item']}/" and first["consensus"] is None
    assert sorted(a["rater"] for a in first["answers"]) == sorted(names)
    # The texts are measured, not reconciled; a trend point per computation.
    answers = scope["subsets"][1]
    assert (answers["kind"], answers["can_reconcile"]) == ("texts", True)  # free-text answers can be reconciled too
    assert _report(answers, "semantic_agreement")["n_items"] == 9
    series = next(s for s in scope["trend"]["subsets"][0]["series"] if s["metric"] == "percent_agreement")
    assert [p["y"] for p in series["points"]] == [0.5] and series["points"][0]["t"] == comp.computed_at.isoformat()


def test_a_scope_with_judgments_but_never_computed_is_listed_with_new_responses(project, two_raters):
    body = client_of(project, "reviewer").get(f"/api/projects/{project.slug}/agreement/").json()
    assert [(s["key"], s["computation"], s["new_responses"], s["subsets"]) for s in body["scopes"]] == [
        ("verification", None, True, [])
    ]


def test_the_csv_has_every_stored_report_of_every_computation(project, two_raters):
    client = client_of(project, "admin")
    services.compute(project, "verification", trigger="api", n_resamples=R)
    services.compute(project, "verification", trigger="api", n_resamples=R)
    res = client.get(f"/api/projects/{project.slug}/agreement/", {"format": "csv"})
    assert res.status_code == 200 and res["Content-Type"] == "text/csv; charset=utf-8"
    assert res["Content-Disposition"] == f'attachment; filename="{project.slug}-agreement.csv"'
    rows = _csv(res)
    assert list(rows[0]) == CSV_HEADER
    assert len(rows) == Report.objects.filter(project=project).count() > 10
    pa = [r for r in rows if (r["subset"], r["metric"]) == ("", "percent_agreement")]
    assert [r["value"] for r in pa] == ["0.5", "0.5"]  # both computations: a trend
    assert pa[0]["computed_at"] < pa[1]["computed_at"] and pa[0]["n_items"] == "12" and pa[0]["round"] == "first"
    assert float(pa[0]["ci_low"]) <= 0.5 <= float(pa[0]["ci_high"]) and len(pa[0]["fingerprint"]) == 64


def test_the_scope_filter_and_an_unknown_scope(project, two_raters):
    client = client_of(project, "admin")
    services.compute(project, "verification", trigger="api", n_resamples=R)
    services.import_ratings(project, "sheets", "nominal", SHEETS)
    services.compute(project, "ratings:sheets", trigger="api", n_resamples=R)
    url = f"/api/projects/{project.slug}/agreement/"
    assert [s["key"] for s in client.get(url).json()["scopes"]] == ["ratings:sheets", "verification"]
    assert [s["key"] for s in client.get(url, {"scope": "ratings:sheets"}).json()["scopes"]] == ["ratings:sheets"]
    assert {r["scope"] for r in _csv(client.get(url, {"scope": "ratings:sheets", "format": "csv"}))} == {
        "ratings:sheets"
    }
    res = client.get(url, {"scope": "ratings:nope"})
    assert res.status_code == 404 and "no agreement scope 'ratings:nope'" in res.json()["detail"]
    res = client.get(url, {"format": "xml"})
    assert res.status_code == 400 and set(res.json()["errors"]) == {"format"}


# ------------------------------------------------------------------------------ computing now


def test_compute_queues_one_job_per_scope_and_refuses_an_unknown_one(project, two_raters):
    client = client_of(project, "reviewer")
    url = f"/api/projects/{project.slug}/agreement/compute/"
    res = client.post(url, {}, format="json")
    assert res.status_code == 202
    job = Job.objects.get(pk=res.json()["jobs"][0])
    assert len(res.json()["jobs"]) == 1 and job.task == "agreement.compute" and job.args[1] == "api"
    assert client.post(url, {"scope": "verification"}, format="json").json() == {"jobs": []}  # queued already
    res = client.post(url, {"scope": "study:nope"}, format="json")
    assert res.status_code == 404 and "study:nope" in res.json()["detail"]
    assert Job.objects.filter(task="agreement.compute").count() == 1


# ------------------------------------------------------------------------------ rating sets

SHEETS = [
    {"item": f"i{i}", "rater": r, "value": v}
    for i, vals in enumerate([("a", "a", "a"), ("b", "b", "a"), ("a", "a", "a"), ("b", "b", "b")])
    for r, v in zip("xyz", vals)
]


def test_a_rating_set_brought_over_the_api_is_measured(project):
    client = client_of(project, "researcher")
    url = f"/api/projects/{project.slug}/agreement/ratings/"
    res = client.post(
        url,
        {"name": "sheets", "level": "nominal", "ratings": SHEETS + [{"item": "i9", "rater": "x", "value": None}]},
        format="json",
    )
    assert res.status_code == 201 and res.json() == {"name": "sheets", "ratings": 12}  # the null is a missing rating
    services.compute(project, "ratings:sheets", trigger="api", n_resamples=R)
    body = client.get(f"/api/projects/{project.slug}/agreement/", {"scope": "ratings:sheets"}).json()
    assert body["scopes"][0]["title"] == "Rating set sheets (external ratings, nominal)"
    whole = _whole(body, "ratings:sheets")
    assert _report(whole, "percent_agreement")["value"] == pytest.approx(10 / 12)
    assert _report(whole, "fleiss_kappa")["n_raters"] == 3
    assert whole["top"][0]["item"] == "i1" and whole["top"][0]["link"] == ""


def test_a_bad_rating_is_a_400_naming_it_and_a_taken_name_a_409(project):
    client = client_of(project, "admin")
    url = f"/api/projects/{project.slug}/agreement/ratings/"
    res = client.post(
        url,
        {
            "name": "scores",
            "level": "ordinal",
            "ratings": [{"item": "i", "rater": "x", "value": 1}, {"item": "i", "rater": "y", "value": "high"}],
        },
        format="json",
    )
    assert res.status_code == 400 and res.json()["detail"] == "rating 2: ordinal ratings must be numbers, not 'high'"
    res = client.post(
        url,
        {"name": "scores", "level": "ordinal", "ratings": [{"item": "i", "rater": "x", "value": {"score": 1}}]},
        format="json",
    )
    assert res.status_code == 400 and res.json()["detail"] == "rating 1: a value is a number, a text or null"
    assert not RatingSet.objects.exists()
    assert client.post(url, {"name": "sheets", "level": "nominal", "ratings": SHEETS}, format="json").status_code == 201
    res = client.post(url, {"name": "sheets", "level": "nominal", "ratings": SHEETS[:3]}, format="json")
    assert res.status_code == 409 and "replace" in res.json()["detail"]
    assert Rating.objects.count() == 12
    res = client.post(
        url, {"name": "sheets", "level": "nominal", "replace": True, "ratings": SHEETS[:3]}, format="json"
    )
    assert res.status_code == 201 and res.json() == {"name": "sheets", "ratings": 3} and Rating.objects.count() == 3


def test_only_admins_and_researchers_bring_rating_sets(project):
    res = client_of(project, "reviewer").post(
        f"/api/projects/{project.slug}/agreement/ratings/",
        {"name": "s", "level": "nominal", "ratings": SHEETS},
        format="json",
    )
    assert res.status_code == 403 and not RatingSet.objects.exists()


# ------------------------------------------------------------------------------ the consensus round


def test_the_consensus_round_over_the_api_reports_both_rounds(project, two_raters, annotator2):
    client = client_of(project, "reviewer")
    services.compute(project, "verification", trigger="api", n_resamples=R)
    url = f"/api/projects/{project.slug}/agreement/consensus/"
    res = client.post(url, {"scope": "verification", "threshold": 1.0}, format="json")
    assert res.status_code == 201 and len(res.json()) == 6
    sent = res.json()[0]
    assert sent["status"] == "open" and sent["sent_by"] == "api-reviewer" and len(sent["answers"]) == 2
    assert (
        sent["revised"] == [] and sent["consensus"] is None and sent["link"].startswith(f"/projects/{project.slug}/qa/")
    )
    assert client.post(url, {"scope": "verification", "threshold": 1.0}, format="json").json() == []  # not twice

    second = pseudonym(annotator2.pk)
    for item in res.json():
        res2 = client.post(
            f"/api/agreement/consensus/{item['id']}/",
            {"consensus": "keep", "revised": {second: "keep"}, "note": "discussed"},
            format="json",
        )
        assert res2.status_code == 200, res2.content
    done = res2.json()
    assert done["status"] == "done" and done["consensus"] == "keep" and done["reviewer"] == "api-reviewer"
    assert {a["rater"]: a["value"] for a in done["revised"]}[second] == "keep"
    res = client.post(f"/api/agreement/consensus/{done['id']}/", {"consensus": "delete"}, format="json")
    assert res.status_code == 409 and ConsensusItem.objects.get(pk=done["id"]).consensus == "keep"

    listed = client.get(url).json()
    assert [i["status"] for i in listed] == ["done"] * 6
    # A page at a time, bounded: limit and offset, and a status filter.
    assert [i["id"] for i in client.get(url, {"limit": 2, "offset": 1}).json()] == [i["id"] for i in listed[1:3]]
    assert client.get(url, {"status": "open"}).json() == []
    assert client.get(url, {"limit": 501}).status_code == 400 and client.get(url, {"offset": -1}).status_code == 400
    services.compute(project, "verification", trigger="api", n_resamples=R)
    whole = _whole(client.get(f"/api/projects/{project.slug}/agreement/").json())
    assert _report(whole, "percent_agreement")["value"] == 0.5  # round 1 as it was
    assert _report(whole, "percent_agreement", "consensus")["value"] == 1.0  # everyone keeps after discussion
    assert [s["round"] for s in whole["bars"]["series"]] == ["first", "consensus"]
    assert all(t["consensus"]["status"] == "done" for t in whole["top"])


def test_a_consensus_needs_a_value_and_raters_who_rated(project, two_raters):
    client = client_of(project, "admin")
    services.compute(project, "verification", trigger="api", n_resamples=R)
    item = client.post(
        f"/api/projects/{project.slug}/agreement/consensus/", {"scope": "verification", "threshold": 1.0}, format="json"
    ).json()[0]
    url = f"/api/agreement/consensus/{item['id']}/"
    res = client.post(url, {"revised": {}}, format="json")
    assert res.status_code == 400 and set(res.json()["errors"]) == {"consensus"}
    res = client.post(url, {"consensus": "keep", "revised": {"nobody": "keep"}}, format="json")
    assert res.status_code == 400 and res.json()["detail"] == "'nobody' did not rate this item"
    res = client.post(f"/api/projects/{project.slug}/agreement/consensus/", {"scope": "verification"}, format="json")
    assert res.status_code == 400
    assert res.json()["errors"] == {
        "non_field_errors": "give either a disagreement threshold (0 to 1) or a list of items"
    }
    res = client.post(
        f"/api/projects/{project.slug}/agreement/consensus/",
        {"scope": "verification", "subset": "answers", "threshold": 0.5},
        format="json",
    )
    assert res.status_code == 201 and res.json() == []  # no two answers are that far apart ("answer 1", "reply 1")
    assert ConsensusItem.objects.get(pk=item["id"]).status == "open" and not ConsensusRating.objects.exists()


# ------------------------------------------------------------------------------ the documented schema


@pytest.mark.django_db(transaction=True)
def test_the_answers_on_real_data_match_the_documented_schema(live_server, project, two_raters, annotator2):
    """The fuzzer (tests/api/test_schema_fuzz.py) sees projects without agreement data; here every
    part of the dashboard's JSON is filled (both rounds, matrices, skipped metrics, a trend)."""
    import requests
    import schemathesis

    services.compute(project, "verification", trigger="api", n_resamples=R)
    services.import_ratings(project, "sheets", "nominal", SHEETS)
    services.compute(project, "ratings:sheets", trigger="api", n_resamples=R)
    user = ensure_member("api-schema", role="admin", project=project, password="pw-agree-1")[0]
    headers = {"Authorization": f"Token {token_for(user)}"}
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")
    base = f"{live_server.url}/api/projects/{project.slug}/agreement/"
    with requests.Session() as http:
        sent = http.post(base + "consensus/", json={"scope": "verification", "threshold": 1.0}, headers=headers)
        schema["/api/projects/{slug}/agreement/consensus/"]["POST"].validate_response(sent)
        done = http.post(
            f"{live_server.url}/api/agreement/consensus/{sent.json()[0]['id']}/",
            json={"consensus": "keep", "revised": {pseudonym(annotator2.pk): "keep"}},
            headers=headers,
        )
        schema["/api/agreement/consensus/{id}/"]["POST"].validate_response(done)
        services.compute(project, "verification", trigger="api", n_resamples=R)
        res = http.get(base, headers=headers)
        assert {s["round"] for s in _whole(res.json())["bars"]["series"]} == {"first", "consensus"}
        schema["/api/projects/{slug}/agreement/"]["GET"].validate_response(res)
        listed = http.get(base + "consensus/", headers=headers)
        assert len(listed.json()) == 6
        schema["/api/projects/{slug}/agreement/consensus/"]["GET"].validate_response(listed)
        res = http.get(base, params={"format": "csv"}, headers=headers)
        schema["/api/projects/{slug}/agreement/"]["GET"].validate_response(res)
        res = http.post(
            base + "ratings/",
            json={"name": "more", "level": "interval", "ratings": [{"item": "a", "rater": "x", "value": 1.5}]},
            headers=headers,
        )
        schema["/api/projects/{slug}/agreement/ratings/"]["POST"].validate_response(res)
        res = http.post(base + "compute/", json={}, headers=headers)
        assert res.status_code == 202
        schema["/api/projects/{slug}/agreement/compute/"]["POST"].validate_response(res)
