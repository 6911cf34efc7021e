"""Bad input gets a 4xx, never a 5xx: the probes of issue 7 ("What was seen", item 7) and the
bounds every API input has. Each refusal is checked to have changed nothing."""

import json
from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from annotator.media.models import Video
from annotator.qa.models import Autosave, QAType, QueueItem, Skip
from tests.conftest import qh, row_id, uh

NUL = "\x00"


def _api(name, role, project) -> APIClient:
    out = StringIO()
    call_command("createuser", name, "--role", role, "--project", project.slug, "--token", stdout=out)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {out.getvalue().strip()}")
    return client


@pytest.fixture
def held(make_unit, project):
    """An annotator's API client holding a unit (claimed over the API); returns (client, unit, payload)."""
    unit = make_unit(n_open=1)
    client = _api("bad-ann", "annotator", project)
    body = client.post(f"/api/projects/{project.slug}/queue/next/").json()
    assert body["id"] == uh(unit)
    return client, unit, body


def _holder(body) -> tuple[str, str | None]:
    """The status of the claimed queue item and who holds its lease."""
    item = QueueItem.objects.select_related("leased_by").get(pk=row_id("item", body["queue"]["item_id"]))
    return item.status, item.leased_by.username if item.leased_by else None


# ------------------------------------------------------------------------ NUL characters


def test_a_nul_in_the_api_export_filters_is_a_400(project):
    admin = _api("bad-admin", "admin", project)
    res = admin.get(f"/api/projects/{project.slug}/export/", {"qa_type": "a" + NUL})
    assert res.status_code == 400
    assert res.json()["errors"] == {"qa_type": "must not contain NUL (\\u0000) characters"}


def test_a_too_long_export_filter_is_a_400_with_the_field(project):
    admin = _api("bad-admin2", "admin", project)
    res = admin.get(f"/api/projects/{project.slug}/export/", {"provenance": "p" * 101})
    assert res.status_code == 400
    assert res.json() == {
        "detail": "the export filters have errors",
        "errors": {"provenance": "Ensure this field has no more than 100 characters."},
    }


def test_the_export_page_refuses_a_too_long_filter_with_a_400(project, admin_user):
    client = Client()
    client.force_login(admin_user)
    res = client.get(f"/projects/{project.slug}/export.jsonl", {"source": "s" * 101})
    assert res.status_code == 400
    assert (
        res.content.decode()
        == "the export filters have errors: source: Ensure this field has no more than 100 characters."
    )


def test_a_nul_in_any_page_query_string_or_form_field_is_a_400(project, admin_user):
    client = Client()
    client.force_login(admin_user)
    assert client.get(f"/projects/{project.slug}/export.jsonl", {"illumination": NUL}).status_code == 400
    assert client.get(f"/projects/{project.slug}/qa/", {"qa_type": "x" + NUL}).status_code == 400
    res = client.post(f"/projects/{project.slug}/qa-types/", {"action": "guidelines", "guidelines": "hi" + NUL})
    assert res.status_code == 400
    assert res.content.decode() == "the request contains a NUL character, which cannot be stored (guidelines)"
    project.refresh_from_db()
    assert project.guidelines == ""


def test_a_nul_in_an_api_query_string_is_a_json_400(project):
    res = _api("bad-q", "annotator", project).get(f"/api/projects/{project.slug}/videos/", {"x": NUL})
    assert res.status_code == 400 and res["Content-Type"] == "application/json"
    assert res.json() == {
        "detail": "the request contains a NUL character, which cannot be stored",
        "errors": {"x": "must not contain NUL (\\u0000) characters"},
    }


@pytest.mark.parametrize(
    "state, path",
    [({"note": "a" + NUL}, "note"), ({"decisions": {"12": {"answer": ["ok", "b" + NUL]}}}, "decisions.12.answer[1]")],
)
def test_a_nul_anywhere_in_the_autosave_state_is_a_400_and_nothing_is_saved(held, state, path):
    client, unit, _ = held
    res = client.put(f"/api/units/{uh(unit.pk)}/autosave/", {"state": state, "client_saved_at_ms": 5})
    assert res.status_code == 400
    assert res.json()["errors"] == {"state": f"{path} must not contain NUL (\\u0000) characters"}
    assert Autosave.objects.count() == 0


