"""Serving stored media with byte ranges so the player can seek, and only to who may see it:
overseers (admins, reviewers, researchers); an annotator the videos of units they hold or held;
a study's participant the frames of their own trials and never a source video (issue 7, B)."""

import hashlib

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client
from django.utils import timezone

from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.projects.services import ensure_member, ensure_project
from annotator.qa.models import QueueItem, WorkUnit
from annotator.studies.kinds.ordering import store_frame
from annotator.studies.models import Condition, Element, Item, Participant, Study, Trial

BODY = bytes(range(256)) * 40  # 10240 bytes


def _video(project, tag: str) -> Video:
    """A ready video with its rendition and poster in its media-key folder, as a transcode stores them."""
    video = Video.objects.create(
        project=project,
        sha256=hashlib.sha256(tag.encode()).hexdigest(),
        filename=f"{tag}.mp4",
        status="ready",
        duration_s=60.0,
    )
    video.rendition = default_storage.save(f"renditions/{video.media_key}/{tag}.mp4", ContentFile(BODY))
    video.poster = default_storage.save(
        f"renditions/{video.media_key}/{tag}-poster.jpg", ContentFile(b"poster " + tag.encode())
    )
    video.save(update_fields=["rendition", "poster"])
    return video


def _held(project, video, user, *, done: bool = False, group=None) -> QueueItem:
    """A first-pass queue item over a unit of ``video``, leased by ``user`` (or completed by them)."""
    unit = WorkUnit.objects.create(project=project, video=video, group=group, start_s=0, end_s=10)
    if done:
        return QueueItem.objects.create(
            project=project, unit=unit, status="done", completed_by=user, completed_at=timezone.now()
        )
    return QueueItem.objects.create(
        project=project,
        unit=unit,
        leased_by=user,
        claimed_at=timezone.now(),
        lease_expires_at=timezone.now() + timezone.timedelta(seconds=120),
    )


@pytest.fixture
def stored(project, annotator):
    video = _video(project, "clip")
    _held(project, video, annotator)
    return "/files/" + video.rendition.name


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def _get(user, url) -> int:
    return _client(user).get(url).status_code


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


def test_an_annotator_gets_the_videos_of_units_they_hold_or_held_and_no_others(project, annotator, annotator2):
    holding, done, other = _video(project, "holding"), _video(project, "done"), _video(project, "other")
    _held(project, holding, annotator)
    _held(project, done, annotator, done=True)
    _held(project, other, annotator2)
    for video in (holding, done):
        assert (_get(annotator, "/files/" + video.rendition.name), _get(annotator, "/files/" + video.poster.name)) == (
            200,
            200,
        )
    assert (_get(annotator, "/files/" + other.rendition.name), _get(annotator, "/files/" + other.poster.name)) == (
        404,
        404,
    )
    # A day-night unit shows both videos: holding it gives the night one too.
    day, night = _video(project, "day"), _video(project, "night")
    group = VideoGroup.objects.create(project=project, kind="day_night", name="route")
    VideoGroupMember.objects.create(group=group, video=day, role="day")
    VideoGroupMember.objects.create(group=group, video=night, role="night", offset_s=1.0)
    assert _get(annotator2, "/files/" + night.rendition.name) == 404
    _held(project, day, annotator2, done=True, group=group)
    assert _get(annotator2, "/files/" + night.rendition.name) == 200


@pytest.fixture
def study(project):
    """A video shown in a study as two items of two frames each (stored by content, as built)."""
    video = _video(project, "study")
    exp = Study.objects.create(project=project, name="pilot", kind="ordering")
    cond = Condition.objects.create(study=exp, number=1, label="c", variables={"n_frames": 2, "hints": []})
    items = []
    for i in range(2):
        frames = [
            Element.objects.create(
                kind="frame", video=video, t_s=i * 20 + k, size=32, image=store_frame(f"frame {i} {k}".encode(), [])
            )
            for k in range(2)
        ]
        ids = [f.pk for f in frames]
        items.append(
            Item.objects.create(
                condition=cond, index=i, truth=ids, seed=i, footage=video, payload={"shown": ids[::-1], "hints": []}
            )
        )
    return exp, video, items


def test_a_participant_gets_the_frames_of_their_trials_and_never_the_source_video(
    study, project, annotator, annotator2
):
    exp, video, (mine, theirs) = study
    Trial.objects.create(participant=Participant.objects.create(study=exp, user=annotator), item=mine, position=0)
    Trial.objects.create(participant=Participant.objects.create(study=exp, user=annotator2), item=theirs, position=0)
    url = {item: ["/files/" + Element.objects.get(pk=pk).image.name for pk in item.truth] for item in (mine, theirs)}
    assert [_get(annotator, u) for u in url[mine] + url[theirs]] == [200, 200, 404, 404]
    assert [_get(annotator2, u) for u in url[mine] + url[theirs]] == [404, 404, 200, 200]
    for part in (video.rendition.name, video.poster.name):
        assert (_get(annotator, "/files/" + part), _get(annotator2, "/files/" + part)) == (404, 404)


@pytest.mark.parametrize("role", ["admin", "reviewer", "researcher"])
def test_overseers_get_every_frame_and_video(study, project, role):
    exp, video, items = study
    person = ensure_member(f"o-{role}", role=role, project=project)[0]
    urls = [
        "/files/" + video.rendition.name,
        "/files/" + video.poster.name,
        *["/files/" + Element.objects.get(pk=pk).image.name for item in items for pk in item.truth],
    ]
    assert [_get(person, u) for u in urls] == [200] * 6
