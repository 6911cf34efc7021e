"""Building a life log by API (X-LeBench seed 002 Sec. 3): admins place videos of the project at
virtual times; the same request again changes nothing; bad parts are 400s naming the part, in plain
words, writing nothing."""

import hashlib

import pytest
from rest_framework.test import APIClient

from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.projects.services import ensure_member, token_for

pytestmark = pytest.mark.django_db


def _client(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


@pytest.fixture
def videos(project):
    return [
        Video.objects.create(
            project=project,
            sha256=hashlib.sha256(f"api{i}".encode()).hexdigest(),
            filename=f"p{i}.mp4",
            status="ready",
            duration_s=600.0,
            fps=25,
        )
        for i in range(3)
    ]


def test_an_admin_builds_a_life_log_and_building_it_again_changes_nothing(project, videos):
    admin = _client(ensure_member("l-admin", role="admin", project=project)[0])
    body = {
        "name": "day 1",
        "start": "2024-05-01T08:00:00Z",
        "parts": [
            {"video": videos[0].pk, "offset_s": 0, "summary": "C cooks."},
            {"video": videos[1].pk, "offset_s": 1800},
            {"video": videos[2].pk, "offset_s": 2400},
        ],
    }
    url = f"/api/projects/{project.slug}/lifelogs/"
    res = admin.post(url, body, format="json")
    assert res.status_code == 201, res.content
    log = res.json()
    assert (log["name"], log["outcome"], log["span_s"]) == ("day 1", "created", 3000.0)
    assert [(p["filename"], p["offset_s"], p["clock"], p["summary"]) for p in log["parts"]] == [
        ("p0.mp4", 0.0, "08:00:00", "C cooks."),
        ("p1.mp4", 1800.0, "08:30:00", ""),
        ("p2.mp4", 2400.0, "08:40:00", ""),
    ]
    assert log["gaps"] == [{"start_s": 600.0, "end_s": 1800.0, "duration_s": 1200.0}]
    again = admin.post(url, body, format="json")
    assert (again.status_code, again.json()["outcome"]) == (200, "unchanged")
    assert VideoGroup.objects.get().kind == "life_log" and VideoGroupMember.objects.count() == 3


@pytest.mark.parametrize(
    "parts, field, words",
    [
        (
            lambda v: [{"video": v[0].pk, "offset_s": 0}, {"video": v[1].pk, "offset_s": 300}],
            "parts",
            "parts[1]: starts at 08:05:00, 300.000 s before the part of parts[0] ends (08:10:00); parts may not overlap",
        ),
        (
            lambda v: [{"video": v[0].pk, "offset_s": 900}, {"video": v[1].pk, "offset_s": 0}],
            "parts",
            "parts[1]: starts at 08:00:00, not after the row before it (parts[0], 08:15:00)",
        ),
        (
            lambda v: [{"video": v[0].pk, "offset_s": 0}, {"video": 10**9, "offset_s": 900}],
            "parts[1].video",
            "not a video of this project",
        ),
        (lambda v: [{"video": v[0].pk, "offset_s": 10**7}], "parts", "less than or equal to 604800"),
        (lambda v: [{"video": v[0].pk, "offset_s": "NaN"}], "parts", "valid number"),
        (lambda v: [], "parts", "at least 1"),
    ],
)
def test_bad_parts_are_400s_that_write_nothing(project, videos, parts, field, words):
    admin = _client(ensure_member("l-admin", role="admin", project=project)[0])
    res = admin.post(
        f"/api/projects/{project.slug}/lifelogs/",
        {"name": "bad", "start": "2024-05-01T08:00:00", "parts": parts(videos)},
        format="json",
    )
    assert res.status_code == 400, res.content
    assert words in str(res.json()["errors"]) + res.json()["detail"], res.json()
    assert not VideoGroup.objects.exists()


def test_annotators_cannot_build_life_logs(project, videos):
    ann = _client(ensure_member("l-ann", role="annotator", project=project)[0])
    res = ann.post(
        f"/api/projects/{project.slug}/lifelogs/",
        {"name": "x", "start": "2024-05-01T08:00:00", "parts": [{"video": videos[0].pk, "offset_s": 0}]},
        format="json",
    )
    assert res.status_code == 403


def test_a_start_with_an_offset_keeps_its_local_wall_clock(project, videos):
    # DRF turned 07:30+14:00 into 17:30 UTC the day before, and every clock label of the log with it.
    admin = _client(ensure_member("l-admin", role="admin", project=project)[0])
    res = admin.post(
        f"/api/projects/{project.slug}/lifelogs/",
        {"name": "kiribati", "start": "2024-01-01T07:30:00+14:00", "parts": [{"video": videos[0].pk, "offset_s": 600}]},
        format="json",
    )
    assert res.status_code == 201, res.content
    assert res.json()["parts"][0]["clock"] == "07:40:00"
    assert VideoGroup.objects.get(name="kiribati").params["start"] == "2024-01-01T07:30:00+14:00"