def test_a_nul_in_an_autosave_key_is_a_400(held):
    client, unit, _ = held
    res = client.put(f"/api/units/{uh(unit.pk)}/autosave/", {"state": {"a": {"k" + NUL: 1}}, "client_saved_at_ms": 5})
    assert res.status_code == 400
    assert res.json()["errors"] == {"state": "a key of a must not contain NUL (\\u0000) characters"}
    assert Autosave.objects.count() == 0


def test_a_lone_surrogate_in_the_autosave_state_is_a_400(held):
    client, unit, _ = held
    body = '{"state": {"t": "\\ud800"}, "client_saved_at_ms": 5}'  # valid JSON, not encodable as UTF-8
    res = client.put(f"/api/units/{uh(unit.pk)}/autosave/", body, content_type="application/json")
    assert res.status_code == 400
    assert res.json()["errors"] == {"state": "t must be valid Unicode (no lone surrogate)"}


@pytest.mark.parametrize(
    "number, message",
    [
        ("1e400", "Value must be valid JSON."),  # infinity: DRF's JSONField refuses it
        ("1" + "0" * 400, "items[0].ms is larger than 9007199254740991 in magnitude"),
    ],
)
def test_an_autosave_number_the_database_or_the_history_page_cannot_hold_is_a_400(held, number, message):
    client, unit, _ = held
    body = '{"state": {"items": [{"kind": "draft", "ms": %s}]}, "client_saved_at_ms": 5}' % number
    res = client.put(f"/api/units/{uh(unit.pk)}/autosave/", body, content_type="application/json")
    assert (res.status_code, res.json()["errors"]) == (400, {"state": message})
    assert Autosave.objects.count() == 0


def test_a_nul_in_the_skip_reason_is_a_400_and_the_unit_stays_held(held):
    client, unit, body = held
    res = client.post(f"/api/units/{uh(unit.pk)}/skip/", {"reason": "blurry" + NUL})
    assert res.status_code == 400
    assert res.json()["errors"] == {"reason": "Null characters are not allowed."}
    assert Skip.objects.count() == 0
    assert _holder(body) == ("open", "bad-ann")


def test_a_skip_reason_must_be_a_string_not_an_object(held):
    client, unit, _ = held
    res = client.post(f"/api/units/{uh(unit.pk)}/skip/", {"reason": {"why": "dark"}})
    assert res.status_code == 400 and res.json()["errors"] == {"reason": "Not a valid string."}
    assert Skip.objects.count() == 0


# ------------------------------------------------------------------------ numbers and lists out of bounds


def test_a_client_time_beyond_a_bigint_is_a_400_and_nothing_is_saved(held):
    client, unit, _ = held
    res = client.put(
        f"/api/units/{uh(unit.pk)}/autosave/", {"state": {}, "client_saved_at_ms": 99999999999999999999999}
    )
    assert res.status_code == 400
    assert res.json()["errors"] == {
        "client_saved_at_ms": "Ensure this value is less than or equal to 9007199254740991."
    }
    assert Autosave.objects.count() == 0


def test_time_spent_over_a_day_is_a_400_and_the_unit_stays_open(held):
    client, unit, body = held
    decisions = [
        {"qa_id": q["id"], "action": "keep", "time_spent_ms": 3000000000 if i == 0 else 10}
        for i, q in enumerate(body["qa_pairs"])
    ]
    res = client.post(
        f"/api/units/{uh(unit.pk)}/submit/",
        {"idempotency_key": "t", "decisions": decisions, "time_spent_ms": 86_400_001},
    )
    assert res.status_code == 400
    assert res.json()["errors"] == {
        "decisions[0].time_spent_ms": "Ensure this value is less than or equal to 86400000.",
        "time_spent_ms": "Ensure this value is less than or equal to 86400000.",
    }
    assert _holder(body) == ("open", "bad-ann")


