"""The evaluation API's answers match its OpenAPI schema, on real data (a report with every kind of
score, failures and the engine's agreement; a re-judge item; the leaderboard; the export), checked
by schemathesis against the app on a live server: the documented status, content type and body."""

from __future__ import annotations

import pytest
import requests
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotator.agreement import services as agreement
from annotator.evaluation import rejudge
from annotator.evaluation.models import Prediction
from annotator.projects.services import ensure_member, token_for

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.mark.django_db(transaction=True)
def test_every_evaluation_answer_matches_the_schema(live_server, project, judged_evaluation):
    e = judged_evaluation(["correct", "incorrect", "correct", "correct"])
    Prediction.objects.bulk_create(
        [
            Prediction(
                evaluation=e,
                kind="mcq",
                qa_type="objects",
                illumination="day",
                source="synthetic",
                provenance="human_added",
                question="Which?",
                truth="cup",
                options=["pan", "cup"],
                answer_index=1,
                prediction="B",
                choice_letter="B",
                choice_index=1,
                correct=True,
                clip_start_s=0,
                clip_end_s=3,
                status="done",
            ),
            Prediction(
                evaluation=e,
                kind="open",
                qa_type="scene",
                illumination="day",
                source="real",
                provenance="",
                question="What?",
                truth="x",
                clip_start_s=0,
                clip_end_s=3,
                status="failed",
                stage="predict",
                error="no usable answer",
            ),
        ]
    )
    admin = ensure_member("schema-admin", role="admin", project=project)[0]
    sample = rejudge.create_sample(e, size=4, seed=2)
    for verdict in ("right", "right", "wrong"):
        rejudge.record(rejudge.next_item(sample, admin).pk, admin, verdict)
    agreement.compute(project, f"ratings:{sample.rating_set}", n_resamples=50)
    item = rejudge.next_item(sample, admin)

    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")
    headers = {"Authorization": f"Token {token_for(admin)}"}
    calls = [
        ("/api/projects/{slug}/evaluations/", "GET", {"slug": project.slug}, {}, None),
        (
            "/api/projects/{slug}/evaluations/",
            "POST",
            {"slug": project.slug},
            {},
            {"server": "judge-host", "frames": 99},
        ),
        ("/api/evaluations/{id}/", "GET", {"id": e.pk}, {}, None),
        ("/api/evaluations/{id}/", "GET", {"id": 10**17}, {}, None),
        ("/api/evaluations/{id}/predictions/", "GET", {"id": e.pk}, {"format": "jsonl"}, None),
        ("/api/evaluations/{id}/predictions/", "GET", {"id": e.pk}, {"format": "csv"}, None),
        ("/api/evaluations/{id}/rejudge/", "GET", {"id": e.pk}, {}, None),
        ("/api/evaluations/{id}/rejudge/", "POST", {"id": e.pk}, {}, {"size": 2}),
        ("/api/evaluations/{id}/rejudge/next/", "POST", {"id": e.pk}, {}, None),
        ("/api/rejudge/{id}/", "POST", {"id": item.pk}, {}, {"verdict": "right"}),
        ("/api/evaluations/{id}/rejudge/next/", "POST", {"id": e.pk}, {}, None),
        ("/api/evaluations/{id}/cancel/", "POST", {"id": e.pk}, {}, None),
    ]
    statuses = []
    with requests.Session() as session:
        for path, method, params, query, body in calls:
            kwargs = {"path_parameters": params, "query": query}
            if body is not None:
                kwargs["body"] = body
            case = schema[path][method].Case(**kwargs)
            statuses.append(
                case.call_and_validate(
                    base_url=live_server.url, session=session, headers=headers, checks=CHECKS
                ).status_code
            )
    assert statuses == [200, 400, 200, 404, 200, 200, 200, 409, 200, 200, 204, 409]
