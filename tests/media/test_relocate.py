"""Media-key folders (issue 20, findings 4 and 9 of the second security review): each video stores
the name of its media folders; files stored before handles, in folders named by the video's row id,
are not served until ``manage.py relocate_media`` moves them, on local disk and in an S3 bucket."""

import hashlib
import re
from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.test import Client, override_settings

from annotator.core import handles
from annotator.media import services, streaming
from annotator.media.models import Video
from annotator.media.services import relocation


def _legacy_video(project, name="old.mp4") -> tuple[Video, dict[str, bytes]]:
    """A ready video whose files lie where they were stored before handles: ``<kind>/<pk>/...``."""
    video = Video.objects.create(
        project=project,
        sha256=hashlib.sha256(name.encode()).hexdigest(),
        filename=name,
        status="ready",
        duration_s=3600.0,
    )
    sha = video.sha256[:16]
    files = {
        f"renditions/{video.pk}/{sha}.mp4": b"rendition",
        f"renditions/{video.pk}/{sha}-poster.jpg": b"poster",
        f"hls/{video.pk}/{sha}/master.m3u8": b"#EXTM3U master",
        f"hls/{video.pk}/{sha}/v0-00001.m4s": b"segment",
        f"thumbs/{video.pk}/{sha}/thumbnails.vtt": b"WEBVTT",
        f"thumbs/{video.pk}/{sha}/sprite-0.jpg": b"sprite",
    }
    for key, body in files.items():
        assert default_storage.save(key, ContentFile(body)) == key
    Video.objects.filter(pk=video.pk).update(
        rendition=f"renditions/{video.pk}/{sha}.mp4",
        poster=f"renditions/{video.pk}/{sha}-poster.jpg",
        hls=f"hls/{video.pk}/{sha}/master.m3u8",
        thumbnails_vtt=f"thumbs/{video.pk}/{sha}/thumbnails.vtt",
    )
    video.refresh_from_db()
    return video, files


def _status(user, name: str) -> int:
    client = Client()
    client.force_login(user)
    return client.get("/files/" + name).status_code


def test_keys_are_random_letters_unrelated_to_the_id(project):
    a, b = (Video.objects.create(project=project, sha256=f"{n}" * 64, filename=f"{n}.mp4") for n in (1, 2))
    for video in (a, b):
        assert re.fullmatch(handles.PATTERN, video.media_key)
        assert video.media_key != handles.encode("video", video.pk)
        assert streaming.hls_prefix(video) == f"hls/{video.media_key}/{video.sha256[:16]}"
    assert a.media_key != b.media_key
    # Rotating a key renames no folder: the name is stored.
    with override_settings(HANDLE_KEY="rotated-handle-key-0123456789", SECRET_KEY="rotated-secret-key-0123456789"):
        assert streaming.media_key(Video.objects.get(pk=a.pk)) == a.media_key


def test_relocate_media_moves_row_id_folders_to_the_media_key_and_is_a_no_op_after(project, admin_user):
    video, files = _legacy_video(project)
    assert services.misplaced(video) == ["rendition", "poster", "hls", "thumbnails_vtt"]
    assert [_status(admin_user, k) for k in files] == [404] * 6  # a row id in a URL is never served
    from annotator.media.urls import media_urls

    assert set(media_urls(video).values()) == {None}  # nor written into a page

    out = StringIO()
    call_command("relocate_media", stdout=out)
    assert "1 videos to move" in out.getvalue() and "6 files moved" in out.getvalue()
    video.refresh_from_db()
    key, sha = video.media_key, video.sha256[:16]
    assert (video.rendition.name, video.poster.name, video.hls.name, video.thumbnails_vtt.name) == (
        f"renditions/{key}/{sha}.mp4",
        f"renditions/{key}/{sha}-poster.jpg",
        f"hls/{key}/{sha}/master.m3u8",
        f"thumbs/{key}/{sha}/thumbnails.vtt",
    )
    assert services.misplaced(video) == []
    assert all(media_urls(video).values())
    for old, body in files.items():
        new = old.replace(f"/{video.pk}/", f"/{key}/", 1)
        assert not default_storage.exists(old)
        with default_storage.open(new) as fh:
            assert fh.read() == body  # same bytes, same file names (playlists name segments relatively)
        assert _status(admin_user, new) == 200

    again = StringIO()
    call_command("relocate_media", stdout=again)
    assert "every video's files are in its media-key folders" in again.getvalue()


