"""GET /api/projects/{slug}/report/: overseers only, bad query parameters answered 400 in words (never
5xx), and answers that match the OpenAPI schema (schemathesis, live server)."""

from __future__ import annotations

import pytest
import requests
import schemathesis
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotator.projects.services import ensure_member, token_for

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def _client(project, name, role):
    user = ensure_member(name, role=role, project=project, password=f"pw-{name}-123")[0]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


@pytest.mark.django_db
def test_overseers_read_the_report_by_fields(world):
    project = world["study"].project
    url = f"/api/projects/{project.slug}/report/"
    r = _client(project, "res", "researcher").get(
        url, {"by": "illumination", "study": "timed", "evaluation": world["evaluation"].pk}
    )
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["by"] == ["illumination"] and body["metric"] == "accuracy"
    day = body["rows"][0]
    assert day["split"] == {"illumination": "day"} and day["cells"]["human"]["value"] == 0.6
    assert day["paired"]["ev"]["n"] == 2
    for role in ("admin", "reviewer"):
        assert _client(project, f"x-{role}", role).get(url, {"by": "qa_type"}).status_code == 200


@pytest.mark.django_db
def test_annotators_and_strangers_do_not(world):
    project = world["study"].project
    url = f"/api/projects/{project.slug}/report/"
    assert _client(project, "ann-r", "annotator").get(url).status_code == 403
    assert APIClient().get(url).status_code in (401, 403)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query, words",
    [
        ({"by": "colour"}, "unknown split field"),
        ({"preset": "nope"}, "not a valid choice"),
        ({"study": "nope"}, "no study named"),
        ({"evaluation": "123456"}, "no evaluation 123456"),
        ({"evaluation": "abc"}, "valid integer"),
        ({"evaluation": str(10**30)}, "less than or equal"),
        ({"metric": "colourfulness"}, "unknown metric"),
        ({"by": "qa_type", "preset": "vudg"}, "not both"),
        ({"resamples": "10"}, "greater than or equal"),
        ({"resamples": "99999999999999999999"}, "less than or equal"),
        ({"seed": "-3"}, "greater than or equal"),
        ({"by": "x" * 500}, "no more than 200"),
    ],
)
def test_bad_query_parameters_are_400_in_words(world, query, words):
    project = world["study"].project
    r = _client(project, "res", "researcher").get(f"/api/projects/{project.slug}/report/", query)
    assert r.status_code == 400, r.content
    assert words in r.content.decode()


@pytest.mark.django_db(transaction=True)
def test_report_answers_match_the_schema(live_server, world):
    project = world["study"].project
    admin = ensure_member("schema-rep", role="admin", project=project)[0]
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")
    headers = {"Authorization": f"Token {token_for(admin)}"}
    op = schema["/api/projects/{slug}/report/"]["GET"]
    queries = [
        {"by": "illumination,qa_type", "study": ["timed"], "evaluation": [world["evaluation"].pk]},
        {"preset": "egoexobench"},
        {"preset": "ego-flight-table1"},
        {"by": "colour"},
        {},
    ]
    statuses = []
    with requests.Session() as session:
        for query in queries:
            case = op.Case(path_parameters={"slug": project.slug}, query=query)
            statuses.append(
                case.call_and_validate(
                    base_url=live_server.url, session=session, headers=headers, checks=CHECKS
                ).status_code
            )
    assert statuses == [200, 200, 200, 400, 200]
