"""Security review of issue 18 (helper h_sec): the benchmark report's bounds and columns, and the
names model answers carry. Each test was seen failing before its fix."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.reports.conftest import world  # noqa: F401  (the report's small world: a fixture)
from tests.reports.test_api import _client

pytestmark = pytest.mark.django_db


def _all_row(body: dict) -> dict:
    return body["rows"][-1]["cells"]


def test_a_source_named_twice_is_read_once(world):
    """?study=timed&study=timed read the study twice: every answer counted twice (human n 8 -> 16,
    the interval narrower than the data allow) and, 50 times over, 50 times the memory and time."""
    project = world["study"].project
    url = f"/api/projects/{project.slug}/report/"
    client = _client(project, "res", "researcher")
    once = client.get(url, {"study": "timed"}).json()
    twice = client.get(url, {"study": ["timed"] * 50})
    assert twice.status_code == 200, twice.content
    assert _all_row(twice.json()) == _all_row(once)
    assert _all_row(once)["human"]["n"] == 8
    assert twice.json()["studies"] == ["timed"]
    ev = world["evaluation"].pk
    alone = client.get(url, {"evaluation": ev}).json()
    thrice = client.get(url, {"evaluation": [ev, f"0{ev}", ev]}).json()
    assert _all_row(thrice) == _all_row(alone) and _all_row(alone)["ev"]["n"] == 4
    assert thrice["evaluations"] == [ev]


def test_a_model_named_human_is_never_counted_as_people(world):
    """An imported prediction's model, a model participant's or an evaluation's model named
    "human" were merged into the people's column (the report's human cell went from n=8 to n=12);
    a model named "human · 60 s" would join a preset's people column."""
    from annotator.errors import Invalid
    from annotator.evaluation.models import Evaluation
    from annotator.studies import services
    from annotator.studies.models import Prediction

    study = world["study"]
    project = study.project
    item = Prediction.objects.filter(model="imp").first().item
    for name in ("human", " Human ", "human · 60 s"):
        report = services.import_predictions(study, [f'{{"model": "{name}", "item_id": {item.pk}, "predicted": 0}}'])
        assert report.imported == 0 and "people's column" in report.errors[0][1], report.errors
        with pytest.raises(Invalid, match="people's column"):
            services.model_participant(study, name)
    # Rows written before this check, and an evaluation's model (named by whoever starts it).
    Prediction.objects.filter(model="imp").update(model="human")
    Evaluation.objects.filter(pk=world["evaluation"].pk).update(model="human · 60 s")
    url = f"/api/projects/{project.slug}/report/"
    body = (
        _client(project, "res", "researcher").get(url, {"study": "timed", "evaluation": world["evaluation"].pk}).json()
    )
    cells = _all_row(body)
    assert cells["human"]["n"] == 8 and cells["human"]["value"] == 0.5
    assert cells["human (model)"]["n"] == 4 and cells["human · 60 s (model)"]["n"] == 4
    assert body["columns"] == ["human", "human (model)", "human · 60 s (model)", "mp"]


def test_a_report_costing_more_than_its_work_bound_is_a_400_in_words(world, monkeypatch):
    """resamples x answers was unbounded: 10,000 resamples of 200,000 answers took 50 s of a web
    process (bench/report.py), and a preset computes a table per metric and people's column. The
    bound is WORK_MAX resample-answer passes; here lowered to this world's 20 answers x 1,000."""
    from annotator.reports import selectors

    project = world["study"].project
    url = f"/api/projects/{project.slug}/report/"
    client = _client(project, "res", "researcher")
    query = {"study": "timed", "evaluation": world["evaluation"].pk}
    monkeypatch.setattr(selectors, "WORK_MAX", 20 * 1000)
    assert client.get(url, {**query, "resamples": 1000}).status_code == 200
    r = client.get(url, {**query, "resamples": 1001})
    assert r.status_code == 400, r.content
    assert r.json()["detail"] == (
        "this report is too large to compute at once (20 answers, 1 table pass, 1001 "
        "resamples): ask for at most 1000 resamples"
    )
    # A preset splitting people by time limit (60 s, 180 s): one table, then once per people's column.
    r = client.get(url, {**query, "preset": "egoexobench", "resamples": 400})
    assert (
        r.status_code == 400
        and "(20 answers, 3 table passes, 400 resamples): ask for at most 333" in r.json()["detail"]
    )
    monkeypatch.setattr(selectors, "WORK_MAX", 20 * 50)
    r = client.get(url, query)
    assert r.status_code == 400 and r.json()["detail"].endswith("choose fewer studies or evaluations")
    web = Client()
    web.force_login(get_user_model().objects.get(username="res"))
    page = web.get(f"/projects/{project.slug}/report/", query)
    assert page.status_code == 200 and "choose fewer studies or evaluations" in page.content.decode()
    assert web.get(f"/projects/{project.slug}/report/report.csv", query).status_code == 400