def test_a_failed_move_keeps_the_old_files_and_the_row_and_a_rerun_finishes(project, admin_user, monkeypatch):
    video, files = _legacy_video(project)
    real_copy = relocation._copy
    calls = []

    def failing(src, dst):
        calls.append(src)
        if len(calls) == 3:  # not an OSError: as a storage client's own error (boto's ClientError) is not
            raise RuntimeError("the bucket refused the write")
        return real_copy(src, dst)

    monkeypatch.setattr(relocation, "_copy", failing)
    err = StringIO()
    with pytest.raises(CommandError, match="1 of 1 videos could not be moved; run the command again"):
        call_command("relocate_media", stdout=StringIO(), stderr=err)
    assert (
        f"video {video.pk} (old.mp4): not moved, its old files are kept: the bucket refused the write" in err.getvalue()
    )
    before = (video.rendition.name, video.hls.name)
    video.refresh_from_db()
    assert (video.rendition.name, video.hls.name) == before
    assert all(default_storage.exists(k) for k in files)
    assert not default_storage.exists(f"renditions/{video.media_key}/{video.sha256[:16]}.mp4")  # copies undone

    monkeypatch.setattr(relocation, "_copy", real_copy)
    call_command("relocate_media", stdout=StringIO())
    video.refresh_from_db()
    assert services.misplaced(video) == [] and not any(default_storage.exists(k) for k in files)


def test_relocate_media_moves_files_in_an_s3_bucket(s3, project):
    client, bucket = s3
    video, files = _legacy_video(project, "bucket.mp4")
    call_command("relocate_media", "--project", project.slug, stdout=StringIO())
    video.refresh_from_db()
    keys = sorted(o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", []))
    assert keys == sorted(k.replace(f"/{video.pk}/", f"/{video.media_key}/", 1) for k in files)
    assert client.get_object(Bucket=bucket, Key=video.hls.name)["Body"].read() == b"#EXTM3U master"


def test_the_migration_keeps_handle_named_folders_and_gives_row_id_folders_a_new_key(project):
    import importlib

    from django.apps import apps

    fill = importlib.import_module("annotator.media.migrations.0003_media_key").fill
    stored_under_handle = Video.objects.create(project=project, sha256="a" * 64, filename="a.mp4")
    # Named by its handle under the SECRET_KEY of the time (stored since handles, before media keys).
    old_handle = handles.encode("video", stored_under_handle.pk, secret="the secret key of the time")
    Video.objects.filter(pk=stored_under_handle.pk).update(
        rendition=f"renditions/{old_handle}/{'a' * 16}.mp4", hls=f"hls/{old_handle}/{'a' * 16}/master.m3u8"
    )
    by_row_id, _ = _legacy_video(project)
    fill(apps, None)
    stored_under_handle.refresh_from_db()
    by_row_id.refresh_from_db()
    assert stored_under_handle.media_key == old_handle and services.misplaced(stored_under_handle) == []
    assert re.fullmatch(handles.PATTERN, by_row_id.media_key) and services.misplaced(by_row_id)


def test_a_row_written_without_django_gets_a_key_of_the_same_shape(project):
    from django.db import connection

    video = Video.objects.create(project=project, sha256="r" * 64, filename="raw.mp4")
    with connection.cursor() as cursor:  # the database's default, as a historical model's insert gets it
        cursor.execute("UPDATE media_video SET media_key = DEFAULT WHERE id = %s RETURNING media_key", [video.pk])
        key = cursor.fetchone()[0]
    assert re.fullmatch(handles.PATTERN, key) and key != video.media_key
