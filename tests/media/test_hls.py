"""Long videos get an HLS rendition (two levels, 4-6 s segments) and every video timeline thumbnails
(sprite sheets + WebVTT); their files are served by path prefix to those who may see the video.

The 2-hour video is the real demo footage (bikes.mp4) scaled down and looped with ``-c copy``: made
once and cached under .local/, ingested and transcoded once per test session (``long_transcoded``).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from io import StringIO
from pathlib import Path

import m3u8
import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from PIL import Image

from annotator.core import handles
from annotator.media import services, streaming
from annotator.media.models import Video
from annotator.projects.services import ensure_member, ensure_project
from annotator.qa.models import QueueItem, WorkUnit
from annotator.studies.models import Participant, Study
from tests.conftest import make_video
from tests.long_video import TWO_HOURS_S, ingest_now


def _path(name: str) -> Path:
    return Path(settings.MEDIA_ROOT, name)


def test_a_two_hour_video_gets_hls_with_two_levels_of_4_to_6_s_segments(long_video):
    assert long_video.status == "ready", long_video.error
    assert long_video.hls.name == f"hls/{long_video.media_key}/{long_video.sha256[:16]}/master.m3u8"
    master = m3u8.load(str(_path(long_video.hls.name)))
    assert master.is_variant and len(master.playlists) >= 2
    heights = sorted(p.stream_info.resolution[1] for p in master.playlists)
    assert heights == [34, 68]  # the rendition's height (68: 160 px wide footage) and half of it
    for variant in master.playlists:
        assert variant.stream_info.bandwidth > 0
        level = m3u8.load(str(_path(long_video.hls.name).parent / variant.uri))
        assert level.playlist_type == "vod" and level.is_endlist
        durations = [s.duration for s in level.segments]
        assert all(4.0 <= d <= 6.0 for d in durations[:-1]) and 0 < durations[-1] <= 6.0
        assert sum(durations) == pytest.approx(TWO_HOURS_S, abs=1.0)
        for segment in (level.segments[0], level.segments[len(durations) // 2], level.segments[-1]):
            assert (_path(long_video.hls.name).parent / segment.uri).stat().st_size > 0
    # The top level is the MP4 rendition cut without a second encode: its segments hold the rendition's bytes.
    assert long_video.rendition.name.endswith(".mp4") and _path(long_video.rendition.name).is_file()


def _cues(vtt_text: str) -> list[tuple[float, float, str]]:
    def seconds(stamp: str) -> float:
        h, m, s = stamp.split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)

    cues = re.findall(r"(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})\n(\S+)", vtt_text)
    return [(seconds(a), seconds(b), target) for a, b, target in cues]


def _check_thumbnails(video: Video) -> list[tuple[float, float, str]]:
    """Assert ``video``'s VTT covers [0, duration] without gaps and every cue's region lies inside
    an existing sprite sheet; return the cues."""
    vtt = _path(video.thumbnails_vtt.name)
    text = vtt.read_text()
    assert text.startswith("WEBVTT\n")
    cues = _cues(text)
    assert cues and cues[0][0] == 0.0
    assert cues[-1][1] == pytest.approx(video.duration_s, abs=0.001)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(cues))
    assert len(cues) <= settings.MEDIA_THUMB_MAX_TILES
    sizes = {}
    for _, _, target in cues:
        sheet, xywh = re.fullmatch(r"(sprite-\d+\.jpg)#xywh=(\d+,\d+,\d+,\d+)", target).groups()
        if sheet not in sizes:
            with Image.open(vtt.parent / sheet) as image:
                sizes[sheet] = image.size
        x, y, w, h = map(int, xywh.split(","))
        assert w == settings.MEDIA_THUMB_WIDTH and x + w <= sizes[sheet][0] and y + h <= sizes[sheet][1]
    return cues


def test_sprites_and_vtt_cover_the_whole_two_hours(long_video):
    assert long_video.thumbnails_vtt.name == f"thumbs/{long_video.media_key}/{long_video.sha256[:16]}/thumbnails.vtt"
    cues = _check_thumbnails(long_video)
    assert len(cues) == 720  # one tile every 10 s (ceil(7200 / 1000) = 8, rounded up to the 5 s key frame grid)
    assert cues[1] == (10.0, 20.0, "sprite-0.jpg#xywh=160,0,160,68")
    assert cues[-1][2] == "sprite-7.jpg#xywh=1440,68,160,68"  # tile 719: sheet 7, row 1, column 9
    assert (_path(long_video.thumbnails_vtt.name).parent / "sprite-7.jpg").is_file()


def test_a_short_video_keeps_its_mp4_and_gets_thumbnails(project, tmp_path):
    video = services.transcode(ingest_now(project, make_video(tmp_path / "short.mp4", seconds=4.0)).pk)
    assert video.status == "ready" and video.rendition.name and not video.hls.name
    assert [c[2] for c in _check_thumbnails(video)] == [f"sprite-0.jpg#xywh={i * 160},0,160,120" for i in range(4)]
    from annotator.media.urls import media_urls

    assert media_urls(video) == {
        "url": f"/files/{video.rendition.name}",
        "poster_url": f"/files/{video.poster.name}",
        "hls_url": None,
        "thumbnails_vtt_url": f"/files/{video.thumbnails_vtt.name}",
    }


def test_backfill_makes_what_ready_videos_lack_once(project, tmp_path, settings):
    settings.MEDIA_HLS_MIN_DURATION_S = 10.0
    video = services.transcode(ingest_now(project, make_video(tmp_path / "twelve.mp4", seconds=12.0, size="96x64")).pk)
    assert video.hls.name  # 12 s > 10 s
    Video.objects.filter(pk=video.pk).update(hls="", thumbnails_vtt="")  # as a video transcoded before both existed
    streaming.clear_prefix(streaming.hls_prefix(video))
    streaming.clear_prefix(streaming.thumbs_prefix(video))
    out = StringIO()
    call_command("media_backfill", "--project", project.slug, stdout=out)
    assert f"video {video.pk}: thumbnails, HLS" in out.getvalue()
    video.refresh_from_db()
    assert video.status == "ready"
    master = m3u8.load(str(_path(video.hls.name)))
    assert len(master.playlists) == 2
    _check_thumbnails(video)
    again = StringIO()
    call_command("media_backfill", "--project", project.slug, stdout=again)
    assert "0 videos to backfill" in again.getvalue()


def test_a_backfill_ffmpeg_cannot_make_leaves_the_video_as_it_was(project, tmp_path):
    video = services.transcode(ingest_now(project, make_video(tmp_path / "four.mp4", seconds=4.0, size="96x64")).pk)
    Video.objects.filter(pk=video.pk).update(thumbnails_vtt="")
    streaming.clear_prefix(streaming.thumbs_prefix(video))
    _path(video.rendition.name).write_bytes(b"not a video any more" * 100)  # a damaged rendition
    err = StringIO()
    with pytest.raises(CommandError, match="1 of 1 videos failed"):
        call_command("media_backfill", "--project", project.slug, stdout=StringIO(), stderr=err)
    assert f"video {video.pk} (four.mp4): failed, left as it was: timeline thumbnails:" in err.getvalue()
    video.refresh_from_db()
    assert video.status == "ready" and video.thumbnails_vtt.name == "" and video.rendition.name
    assert not _path(streaming.thumbs_prefix(video)).exists() or not any(
        _path(streaming.thumbs_prefix(video)).iterdir()
    )


# --- /files/ by path prefix -------------------------------------------------------------------------


def _stored_video(project) -> tuple[Video, list[str]]:
    video = Video.objects.create(
        project=project,
        sha256=hashlib.sha256(b"long").hexdigest(),
        filename="long.mp4",
        status="ready",
        duration_s=7200.0,
    )
    hls, thumbs = streaming.hls_prefix(video), streaming.thumbs_prefix(video)
    # The last two are named as before handles (``<pk>`` folders): not served (relocate_media moves them).
    names = [
        f"{hls}/master.m3u8",
        f"{hls}/v1-00042.m4s",
        f"{thumbs}/thumbnails.vtt",
        f"{thumbs}/sprite-0.jpg",
        f"hls/{video.pk}/{video.sha256[:16]}/v1-00043.m4s",
        f"thumbs/{video.pk}/{video.sha256[:16]}/sprite-1.jpg",
    ]
    for name in names:
        default_storage.save(name, ContentFile(b"x" * 10))
    Video.objects.filter(pk=video.pk).update(hls=names[0], thumbnails_vtt=names[2])
    return video, names


def _status(user, name: str) -> int:
    client = Client()
    client.force_login(user)
    return client.get("/files/" + name).status_code


def test_segments_and_thumbnails_are_served_by_prefix_to_who_may_see_the_video(
    project, annotator, annotator2, admin_user
):
    video, names = _stored_video(project)
    unit = WorkUnit.objects.create(project=project, video=video, start_s=0, end_s=7200)
    QueueItem.objects.create(
        project=project,
        unit=unit,
        leased_by=annotator,
        claimed_at=timezone.now(),
        lease_expires_at=timezone.now() + timezone.timedelta(seconds=120),
    )
    outsider = ensure_member("outsider", role="admin", project=ensure_project("elsewhere"))[0]
    study = Study.objects.create(project=project, name="pilot", kind="ordering")
    participant = ensure_member("part", role="annotator", project=project)[0]
    Participant.objects.create(study=study, user=participant)
    assert [_status(admin_user, n) for n in names] == [200] * 4 + [404] * 2  # row-id folders: never
    assert [_status(annotator, n) for n in names] == [200] * 4 + [404] * 2  # holds a unit of the video
    assert [_status(annotator2, n) for n in names] == [404] * 6  # a member without a unit of it
    assert [_status(participant, n) for n in names] == [404] * 6  # a study participant
    assert [_status(outsider, n) for n in names] == [404] * 6  # an admin of another project


@pytest.mark.parametrize(
    "name",
    [
        "hls/{pk}/{sha}/../../../renditions/x.mp4",
        "hls/{pk}/{sha}/a/b.m4s",
        "hls/{pk}/{sha}/..m4s",
        "hls/{pk}/{sha}/.hidden",
        "hls/{pk}/0000000000000000/master.m3u8",
        "hls/{other}/{sha}/master.m3u8",
        "hls/{pk}/{sha}/",
        "hls/x/{sha}/master.m3u8",
        "thumbs/{pk}/{sha}/sprite 0.jpg",
        "hlsx/{pk}/{sha}/master.m3u8",
        "hls/{pk}/{SHA}/master.m3u8",
        "hls/{pk}/{sha}master.m3u8",
        "hls/{PK}/{sha}/master.m3u8",
        "hls/{qa}/{sha}/master.m3u8",
        "hls/{id}/{sha}/master.m3u8",
        "hls/{handle}/{sha}/master.m3u8",
    ],
)
def test_odd_names_under_the_prefixes_are_refused(project, admin_user, name):
    video, _ = _stored_video(project)
    sha = video.sha256[:16]
    key = streaming.media_key(video)
    # {pk}: the video's key; {other}: another key; {PK}: the key in capitals; {qa}: the handle of the
    # video's id as a QA pair; {id}: its row id (folders from before handles); {handle}: its handle
    # (the key is stored, not derived from the id)
    name = name.format(
        pk=key,
        sha=sha,
        SHA=sha.upper(),
        other=handles.random_key(),
        PK=key.upper(),
        qa=handles.encode("qa", video.pk),
        id=video.pk,
        handle=handles.encode("video", video.pk),
    )
    stored = "renditions/x.mp4" if ".." in name.split("/") else name  # the file the name reaches exists
    if not stored.endswith("/") and not default_storage.exists(stored):
        assert default_storage.save(stored, ContentFile(b"secret")) == stored
    assert _status(admin_user, name) == 404
