"""The REST API: the verification flow over token auth, the video list, the export and the schema."""

import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from annotator.media.models import Video
from annotator.projects.services import ensure_member, ensure_project
from annotator.qa.models import QAPair
from tests.conftest import qh, row_id, uh


def _client_for(user_name, role, project):
    from io import StringIO

    out = StringIO()
    call_command("createuser", user_name, "--role", role, "--project", project.slug, "--token", stdout=out)
    token = out.getvalue().strip()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client, token


@pytest.mark.django_db
def test_createuser_prints_the_same_token_each_time(project):
    _, first = _client_for("tok", "annotator", project)
    _, second = _client_for("tok", "annotator", project)
    assert first == second and len(first) == 40


def test_an_annotator_claims_and_submits_over_the_api(make_unit, project):
    unit = make_unit(n_open=1)
    client, _ = _client_for("api-ann", "annotator", project)

    res = client.post(f"/api/projects/{project.slug}/queue/next/")
    assert res.status_code == 200
    body = res.json()
    assert body["id"] == uh(unit)
    assert [q["qa_type"] for q in body["qa_pairs"]] == ["scene_description", "object_recognition"]
    assert body["qa_pairs"][1]["options"] == ["pan", "cup", "lamp", "shoe"]
    assert {r["value"] for r in body["delete_reasons"]} == {
        "meaningless",
        "vague",
        "duplicate",
        "inconsistent",
        "wrong",
    }
    open_q, mc = body["qa_pairs"]

    payload = {
        "idempotency_key": "api-1",
        "time_spent_ms": 4000,
        "decisions": [
            {"qa_id": open_q["id"], "action": "keep", "time_spent_ms": 1000},
            {"qa_id": mc["id"], "action": "delete", "reason": "wrong"},
        ],
        "added": [{"qa_type": "scene_description", "question": "Where is it?", "answer": "a kitchen"}],
    }
    res = client.post(f"/api/units/{uh(unit.pk)}/submit/", payload, format="json")
    assert res.status_code == 200
    assert res.json() == {
        "unit_id": uh(unit),
        "item_id": body["queue"]["item_id"],
        "kind": "first_pass",
        "status": "done",
        "replayed": False,
        "counts": {"kept": 1, "modified": 0, "deleted": 1, "added": 1},
    }
    again = client.post(f"/api/units/{uh(unit.pk)}/submit/", payload, format="json")
    assert again.status_code == 200 and again.json()["replayed"] is True
    assert QAPair.objects.filter(origin="human").count() == 1
    assert client.post(f"/api/projects/{project.slug}/queue/next/").status_code == 204


def test_a_bad_submit_gets_400_with_field_errors(make_unit, project):
    unit = make_unit(n_open=1)
    client, _ = _client_for("api-bad", "annotator", project)
    client.post(f"/api/projects/{project.slug}/queue/next/")
    open_q, mc = unit.qa_pairs.order_by("id")
    res = client.post(
        f"/api/units/{uh(unit.pk)}/submit/",
        {
            "idempotency_key": "b",
            "decisions": [{"qa_id": qh(open_q), "action": "keep"}, {"qa_id": qh(mc), "action": "delete"}],
        },
        format="json",
    )
    assert res.status_code == 400
    assert res.json()["errors"] == {
        "decisions[1].reason": "choose a reason: meaningless, vague, duplicate, inconsistent, wrong"
    }
    assert res.json()["detail"] == "the submit has errors; nothing was saved"
    res = client.post(f"/api/units/{uh(unit.pk)}/submit/", {"decisions": "nope"}, format="json")
    assert res.status_code == 400
    assert res.json() == {
        "detail": "the request has errors; nothing was saved",
        "errors": {
            "idempotency_key": "This field is required.",
            "decisions": 'Expected a list of items but got type "str".',
        },
    }


def test_another_annotators_unit_is_refused_with_409(make_unit, project):
    unit = make_unit(n_open=1)
    first, _ = _client_for("api-a", "annotator", project)
    second, _ = _client_for("api-b", "annotator", project)
    first.post(f"/api/projects/{project.slug}/queue/next/")
    decisions = [{"qa_id": qh(q), "action": "keep"} for q in unit.qa_pairs.all()]
    res = second.post(
        f"/api/units/{uh(unit.pk)}/submit/", {"idempotency_key": "z", "decisions": decisions}, format="json"
    )
    assert res.status_code == 409
    assert QAPair.objects.filter(unit=unit, status="draft").count() == 2


