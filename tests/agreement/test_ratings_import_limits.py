"""The ratings import, streamed with a row limit (issue 19, "Ratings import: streamed, with a row
limit"): ``POST /api/projects/SLUG/agreement/ratings/`` reads a JSON body or JSON Lines a rating at a
time, refuses a body over RATINGS_MAX ratings at rating RATINGS_MAX + 1 without reading on, names a
bad rating by its position and stores nothing then; ``manage.py agreement`` reads its file the same
way, with the same limit. Bodies are real HTTP bodies through Django's test client and PostgreSQL."""

from __future__ import annotations

import json
from io import StringIO
from urllib.parse import urlencode

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from annotator.agreement.models import Rating, RatingSet
from annotator.agreement.services import ratings as services  # RATINGS_MAX lives there
from annotator.projects.services import ensure_member, token_for


@pytest.fixture
def client(project) -> APIClient:
    user = ensure_member("ratings-researcher", role="researcher", project=project, password="pw-ratings-1")[0]
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return c


def url(project, **query) -> str:
    return f"/api/projects/{project.slug}/agreement/ratings/" + (f"?{urlencode(query)}" if query else "")


def rows(n: int, pad: int = 0) -> list[dict]:
    """``n`` ordinal ratings, 4 raters an item, scores 1-5; item names padded to ``pad`` characters."""
    return [{"item": f"i{k // 4}".ljust(pad, "-"), "rater": f"r{k % 4}", "value": 1 + k % 5} for k in range(n)]


def post_json(client, project, body: str):
    return client.post(url(project), body, content_type="application/json")


def snapshot() -> list:
    return sorted(RatingSet.objects.values_list("name", "level", "description")) + [Rating.objects.count()]


def test_a_body_over_the_row_limit_is_refused_at_the_first_rating_past_it_naming_the_limit(
    client, project, monkeypatch
):
    monkeypatch.setattr(services, "RATINGS_MAX", 5)
    # Six good ratings, then bytes that are not JSON at all: refused for the limit, at rating 6, so the
    # garbage after it is never read (parsing the whole body first would answer a parse error).
    body = '{"name": "big", "level": "ordinal", "ratings": [' + ",".join(json.dumps(r) for r in rows(6)) + ", NaN, @@@"
    res = post_json(client, project, body)
    assert (res.status_code, res.json()) == (
        400,
        {
            "detail": "more than 5 ratings: a rating set holds at most 5; send the rest as another set",
            "errors": {"ratings": "Ensure this field has no more than 5 elements."},
        },
    )
    assert snapshot() == [0]
    # At the limit it is stored.
    res = post_json(client, project, json.dumps({"name": "big", "level": "ordinal", "ratings": rows(5)}))
    assert (res.status_code, res.json()) == (201, {"name": "big", "ratings": 5})


def test_json_lines_over_the_row_limit_are_refused_and_nothing_is_stored(client, project, monkeypatch):
    monkeypatch.setattr(services, "RATINGS_MAX", 3)
    body = "".join(json.dumps(r) + "\n" for r in rows(4)) + "not json\n"
    res = client.post(url(project, name="big", level="ordinal"), body, content_type="application/x-ndjson")
    assert res.status_code == 400
    assert res.json()["detail"] == "more than 3 ratings: a rating set holds at most 3; send the rest as another set"
    assert snapshot() == [0]


def test_a_bad_rating_deep_in_a_large_body_is_named_by_its_position_and_nothing_changes(client, project):
    assert (
        post_json(client, project, json.dumps({"name": "kept", "level": "ordinal", "ratings": rows(8)})).status_code
        == 201
    )
    before = snapshot()
    ratings = rows(60_000)
    ratings[45_122]["value"] = "high"
    res = post_json(client, project, json.dumps({"name": "deep", "level": "ordinal", "ratings": ratings}))
    assert (res.status_code, res.json()) == (
        400,
        {"detail": "rating 45123: ordinal ratings must be numbers, not 'high'", "errors": {}},
    )
    # Replacing an existing set: the bad rating leaves the old set as it was, not deleted.
    res = post_json(
        client, project, json.dumps({"name": "kept", "level": "ordinal", "replace": True, "ratings": ratings})
    )
    assert res.status_code == 400 and res.json()["detail"].startswith("rating 45123: ")
    ratings[45_122] = dict(ratings[45_121])  # a rater twice on an item, at the same depth
    res = post_json(client, project, json.dumps({"name": "deep", "level": "ordinal", "ratings": ratings}))
    assert res.json()["detail"] == "rating 45123: rater 'r1' already rated item 'i11280'"
    assert snapshot() == before == [("kept", "ordinal", ""), 8]


