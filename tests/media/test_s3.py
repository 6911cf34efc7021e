"""S3 storage end to end, against moto's S3 server started on loopback by the tests
(``tests/s3_server.py``: a separate process speaking the S3 HTTP API; nothing in the code under test
is mocked), with the storage settings exactly as ``annotator.settings`` builds them for S3."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import urljoin

import pytest
import requests
from django.conf import settings as django_settings
from rest_framework.test import APIClient

from annotator.core.models import Job
from annotator.media import services, streaming
from annotator.media.models import Video
from annotator.projects.services import token_for
from tests.conftest import make_video


def _keys(client, bucket, prefix="") -> list[str]:
    return sorted(o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []))


def _body(client, bucket, key) -> bytes:
    return client.get_object(Bucket=bucket, Key=key)["Body"].read()


def _api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


def _upload(user, project, path: Path, **fields):
    with path.open("rb") as fh:
        return _api(user).post(f"/api/projects/{project.slug}/videos/", {"file": fh, **fields}, format="multipart")


def _local_media() -> list[Path]:
    root = Path(django_settings.MEDIA_ROOT)
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.mark.django_db
def test_an_upload_by_api_is_stored_in_the_bucket_and_transcoded_there(s3, project, admin_user, short_video):
    client, bucket = s3
    before = _local_media()
    res = _upload(admin_user, project, short_video, illumination="day")
    assert res.status_code == 201, res.content
    video = Video.objects.get()
    assert _keys(client, bucket) == [video.original.name]
    assert _body(client, bucket, video.original.name) == short_video.read_bytes()
    assert list(Job.objects.values_list("task", "args")) == [("media.transcode", [video.pk])]

    video = services.transcode(video.pk)
    assert video.status == "ready", video.error
    stored = _keys(client, bucket)
    assert video.rendition.name in stored and video.poster.name in stored
    assert _body(client, bucket, video.poster.name)[:2] == b"\xff\xd8"  # a JPEG
    for name in (video.hls.name, video.thumbnails_vtt.name):  # written by transcode where it makes them
        assert not name or name in stored
    assert _local_media() == before  # nothing went to the local media folder
    assert list(Path(django_settings.MEDIA_WORK_DIR).glob("*")) == []  # nor stayed in the work folder


@pytest.mark.django_db
def test_a_video_is_registered_by_its_key_and_left_where_it_is(s3, project, admin_user, short_video):
    client, bucket = s3
    client.put_object(Bucket=bucket, Key="incoming/day one/clip.mp4", Body=short_video.read_bytes())
    url = f"/api/projects/{project.slug}/videos/register/"
    res = _api(admin_user).post(url, {"key": "incoming/day one/clip.mp4", "illumination": "night"}, format="json")
    assert res.status_code == 201, res.content
    video = Video.objects.get()
    assert (video.original.name, video.filename, video.illumination, video.status) == (
        "incoming/day one/clip.mp4",
        "clip.mp4",
        "night",
        "processing",
    )
    assert _keys(client, bucket) == ["incoming/day one/clip.mp4"]  # not copied
    assert services.transcode(video.pk).status == "ready"

    client.copy_object(
        Bucket=bucket, Key="incoming/again.mp4", CopySource={"Bucket": bucket, "Key": "incoming/day one/clip.mp4"}
    )
    again = _api(admin_user).post(url, {"key": "incoming/again.mp4"}, format="json")
    assert again.status_code == 200 and again.json()["id"] == video.pk and Video.objects.count() == 1


@pytest.mark.django_db
def test_a_missing_key_is_a_400_naming_it_and_a_large_object_is_refused_before_download(
    s3, project, admin_user, short_video, settings
):
    client, bucket = s3
    url = f"/api/projects/{project.slug}/videos/register/"
    res = _api(admin_user).post(url, {"key": "incoming/nope.mp4"}, format="json")
    assert res.status_code == 400 and "'incoming/nope.mp4'" in res.json()["detail"]
    client.put_object(Bucket=bucket, Key="incoming/big.mp4", Body=short_video.read_bytes())
    settings.MEDIA_MAX_UPLOAD_BYTES = 1000
    res = _api(admin_user).post(url, {"key": "incoming/big.mp4"}, format="json")
    assert res.status_code == 400 and "'incoming/big.mp4' is too large" in res.json()["detail"]  # from its size alone
    assert Video.objects.count() == 0 and list(Path(django_settings.MEDIA_WORK_DIR).glob("*")) == []


@pytest.mark.django_db
def test_a_corrupt_object_is_a_failed_video_with_its_reason(s3, project, admin_user, corrupt_video):
    client, bucket = s3
    client.put_object(Bucket=bucket, Key="incoming/cut.mp4", Body=corrupt_video.read_bytes())
    res = _api(admin_user).post(
        f"/api/projects/{project.slug}/videos/register/", {"key": "incoming/cut.mp4"}, format="json"
    )
    assert res.status_code == 201 and res.json()["status"] == "failed" and res.json()["error"]
    assert str(django_settings.MEDIA_WORK_DIR) not in res.json()["error"]


@pytest.mark.django_db
def test_local_copy_streams_an_object_to_the_work_folder_and_removes_it(s3, short_video):
    client, bucket = s3
    client.put_object(Bucket=bucket, Key="incoming/a.mp4", Body=short_video.read_bytes())
    with services.local_copy("incoming/a.mp4") as path:
        assert path.parent == Path(django_settings.MEDIA_WORK_DIR) and path.suffix == ".mp4"
        assert path.read_bytes() == short_video.read_bytes()
    assert not path.exists()
    with pytest.raises(FileNotFoundError), services.local_copy("incoming/missing.mp4"):
        pass


@pytest.mark.django_db
def test_local_copy_never_holds_a_whole_object_in_memory(s3):
    import tracemalloc

    client, bucket = s3
    size = 48 * 1024 * 1024
    client.put_object(Bucket=bucket, Key="incoming/big.bin", Body=os.urandom(size))
    with services.local_copy("incoming/big.bin"):  # the storage's client and S3's service model, loaded once
        pass
    tracemalloc.start()
    try:
        with services.local_copy("incoming/big.bin") as path:
            assert path.stat().st_size == size
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # 2 MiB seen; django-storages' open (8 MiB spool) 16 MiB, boto3's managed download 32 MiB.
    assert peak < 8 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB for a {size / 2**20:.0f} MiB object"


@pytest.fixture
def ready_on_s3(s3, project, admin_user, short_video) -> Video:
    video_id = _upload(admin_user, project, short_video).json()["id"]
    return services.transcode(video_id)


@pytest.mark.django_db
def test_files_redirects_to_a_presigned_url_after_the_access_check(ready_on_s3, s3, admin_user, annotator):
    client, bucket = s3
    name = ready_on_s3.rendition.name
    res = _api(admin_user).get(f"/files/{name}")
    assert res.status_code == 302 and res["Cache-Control"] == "private, no-store"
    location = res["Location"]
    assert location.startswith(f"{django_settings.STORAGES['default']['OPTIONS']['endpoint_url']}/{bucket}/{name}?")
    assert "X-Amz-Signature=" in location
    got = requests.get(location, headers={"Range": "bytes=0-99"}, timeout=10)
    assert got.status_code == 206 and got.content == _body(client, bucket, name)[:100]
    assert requests.get(location.split("?")[0], timeout=10).status_code == 403  # the bucket is private
    assert _api(annotator).get(f"/files/{name}").status_code == 404  # no redirect for who may not see it
    assert APIClient().get(f"/files/{name}").status_code == 302 and APIClient().get(f"/files/{name}")[
        "Location"
    ].startswith("/accounts/login/")


@pytest.mark.django_db
def test_the_video_list_links_to_files_on_s3_too(ready_on_s3, project, admin_user):
    (item,) = _api(admin_user).get(f"/api/projects/{project.slug}/videos/").json()["results"]
    assert item["rendition"] == f"http://testserver/files/{ready_on_s3.rendition.name}"
    assert item["poster"] == f"http://testserver/files/{ready_on_s3.poster.name}"


def _uris(text: str) -> list[str]:
    """The URIs a playlist refers to: its non-tag lines and the URI="..." of EXT-X-MAP."""
    out = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            out.append(line)
        elif line.startswith("#EXT-X-MAP:") and 'URI="' in line:
            out.append(line.split('URI="', 1)[1].split('"', 1)[0])
    return out


@pytest.mark.django_db
def test_hls_and_thumbnails_are_written_to_the_bucket_and_play_through_files(
    s3, project, admin_user, tmp_path, settings
):
    """Every URL a player follows, from the master playlist down to the segments and sprite sheets,
    resolves under /files/ and reaches the object: playlists and the WebVTT answered from /files/,
    segments and sprites by a redirect to a presigned URL."""
    client, bucket = s3
    settings.MEDIA_HLS_MIN_DURATION_S = 1.0  # so a 12 s video gets HLS (two or three segments a level)
    source = make_video(tmp_path / "twelve.mp4", seconds=12.0, size="160x120")
    video = services.transcode(_upload(admin_user, project, source).json()["id"])
    assert video.status == "ready", video.error
    key = streaming.media_key(video)  # the video's handle, not its pk (issue 20)
    assert video.hls.name.startswith(f"hls/{key}/") and video.thumbnails_vtt.name.startswith(f"thumbs/{key}/")
    stored = _keys(client, bucket)
    assert video.hls.name in stored and video.thumbnails_vtt.name in stored

    api = _api(admin_user)
    fetched = {}

    def follow(url: str) -> None:
        name = url.removeprefix("http://testserver/files/").split("#")[0]
        if name in fetched:
            return
        res = api.get(url.split("#")[0])
        if name.endswith((".m3u8", ".vtt")):
            assert res.status_code == 200, (name, res.status_code)
            fetched[name] = res.content
            text = res.content.decode()
            refs = (
                _uris(text)
                if name.endswith(".m3u8")
                else [ln.split("#")[0] for ln in text.splitlines() if ".jpg" in ln]
            )
            for ref in refs:
                follow(urljoin(url, ref))
        else:
            assert res.status_code == 302, (name, res.status_code)
            got = requests.get(res["Location"], timeout=10)
            assert got.status_code == 200
            fetched[name] = got.content
        assert fetched[name] == _body(client, bucket, name)

    follow(f"http://testserver/files/{video.hls.name}")
    follow(f"http://testserver/files/{video.thumbnails_vtt.name}")
    kinds = {Path(n).suffix for n in fetched}
    assert {".m3u8", ".vtt", ".jpg"} <= kinds and len(
        [n for n in fetched if n.endswith(".m3u8")]
    ) >= 3  # master + 2 levels
    assert sorted(fetched) == sorted(k for k in stored if k.startswith(("hls/", "thumbs/")))  # every file reached


@pytest.mark.django_db
def test_the_export_cuts_its_clips_from_the_bucket(ready_on_s3, make_unit, project, annotator, tmp_path):
    from django.core.management import call_command

    from annotator.qa.queue import claim_next
    from annotator.qa.services import Decision, submit_unit

    video = ready_on_s3
    unit = make_unit(duration_s=video.duration_s)
    Video.objects.filter(pk=unit.video_id).update(
        original=video.original.name, rendition=video.rendition.name, poster=video.poster.name
    )
    unit = claim_next(project, annotator).unit
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="s3",
        time_spent_ms=1000,
        decisions=[Decision(p.pk, "keep") for p in unit.qa_pairs.order_by("id")],
        additions=[],
    )
    out = tmp_path / "export" / "qa.jsonl"
    call_command("export_qa", "--project", project.slug, "--out", str(out))
    plain = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(plain) == unit.qa_pairs.count() and all(r["media_path"] == "" for r in plain)

    call_command(
        "export_qa", "--project", project.slug, "--out", str(out), "--with-media", str(tmp_path / "export" / "clips")
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    sha16 = Video.objects.get(pk=unit.video_id).sha256[:16]
    assert {r["media_path"] for r in rows} == {f"clips/{sha16}_0-{round(video.duration_s * 1000)}.mp4"}
    clip = out.parent / rows[0]["media_path"]
    probed = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json", str(clip)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert float(json.loads(probed.stdout)["format"]["duration"]) == pytest.approx(video.duration_s, abs=0.1)
    assert list(Path(django_settings.MEDIA_WORK_DIR).glob("*")) == []  # the bucket copy is gone
