"""Making a study link (issue 19): ``study_link NAME --json`` and ``POST /api/studies/{id}/links/``
print the URL and the token once; only the token's hash is stored; bad values are refused with a
400 in plain words and nothing is written; only admins and researchers make links."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotator.studies.links import token_hash
from annotator.studies.models import Study, StudyLink
from tests.studies.conftest import api_as, people

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(project):
    return Study.objects.create(project=project, name="panel", kind="mcq", completion_url="https://panel.example/done")


def test_the_command_prints_the_url_and_token_and_stores_only_the_hash(study, settings):
    settings.PUBLIC_BASE_URL = "https://bench.example.org"
    out = StringIO()
    expires = (timezone.now() + timedelta(days=30)).replace(microsecond=0).isoformat()
    call_command(
        "study_link",
        "panel",
        "--max-participants",
        "40",
        "--expires",
        expires,
        "--completion-url",
        "https://app.prolific.com/submissions/complete",
        "--abandon-after",
        "30",
        "--json",
        stdout=out,
    )
    printed = json.loads(out.getvalue())
    assert set(printed) == {"url", "token"}
    assert printed["url"] == f"https://bench.example.org/s/{printed['token']}/"
    assert len(printed["token"]) == 32
    link = StudyLink.objects.get()
    assert link.token_hash == token_hash(printed["token"]) and printed["token"] not in link.token_hash
    assert (link.max_participants, link.expires_at.isoformat(), link.completion_url) == (
        40,
        expires,
        "https://app.prolific.com/submissions/complete",
    )
    assert Study.objects.get(pk=study.pk).abandon_after_min == 30


@pytest.mark.parametrize(
    "args, message",
    [
        (["--max-participants", "0"], "max_participants must be a whole number from 1 to 100000"),
        (["--expires", "2001-01-01T00:00:00"], "expires must be in the future"),
        (["--expires", "2999-01-01T00:00:00"], "expires must be within 366 days"),
        (["--expires", "soon"], "--expires 'soon' is not an ISO 8601 time"),
        (
            ["--completion-url", "javascript:alert(1)"],
            "completion_url must be an http(s) URL of at most 500 characters",
        ),
    ],
)
def test_the_command_refuses_bad_values_and_makes_no_link(study, args, message):
    with pytest.raises(CommandError) as err:
        call_command("study_link", "panel", *args, "--json", stdout=StringIO())
    assert str(err.value) == message
    assert StudyLink.objects.count() == 0


def test_a_researcher_makes_a_link_through_the_api(study, project):
    (researcher,) = people(project, 1, role="researcher", prefix="r")
    res = api_as(researcher).post(f"/api/studies/{study.pk}/links/", {"max_participants": 5}, format="json")
    assert res.status_code == 201, res.content
    body = res.json()
    assert body["url"] == f"http://testserver/s/{body['token']}/"
    assert (body["max_participants"], body["expires_at"], body["completion_url"]) == (5, None, "")
    link = StudyLink.objects.get()
    assert (link.token_hash, link.created_by_id) == (token_hash(body["token"]), researcher.pk)


@pytest.mark.parametrize(
    "body, field",
    [
        ({"max_participants": 100_001}, "max_participants"),
        ({"max_participants": -1}, "max_participants"),
        ({"expires": "2001-01-01T00:00:00Z"}, "expires"),
        ({"expires": "not a time"}, "expires"),
        ({"completion_url": "ftp://x.example/" + "a" * 10}, "completion_url"),
        ({"completion_url": "https://x.example/" + "a" * 600}, "completion_url"),
        ({"abandon_after_min": 0}, "abandon_after_min"),
    ],
)
def test_the_api_refuses_values_out_of_bounds_with_a_400_and_writes_nothing(study, project, body, field):
    (researcher,) = people(project, 1, role="researcher", prefix="r")
    res = api_as(researcher).post(f"/api/studies/{study.pk}/links/", body, format="json")
    assert res.status_code == 400, res.content
    assert field in res.json()["errors"], res.json()
    assert StudyLink.objects.count() == 0
    assert Study.objects.get(pk=study.pk).abandon_after_min == 60


def test_annotators_and_reviewers_make_no_link_and_other_projects_do_not_see_the_study(study, project, annotator):
    (reviewer,) = people(project, 1, role="reviewer", prefix="v")
    for user in (annotator, reviewer):
        assert api_as(user).post(f"/api/studies/{study.pk}/links/", {}, format="json").status_code == 403
    from annotator.projects.services import ensure_member, ensure_project

    elsewhere = ensure_project("other", "Other")
    outsider = ensure_member("out", role="admin", project=elsewhere, password="pw-out-123")[0]
    assert api_as(outsider).post(f"/api/studies/{study.pk}/links/", {}, format="json").status_code == 404
    assert StudyLink.objects.count() == 0
