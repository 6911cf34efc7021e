"""Videos in by API on local storage: upload (multipart), dedup, failures, bounds, the list's media
URLs, and /files/ fetched with the API token. S3 runs of the same are in tests/media/test_s3.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from annotator.core.models import Job
from annotator.media import services
from annotator.media.models import Video
from annotator.projects.services import token_for

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


def _upload(client, project, path: Path, **fields):
    with path.open("rb") as fh:
        return client.post(f"/api/projects/{project.slug}/videos/", {"file": fh, **fields}, format="multipart")


def _work_files() -> list[Path]:
    root = Path(settings.MEDIA_WORK_DIR)
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_an_admin_uploads_a_video_and_its_transcode_is_queued(project, admin_user, short_video):
    res = _upload(_client(admin_user), project, short_video, illumination="night", domain="kitchen")
    assert res.status_code == 201, res.content
    body = res.json()
    video = Video.objects.get()
    assert body["id"] == video.pk and body["status"] == "processing" and body["filename"] == "short.mp4"
    assert (video.illumination, video.domain, video.source) == ("night", "kitchen", "real")
    assert video.original.name == f"originals/{video.sha256[:2]}/{video.sha256}.mp4"
    assert Path(settings.MEDIA_ROOT, video.original.name).read_bytes() == short_video.read_bytes()
    assert list(Job.objects.filter(task="media.transcode").values_list("args", flat=True)) == [[video.pk]]
    assert _work_files() == []  # the temporary upload is gone


def test_the_same_content_again_answers_200_with_the_existing_video(project, admin_user, short_video, tmp_path):
    first = _upload(_client(admin_user), project, short_video).json()
    renamed = tmp_path / "again.mp4"
    renamed.write_bytes(short_video.read_bytes())
    res = _upload(_client(admin_user), project, renamed, scenario="street")
    assert res.status_code == 200
    assert res.json()["id"] == first["id"] and res.json()["filename"] == "short.mp4"
    assert Video.objects.count() == 1 and Video.objects.get().scenario == "street"


def test_a_re_upload_sets_the_metadata_given_and_keeps_the_annotations(project, admin_user, short_video):
    video_id = _upload(_client(admin_user), project, short_video, domain="kitchen").json()["id"]
    Video.objects.filter(pk=video_id).update(annotations={"description": "a cook"}, extra={"camera": "gopro"})
    res = _upload(_client(admin_user), project, short_video, illumination="night")
    assert res.status_code == 200
    video = Video.objects.get()
    assert (video.domain, video.illumination) == ("kitchen", "night")
    assert (video.annotations, video.extra) == ({"description": "a cook"}, {"camera": "gopro"})


def test_an_upload_is_written_to_the_work_folder_as_it_arrives(project, admin_user, short_video, monkeypatch):
    seen = []
    real = services.ingest_file

    def spy(project, path, entry=None, **kwargs):
        seen.append((Path(path), Path(path).stat().st_size, kwargs["filename"]))
        return real(project, path, entry, **kwargs)

    monkeypatch.setattr(services, "ingest_file", spy)
    assert _upload(_client(admin_user), project, short_video).status_code == 201
    ((path, size, name),) = seen
    assert path.parent == Path(settings.MEDIA_WORK_DIR) and path.name.endswith(".upload.mp4")
    assert size == short_video.stat().st_size and name == "short.mp4"


def test_a_corrupt_file_is_a_failed_video_with_its_reason(project, admin_user, corrupt_video):
    res = _upload(_client(admin_user), project, corrupt_video)
    assert res.status_code == 201
    body = res.json()
    assert body["status"] == "failed" and body["filename"] == "truncated.mp4"
    assert body["error"] and ".upload" not in body["error"] and str(settings.MEDIA_WORK_DIR) not in body["error"]
    assert Job.objects.count() == 0
    again = _upload(_client(admin_user), project, corrupt_video)
    assert again.status_code == 200 and again.json()["status"] == "failed" and Video.objects.count() == 1


def test_an_upload_over_the_limit_is_413_and_nothing_is_kept(project, admin_user, short_video, settings):
    settings.MEDIA_MAX_UPLOAD_BYTES = 2000
    res = _upload(_client(admin_user), project, short_video)
    assert res.status_code == 413 and "limit" in res.json()["detail"]
    assert Video.objects.count() == 0 and _work_files() == []


def test_a_body_announced_over_the_limit_is_refused_before_it_is_read(project, admin_user, settings):
    settings.MEDIA_MAX_UPLOAD_BYTES = 10
    res = _client(admin_user).generic(
        "POST",
        f"/api/projects/{project.slug}/videos/",
        b"x" * 10,
        content_type="multipart/form-data; boundary=b",
        CONTENT_LENGTH=str(2 * 1024 * 1024),
    )
    assert res.status_code == 413 and Video.objects.count() == 0


@pytest.mark.parametrize(
    "fields, path",
    [
        ({"illumination": "dusk"}, "illumination"),
        ({"view": "x" * 11}, "view"),
        ({"domain": "d" * 101}, "domain"),
        ({"scenario": "bad\x00"}, "scenario"),
    ],
)
def test_bad_metadata_is_a_400_naming_the_field_and_nothing_is_saved(project, admin_user, short_video, fields, path):
    res = _upload(_client(admin_user), project, short_video, **fields)
    assert res.status_code == 400 and path in res.json()["errors"], res.content
    assert Video.objects.count() == 0


def test_an_upload_without_a_file_is_a_400(project, admin_user):
    res = _client(admin_user).post(f"/api/projects/{project.slug}/videos/", {"source": "real"}, format="multipart")
    assert res.status_code == 400 and "file" in res.json()["errors"]


def test_a_json_body_is_415(project, admin_user):
    res = _client(admin_user).post(f"/api/projects/{project.slug}/videos/", {"key": "x"}, format="json")
    assert res.status_code == 415


def test_a_session_upload_needs_the_csrf_token(project, admin_user, short_video):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    client.get(f"/projects/{project.slug}/videos/")  # sets the CSRF cookie
    url = f"/api/projects/{project.slug}/videos/"
    with short_video.open("rb") as fh:
        assert client.post(url, {"file": fh}).status_code == 403
    assert Video.objects.count() == 0
    with short_video.open("rb") as fh:
        res = client.post(url, {"file": fh}, HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    assert res.status_code == 201 and Video.objects.get().filename == "short.mp4"


def test_annotators_may_not_upload(project, annotator, short_video):
    assert _upload(_client(annotator), project, short_video).status_code == 403
    assert Video.objects.count() == 0


def test_registering_by_key_needs_s3_storage(project, admin_user):
    res = _client(admin_user).post(
        f"/api/projects/{project.slug}/videos/register/", {"key": "incoming/a.mp4"}, format="json"
    )
    assert res.status_code == 400 and "STORAGE_BACKEND=s3" in res.json()["detail"]
    assert Video.objects.count() == 0


@pytest.mark.parametrize(
    "key",
    [
        "../a.mp4",
        "a/../../b.mp4",
        "/abs.mp4",
        "a//b.mp4",
        "originals/ab/x.mp4",
        "renditions/1/x.mp4",
        "hls/3/master.m3u8",
        "a\nb.mp4",
        "k" * 1025,
        "",
    ],
)
def test_a_bad_key_is_a_400_naming_it(project, admin_user, key):
    res = _client(admin_user).post(f"/api/projects/{project.slug}/videos/register/", {"key": key}, format="json")
    assert res.status_code == 400 and "key" in res.json()["errors"], res.content
    assert res.json()["errors"]["key"] != "storage is a local folder"  # refused for the key itself, first
    assert Video.objects.count() == 0


def test_the_video_list_carries_media_urls(project, admin_user, short_video):
    created = _upload(_client(admin_user), project, short_video).json()
    listed = _client(admin_user).get(f"/api/projects/{project.slug}/videos/").json()["results"]
    assert [(v["id"], v["rendition"], v["hls"]) for v in listed] == [(created["id"], None, None)]
    services.transcode(created["id"])
    video = Video.objects.get()
    (item,) = _client(admin_user).get(f"/api/projects/{project.slug}/videos/").json()["results"]
    assert item["status"] == "ready"
    assert item["rendition"] == f"http://testserver/files/{video.rendition.name}"
    assert item["poster"] == f"http://testserver/files/{video.poster.name}"
    assert item["hls"] is None  # a 3 s video has no HLS
    assert item["thumbnails_vtt"] == (
        f"http://testserver/files/{video.thumbnails_vtt.name}" if video.thumbnails_vtt else None
    )


# --- /files/ with the API token -------------------------------------------------------------------


@pytest.fixture
def ready(project, admin_user, short_video) -> Video:
    video_id = _upload(_client(admin_user), project, short_video).json()["id"]
    return services.transcode(video_id)


def test_a_script_fetches_a_range_of_the_rendition_with_its_token(ready, admin_user):
    url = f"/files/{ready.rendition.name}"
    res = _client(admin_user).get(url, HTTP_RANGE="bytes=0-99")
    assert res.status_code == 206 and res["Content-Range"].endswith(f"/{ready.rendition.size}")
    data = b"".join(res.streaming_content)
    assert data == Path(settings.MEDIA_ROOT, ready.rendition.name).read_bytes()[:100]


def test_a_bad_token_is_a_401_that_names_nothing(ready):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    res = client.get(f"/files/{ready.rendition.name}")
    assert res.status_code == 401 and res["WWW-Authenticate"] == "Token"
    assert res.content == b"invalid token\n"


def test_without_a_token_an_anonymous_visitor_is_sent_to_log_in(ready):
    res = APIClient().get(f"/files/{ready.rendition.name}")
    assert res.status_code == 302 and res["Location"].startswith("/accounts/login/")


def test_a_token_whose_user_may_not_see_the_video_gets_404(ready, annotator):
    assert _client(annotator).get(f"/files/{ready.rendition.name}").status_code == 404
    assert _client(annotator).get(f"/files/{ready.original.name}").status_code == 404