def test_lists_over_their_length_and_ids_over_a_bigint_are_400s(held):
    client, unit, body = held
    too_many = [{"qa_id": qh(i + 1), "action": "keep"} for i in range(501)]
    res = client.post(f"/api/units/{uh(unit.pk)}/submit/", {"idempotency_key": "l", "decisions": too_many})
    assert res.status_code == 400 and res.json()["errors"] == {
        "decisions": "Ensure this field has no more than 500 elements."
    }
    options = [f"o{i}" for i in range(27)]
    res = client.post(
        f"/api/units/{uh(unit.pk)}/submit/",
        {
            "idempotency_key": "l",
            "decisions": [{"qa_id": 2**63, "action": "modify", "options": options, "answer_index": 1}],
        },
    )
    assert res.status_code == 400
    # A QA pair is named by its handle (issue 20): a raw id, of any size, is no QA pair.
    assert res.json()["errors"] == {
        "decisions[0].qa_id": "not the handle of a QA pair: use the one the unit payload gave",
        "decisions[0].options": "Ensure this field has no more than 26 elements.",
    }
    assert _holder(body) == ("open", "bad-ann")


def test_an_edit_naming_a_version_beyond_an_integer_is_a_400(make_unit, project):
    unit = make_unit(n_open=1)
    pair = unit.qa_pairs.first()
    res = _api("bad-ed", "admin", project).patch(f"/api/qa/{pair.pk}/", {"version": 2**31, "answer": "x"})
    assert res.status_code == 400
    assert res.json()["errors"] == {"version": "Ensure this value is less than or equal to 2147483647."}
    pair.refresh_from_db()
    assert pair.version == 1


def test_a_queue_policy_or_window_out_of_bounds_is_a_400(project):
    admin = _api("bad-pol", "admin", project)
    res = admin.patch(f"/api/projects/{project.slug}/policy/", {"overlap_k": 40000, "overlap_share": "nan"})
    assert res.status_code == 400
    assert res.json()["errors"] == {
        "overlap_k": "Ensure this value is less than or equal to 20.",
        "overlap_share": "A valid number is required.",
    }
    res = admin.post(
        f"/api/projects/{project.slug}/qa-types/",
        {"slug": "glare", "name": "Glare", "clip_policy": "window", "window_s": 1e300},
    )
    assert res.status_code == 400 and res.json()["errors"] == {
        "window_s": "Ensure this value is less than or equal to 3600.0."
    }
    assert not QAType.objects.filter(project=project, slug="glare").exists()


def test_a_second_qa_type_with_the_same_slug_is_a_400(project):
    admin = _api("bad-dup", "admin", project)
    assert admin.post(f"/api/projects/{project.slug}/qa-types/", {"slug": "glare", "name": "Glare"}).status_code == 201
    res = admin.post(f"/api/projects/{project.slug}/qa-types/", {"slug": "glare", "name": "Other"})
    assert res.status_code == 400
    assert res.json()["errors"] == {"slug": "this project already has a QA type with this slug"}
    assert QAType.objects.get(project=project, slug="glare").name == "Glare"


def test_json_nested_too_deep_or_not_json_is_a_400(held):
    client, unit, _ = held
    deep = "[" * 100_000 + "]" * 100_000
    res = client.put(f"/api/units/{uh(unit.pk)}/autosave/", deep, content_type="application/json")
    assert res.status_code == 400 and res.json()["detail"] == "JSON parse error - nested too deep"
    res = client.post(f"/api/units/{uh(unit.pk)}/skip/", "reason=x", content_type="application/x-www-form-urlencoded")
    assert res.status_code == 415 and res.json()["errors"] == {}


def test_an_id_of_5000_digits_or_an_unknown_api_path_is_a_json_404(project):
    client = _api("bad-id", "annotator", project)
    for path in ("/api/qa/" + "9" * 5000 + "/", "/api/units/99999999999999999999/heartbeat/", "/api/nowhere/"):
        res = client.get(path)
        assert res.status_code == 404 and res.json() == {"detail": "not found", "errors": {}}


# ------------------------------------------------------------------------ agreement (issue 9)


def _ratings(project, body, name="bad-rater"):
    return _api(name, "researcher", project).post(
        f"/api/projects/{project.slug}/agreement/ratings/", body, content_type="application/json"
    )


