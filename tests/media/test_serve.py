"""Serving renditions to project members, with byte ranges so the player can seek."""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client

from annotator.media.models import Video
from annotator.projects.services import ensure_member, ensure_project

BODY = bytes(range(256)) * 40  # 10240 bytes


@pytest.fixture
def stored(project):
    name = default_storage.save("renditions/test/serve.mp4", ContentFile(BODY))
    Video.objects.create(project=project, sha256="c" * 64, filename="serve.mp4", status="ready", rendition=name)
    yield "/files/" + name
    default_storage.delete(name)


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def test_a_member_gets_the_whole_file_or_a_range(stored, annotator):
    client = _client(annotator)
    whole = client.get(stored)
    assert whole.status_code == 200 and b"".join(whole.streaming_content) == BODY
    part = client.get(stored, HTTP_RANGE="bytes=100-199")
    assert part.status_code == 206
    assert part["Content-Range"] == "bytes 100-199/10240"
    assert b"".join(part.streaming_content) == BODY[100:200]
    tail = client.get(stored, HTTP_RANGE="bytes=-10")
    assert b"".join(tail.streaming_content) == BODY[-10:]
    assert client.get(stored, HTTP_RANGE="bytes=20000-").status_code == 416


def test_others_get_nothing(stored, project):
    outsider = ensure_member("outsider", role="admin", project=ensure_project("elsewhere"))[0]
    assert _client(outsider).get(stored).status_code == 404
    anonymous = Client().get(stored)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
