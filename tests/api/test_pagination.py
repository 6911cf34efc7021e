"""Lists page with bounded ``limit`` and ``offset`` (issue 19: ``?limit=9223372036854775808`` on the
videos and groups lists answered 500, the one 5xx of 56,796 schemathesis cases)."""

import pytest
from rest_framework.test import APIClient

from annotator.media.models import Video
from annotator.projects.services import token_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(project, admin_user):
    for i in range(3):
        Video.objects.create(project=project, sha256=f"{i:064x}", filename=f"v{i}.mp4", status="ready")
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {token_for(admin_user)}")
    return c


@pytest.mark.parametrize("path", ["/api/projects/proj/videos/", "/api/projects/proj/groups/"])
@pytest.mark.parametrize(
    "query, name",
    [
        ("limit=9223372036854775808", "limit"),
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=-1", "limit"),
        ("limit=x", "limit"),
        ("offset=9223372036854775808", "offset"),
        ("offset=-5", "offset"),
        ("offset=1000000001", "offset"),
    ],
)
def test_a_page_size_or_offset_out_of_bounds_is_a_400_naming_it(client, path, query, name):
    res = client.get(f"{path}?{query}")
    assert res.status_code == 400, res.content
    assert name in res.json()["errors"] or name in str(res.json())


def test_pages_within_bounds_are_served(client):
    res = client.get("/api/projects/proj/videos/?limit=2&offset=1")
    assert res.status_code == 200
    body = res.json()
    assert body["count"] == 3 and len(body["results"]) == 2
    assert client.get("/api/projects/proj/videos/?limit=1000").json()["count"] == 3