@pytest.mark.parametrize(
    "value, error",
    [
        ("NaN", {"detail": "JSON parse error - NaN is not valid JSON", "errors": {}}),
        (
            "1e400",
            {
                "detail": "the request has errors; nothing was saved",
                "errors": {"ratings[1].value": "Value must be valid JSON."},
            },
        ),
        (
            "1" + "0" * 400,
            {
                "detail": "the request has errors; nothing was saved",
                "errors": {"ratings[1].value": "value is larger than 9007199254740991 in magnitude"},
            },
        ),
        ('"high"', {"detail": "rating 2: ordinal ratings must be numbers, not 'high'", "errors": {}}),
        ("[1, 2]", {"detail": "rating 2: a value is a number, a text or null", "errors": {}}),
        (
            '"a\\u0000"',
            {
                "detail": "the request has errors; nothing was saved",
                "errors": {"ratings[1].value": "value must not contain NUL (\\u0000) characters"},
            },
        ),
    ],
)
def test_a_rating_value_that_is_no_number_is_a_400_and_nothing_is_stored(project, value, error):
    from annotator.agreement.models import RatingSet

    body = (
        '{"name": "scores", "level": "ordinal", "ratings": [{"item": "i", "rater": "x", "value": 1}, '
        '{"item": "i", "rater": "y", "value": %s}]}' % value
    )
    res = _ratings(project, body)
    assert (res.status_code, res.json()) == (400, error)
    assert not RatingSet.objects.exists()


def test_too_many_ratings_a_bad_level_or_name_are_400s(project):
    from annotator.agreement.models import RatingSet

    rating = '{"item": "i", "rater": "x", "value": 1}'
    res = _ratings(project, '{"name": "big", "level": "ordinal", "ratings": [%s]}' % ",".join([rating] * 200_001))
    assert res.status_code == 400
    assert res.json()["errors"] == {"ratings": "Ensure this field has no more than 200000 elements."}
    res = _ratings(
        project, json.dumps({"name": "no spaces", "level": "loud", "ratings": [], "replace": "maybe"}), "bad-rater2"
    )
    assert res.status_code == 400
    assert res.json()["errors"] == {
        "name": 'Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.',
        "level": '"loud" is not a valid choice.',
        "replace": "Must be a valid boolean.",
        "ratings": "This list may not be empty.",
    }
    res = _ratings(
        project,
        json.dumps({"name": "s", "level": "nominal", "ratings": [{"item": "i" * 201, "rater": 5}]}),
        "bad-rater3",
    )
    assert res.status_code == 400
    assert res.json()["errors"] == {"ratings[0].item": "Ensure this field has no more than 200 characters."}
    assert not RatingSet.objects.exists()


def test_a_ratings_body_over_32_mb_is_a_400(project):
    from annotator.agreement.models import RatingSet

    res = _ratings(
        project, '{"name": "s", "level": "nominal", "description": "%s", "ratings": []}' % ("x" * (32 * 2**20))
    )
    assert res.status_code == 400
    assert res.json() == {"detail": "the body is larger than 32 MB; send the ratings in several sets", "errors": {}}
    assert not RatingSet.objects.exists()


def test_agreement_numbers_and_texts_out_of_bounds_are_400s_and_nothing_changes(project):
    from annotator.agreement.models import ConsensusItem, Scope

    admin = _api("bad-agree", "admin", project)
    base = f"/api/projects/{project.slug}/agreement/"
    scope = Scope.objects.create(project=project, key="verification")
    item = ConsensusItem.objects.create(
        scope=scope,
        item="1",
        level="ordinal",
        disagreement=1.0,
        answers=[{"rater": "a", "value": 1}, {"rater": "b", "value": 5}],
    )
    for threshold, message in (
        ("nan", "A valid number is required."),
        ("lots", "A valid number is required."),
        (1e300, "Ensure this value is less than or equal to 1."),
    ):
        res = admin.post(base + "consensus/", {"scope": "verification", "threshold": threshold})
        assert (res.status_code, res.json()["errors"]) == (400, {"threshold": message})
    res = admin.post(base + "consensus/", {"scope": "s" * 201, "items": ["x" * 201]})
    assert res.json()["errors"] == {
        "scope": "Ensure this field has no more than 200 characters.",
        "items[0]": "Ensure this field has no more than 200 characters.",
    }
    res = admin.post(base + "compute/", {"scope": ["verification"]})
    assert (res.status_code, res.json()["errors"]) == (400, {"scope": "Not a valid string."})
    assert admin.get(base, {"scope": "s" * 201}).json()["errors"] == {
        "scope": "Ensure this field has no more than 200 characters."
    }
    record = f"/api/agreement/consensus/{item.pk}/"
    body = '{"consensus": 1e400, "revised": {"a": "3"}, "note": "%s"}' % ("n" * 4001)
    res = admin.post(record, body, content_type="application/json")
    assert res.status_code == 400
    assert res.json()["errors"] == {
        "consensus": "Value must be valid JSON.",
        "note": "Ensure this field has no more than 4000 characters.",
    }
    res = admin.post(record, {"consensus": 3, "revised": {"a": "three"}})
    assert (res.status_code, res.json()["detail"]) == (
        400,
        "the answer of a: ordinal ratings must be numbers, not 'three'",
    )
    res = admin.post(record, {"consensus": 10**30})
    assert res.json()["errors"] == {"consensus": "value is larger than 9007199254740991 in magnitude"}
    item.refresh_from_db()
    assert (item.status, item.consensus) == ("open", None) and not item.ratings.exists()
    assert not ConsensusItem.objects.exclude(pk=item.pk).exists()