def test_a_json_lines_body_is_stored_with_the_sets_fields_from_the_query_string(client, project):
    lines = [
        '{"item": "a", "rater": "x", "value": 2}',
        "",
        '{"item": "a", "rater": "y", "value": 3.5}',
        '{"item": "b", "rater": "x", "value": null}',
        '{"item": "b", "rater": "y", "value": 1}',
    ]
    res = client.post(
        url(project, name="lines", level="interval", description="from a file"),
        "\n".join(lines),
        content_type="application/x-ndjson",
    )
    assert (res.status_code, res.json()) == (201, {"name": "lines", "ratings": 3})
    rs = RatingSet.objects.get(name="lines")
    assert (rs.level, rs.description, rs.source) == ("interval", "from a file", "external")
    assert list(rs.ratings.values_list("item", "rater", "value")) == [("a", "x", 2), ("a", "y", 3.5), ("b", "y", 1)]
    # application/jsonl too; a line that is not JSON is named by its line; the fields' errors as for JSON.
    res = client.post(
        url(project, name="more", level="ordinal"),
        '{"item": "a", "rater": "x", "value": 1}\n{"item": ',
        content_type="application/jsonl",
    )
    assert res.status_code == 400
    assert res.json()["detail"].startswith("JSON parse error - line 2: Expecting value")
    res = client.post(url(project, level="loud"), lines[0], content_type="application/x-ndjson")
    assert (res.status_code, res.json()["errors"]) == (
        400,
        {"name": "This field is required.", "level": '"loud" is not a valid choice.'},
    )
    assert snapshot() == [("lines", "interval", "from a file"), 3]


def test_the_sets_fields_go_before_its_ratings_and_one_after_them_stores_nothing(client, project):
    body = '{"name": "late", "level": "ordinal", "ratings": ' + json.dumps(rows(3)) + ', "replace": true}'
    res = post_json(client, project, body)
    assert res.status_code == 400 and res.json()["errors"] == {"replace": "must come before ratings"}
    assert "replace came after them, so nothing was stored" in res.json()["detail"]
    assert snapshot() == [0]


def test_a_number_cut_by_the_read_chunk_is_read_whole(client, project, monkeypatch):
    from api import agreement as api_agreement

    monkeypatch.setattr(api_agreement, "READ_CHUNK", 7)  # every value and key crosses a chunk boundary
    body = (
        '{"name": "cut", "level": "interval", "ratings": [{"item": "a", "rater": "x", "value": 12345.5e-2},'
        ' {"item": "a", "rater": "y", "value": -1.25E+3}]}'
    )
    res = post_json(client, project, body)
    assert (res.status_code, res.json()) == (201, {"name": "cut", "ratings": 2})
    assert sorted(Rating.objects.values_list("value", flat=True)) == [-1250.0, 123.455]


def test_the_largest_allowed_import_succeeds(client, project):
    # RATINGS_MAX ratings in a body just under the 32 MiB bound, as bench/ratings_import.py posts.
    ratings = rows(services.RATINGS_MAX, pad=120)
    body = json.dumps({"name": "largest", "level": "ordinal", "ratings": ratings})
    assert 30 * 2**20 < len(body.encode()) <= 32 * 2**20
    res = post_json(client, project, body)
    assert (res.status_code, res.json()) == (201, {"name": "largest", "ratings": services.RATINGS_MAX})
    assert Rating.objects.filter(rating_set__name="largest", item="i49999".ljust(120, "-"), rater="r3").get().value == 5


def test_the_command_reads_its_file_with_the_same_limit_and_stores_nothing_over_it(project, tmp_path, monkeypatch):
    monkeypatch.setattr(services, "RATINGS_MAX", 4)
    path = tmp_path / "ratings.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows(5)) + "not json\n")
    err = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command(
            "agreement",
            "--ratings",
            str(path),
            "--level",
            "ordinal",
            "--resamples",
            "0",
            "--project",
            project.slug,
            "--name",
            "file",
            stdout=StringIO(),
            stderr=err,
        )
    assert exit_.value.code == 2
    assert err.getvalue().strip() == (
        f"{path}: line 5: more than 4 ratings; a file holds at most 4 (split it, and store the parts as separate sets)"
    )
    assert snapshot() == [0]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows(4)))
    call_command(
        "agreement",
        "--ratings",
        str(path),
        "--level",
        "ordinal",
        "--resamples",
        "0",
        "--project",
        project.slug,
        "--name",
        "file",
        stdout=StringIO(),
        stderr=StringIO(),
    )
    assert snapshot() == [("file", "ordinal", ""), 4]