def test_roles_are_checked(make_unit, project):
    unit = make_unit(n_open=1)
    researcher, _ = _client_for("api-res", "researcher", project)
    annotator, _ = _client_for("api-ann2", "annotator", project)
    other = ensure_project("other")
    outsider, _ = _client_for("api-out", "admin", other)

    assert researcher.post(f"/api/projects/{project.slug}/queue/next/").status_code == 403
    assert researcher.get(f"/api/projects/{project.slug}/videos/").status_code == 200
    assert annotator.get(f"/api/projects/{project.slug}/export/").status_code == 403
    assert outsider.post(f"/api/projects/{project.slug}/queue/next/").status_code == 404
    assert outsider.get(f"/api/projects/{project.slug}/videos/").status_code == 404
    assert (
        outsider.post(
            f"/api/units/{uh(unit.pk)}/submit/", {"idempotency_key": "o", "decisions": []}, format="json"
        ).status_code
        == 404
    )
    assert APIClient().post(f"/api/projects/{project.slug}/queue/next/").status_code in (401, 403)


def test_the_video_list_reports_status_and_errors(project):
    Video.objects.create(project=project, sha256="a" * 64, filename="good.mp4", status="ready", duration_s=3.0)
    Video.objects.create(
        project=project,
        sha256="b" * 64,
        filename="bad.mp4",
        status="failed",
        error="truncated or corrupt: moov atom not found",
    )
    client, _ = _client_for("api-vid", "researcher", project)
    page = client.get(f"/api/projects/{project.slug}/videos/").json()
    assert page["count"] == 2
    rows = page["results"]
    assert [(r["filename"], r["status"], r["error"]) for r in rows] == [
        ("good.mp4", "ready", ""),
        ("bad.mp4", "failed", "truncated or corrupt: moov atom not found"),
    ]


def test_the_video_list_filters_by_status_source_and_illumination(project):
    Video.objects.create(
        project=project,
        sha256="a" * 64,
        filename="day.mp4",
        status="ready",
        duration_s=3.0,
        illumination="day",
        source="real",
    )
    Video.objects.create(
        project=project,
        sha256="b" * 64,
        filename="night.mp4",
        status="ready",
        duration_s=3.0,
        illumination="night",
        source="synthetic",
    )
    Video.objects.create(project=project, sha256="c" * 64, filename="bad.mp4", status="failed", error="corrupt")
    client, _ = _client_for("api-vid", "researcher", project)
    url = f"/api/projects/{project.slug}/videos/"

    def names(query):
        return [r["filename"] for r in client.get(url + query).json()["results"]]

    assert names("?status=failed") == ["bad.mp4"]  # was ignored: every video came back
    assert names("?status=ready&illumination=night") == ["night.mp4"]
    assert names("?source=synthetic") == ["night.mp4"]
    assert names("?status=") == ["day.mp4", "night.mp4", "bad.mp4"]
    res = client.get(url + "?status=broken")
    assert res.status_code == 400
    assert res.json()["errors"]["status"].startswith('"broken" is not a valid choice')


def test_an_admin_downloads_the_export_as_jsonl(make_unit, project, annotator):
    from annotator.qa.queue import claim_next
    from annotator.qa.services import Decision, submit_unit

    unit = claim_next(make_unit(n_open=1).project, annotator).unit
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="e",
        time_spent_ms=None,
        additions=[],
        decisions=[Decision(q.pk, "keep") for q in unit.qa_pairs.all()],
    )
    admin, _ = _client_for("api-admin", "admin", project)
    res = admin.get(f"/api/projects/{project.slug}/export/?qa_type=object_recognition")
    assert res.status_code == 200
    assert res["Content-Type"].startswith("application/jsonl")
    lines = b"".join(res.streaming_content).decode().splitlines()
    assert [json.loads(line)["answer"] for line in lines] == ["cup"]


@pytest.mark.django_db
def test_the_openapi_schema_describes_the_flow():
    res = APIClient().get("/api/schema/?format=json")
    assert res.status_code == 200
    paths = json.loads(res.content)["paths"]
    assert {
        "/api/projects/{slug}/queue/next/",
        "/api/units/{id}/submit/",
        "/api/projects/{slug}/videos/",
        "/api/projects/{slug}/export/",
    } <= set(paths)
    assert set(paths["/api/projects/{slug}/queue/next/"]["post"]["responses"]) == {
        "200",
        "204",
        "400",
        "401",
        "403",
        "404",
    }


def test_ensure_member_refuses_an_unknown_role(project):
    with pytest.raises(ValueError, match="role must be one of"):
        ensure_member("x", role="boss", project=project)