# ------------------------------------------------------------------------ Range header


def test_a_5000_digit_range_is_ignored_and_the_whole_file_is_sent(project, admin_user):
    body = bytes(range(256)) * 4
    name = default_storage.save("renditions/test/range.mp4", ContentFile(body))
    Video.objects.create(project=project, sha256="d" * 64, filename="range.mp4", status="ready", rendition=name)
    client = Client()
    client.force_login(admin_user)  # annotators see only renditions of units they hold (media access rule)
    try:
        for header in ("bytes=" + "9" * 5000 + "-", "bytes=0-" + "9" * 5000, "bytes=-" + "9" * 5000):
            res = client.get("/files/" + name, HTTP_RANGE=header)
            assert res.status_code == 200 and b"".join(res.streaming_content) == body
        res = client.get("/files/" + name, HTTP_RANGE="bytes=999999999999999999-")
        assert res.status_code == 416 and res["Content-Range"] == "bytes */1024"
    finally:
        default_storage.delete(name)


# ------------------------------------------------------------------------ the schema documents the refusals


@pytest.mark.django_db
def test_every_operation_documents_400_401_403_and_404_with_the_error_body():
    schema = json.loads(APIClient().get("/api/schema/?format=json").content)
    error = {"$ref": "#/components/schemas/Error"}
    operations = [(path, method, op) for path, ops in schema["paths"].items() for method, op in ops.items()]
    # 51 + the benchmark report (issue 18) + study links and participants (issue 19) + the team (issue 20:
    # annotators and pay 2, review 5, gold and qualification 6) + the export page's jobs (issue 21: 3).
    assert len(operations) == 70
    for path, method, op in operations:
        for code in ("400", "401", "403", "404"):
            assert op["responses"][code]["content"]["application/json"]["schema"] == error, (path, method, code)
    conflicts = {(path, method) for path, method, op in operations if "409" in op["responses"]}
    assert conflicts == {
        ("/api/units/{id}/submit/", "post"),
        ("/api/units/{id}/heartbeat/", "post"),
        ("/api/units/{id}/skip/", "post"),
        ("/api/units/{id}/autosave/", "put"),
        ("/api/qa/{id}/", "patch"),
        ("/api/trials/{id}/answer/", "post"),
        ("/api/trials/{id}/shown/", "post"),
        ("/api/projects/{slug}/agreement/ratings/", "post"),
        ("/api/agreement/consensus/{id}/", "post"),
        ("/api/projects/{slug}/runs/", "post"),
        ("/api/runs/{id}/cancel/", "post"),
        ("/api/runs/{id}/resume/", "post"),
        ("/api/evaluations/{id}/cancel/", "post"),
        ("/api/evaluations/{id}/rejudge/", "post"),
        ("/api/rejudge/{id}/", "post"),
        # Issue 19: a full or unbuilt study, a link participant not yet consented or screened.
        ("/api/studies/{id}/enroll/", "post"),
        ("/api/studies/{id}/links/", "post"),
        # Issue 20: a unit not awaiting review (or reopened), a pause lifted already, tries
        # granted to someone who has qualified.
        ("/api/units/{id}/review/", "post"),
        ("/api/units/{id}/reopen/", "post"),
        ("/api/gold/pauses/{id}/lift/", "post"),
        ("/api/projects/{slug}/qualification/tries/", "post"),
        # Issue 21: too many exports of the project waiting or running.
        ("/api/projects/{slug}/exports/", "post"),
    }
    assert schema["components"]["schemas"]["Error"]["required"] == ["detail"]
    assert set(schema["components"]["schemas"]["Error"]["properties"]) == {"detail", "errors", "conflicts"}