def test_heartbeat_skip_autosave_and_edits_over_the_api(make_unit, project):
    unit = make_unit(n_open=1)
    client, _ = _client_for("api-hb", "annotator", project)
    admin, _ = _client_for("api-ed", "admin", project)
    body = client.post(f"/api/projects/{project.slug}/queue/next/").json()
    assert body["queue"]["kind"] == "first_pass" and body["autosave"] is None

    assert client.post(f"/api/units/{uh(unit.pk)}/heartbeat/").status_code == 200
    assert (
        client.put(
            f"/api/units/{uh(unit.pk)}/autosave/",
            {"state": {"x": 1}, "client_saved_at_ms": 5, "time_spent_ms": 4000},
            format="json",
        ).status_code
        == 204
    )
    again = client.post(f"/api/projects/{project.slug}/queue/next/").json()
    assert again["autosave"] == {"state": {"x": 1}, "client_saved_at_ms": 5, "time_spent_ms": 4000}
    assert again["carried"] is None

    qa = {**body["qa_pairs"][0], "id": row_id("qa", body["qa_pairs"][0]["id"])}  # the admin's API takes row ids
    res = admin.patch(f"/api/qa/{qa['id']}/", {"version": qa["version"], "answer": "edited"}, format="json")
    assert res.status_code == 200 and res.json()["version"] == 2
    stale = admin.patch(f"/api/qa/{qa['id']}/", {"version": qa["version"], "answer": "stale"}, format="json")
    assert stale.status_code == 409 and stale.json()["conflicts"][0]["current"]["answer"] == "edited"
    history = admin.get(f"/api/qa/{qa['id']}/").json()["history"]["revisions"]
    assert [r["action"] for r in history] == ["draft", "edit"]

    assert client.post(f"/api/units/{uh(unit.pk)}/skip/", {"reason": ""}, format="json").status_code == 400
    assert (
        client.post(f"/api/units/{uh(unit.pk)}/skip/", {"reason": "cannot see anything"}, format="json").status_code
        == 204
    )
    assert client.post(f"/api/units/{uh(unit.pk)}/heartbeat/").status_code == 409
    assert client.post(f"/api/projects/{project.slug}/queue/next/").status_code == 204


def test_the_verify_pages_frequent_requests_are_a_handful_of_statements(make_unit, project):
    """The claim, heartbeat and autosave, most of an annotator's requests (issue 22's load test),
    each cost a fixed handful of statements (on a one-unit queue here; bench/queue.py shows the
    claim flat from 1k to 1M units): the token's and the membership's, then the request's own.
    Claim: the claim policy's, the claim, the exposure ledger's (reads and write in one), the
    activity beat, the payload (the savepoint and its release: this test runs in a transaction).
    Heartbeat: the lease, the beat. Autosave: the item with its claims, the save, the beat; the same
    when it replaces the save."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    unit = make_unit(n_open=1)
    client, _ = _client_for("api-statements", "annotator", project)
    counts = {}
    for name, send in [
        ("claim", lambda: client.post(f"/api/projects/{project.slug}/queue/next/")),
        ("heartbeat", lambda: client.post(f"/api/units/{uh(unit.pk)}/heartbeat/")),
        ("autosave", lambda: client.put(f"/api/units/{uh(unit.pk)}/autosave/", save, format="json")),
        ("autosave again", lambda: client.put(f"/api/units/{uh(unit.pk)}/autosave/", save, format="json")),
    ]:
        save = {"state": {"x": name}, "client_saved_at_ms": len(counts), "time_spent_ms": 1000}
        with CaptureQueriesContext(connection) as statements:
            assert send().status_code in (200, 204), name
        counts[name] = len(statements)
    assert counts == {"claim": 9, "heartbeat": 4, "autosave": 5, "autosave again": 5}, counts
    assert client.post(f"/api/projects/{project.slug}/queue/next/").json()["autosave"]["state"] == {
        "x": "autosave again"
    }


def test_admins_set_the_queue_policy_and_define_types_over_the_api(project):
    admin, _ = _client_for("api-pol", "admin", project)
    res = admin.patch(
        f"/api/projects/{project.slug}/policy/", {"double_check_share": 0.5, "overlap_k": 3}, format="json"
    )
    assert res.json() == {"double_check_share": 0.5, "overlap_share": 0.0, "overlap_k": 3}
    assert admin.patch(f"/api/projects/{project.slug}/policy/", {"overlap_k": 1}, format="json").status_code == 400
    res = admin.post(
        f"/api/projects/{project.slug}/qa-types/",
        {"slug": "glare", "name": "Glare", "clip_policy": "window"},
        format="json",
    )
    assert res.status_code == 400 and res.json()["errors"] == {"window_s": "a window clip policy needs window_s > 0"}
    res = admin.post(
        f"/api/projects/{project.slug}/qa-types/",
        {"slug": "glare", "name": "Glare", "clip_policy": "window", "window_s": 3},
        format="json",
    )
    assert res.status_code == 201 and res.json()["window_s"] == 3.0
