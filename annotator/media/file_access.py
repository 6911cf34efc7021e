"""Who may fetch the stored files of a video (``access.files``): its rendition and poster, and the
files of its HLS rendition and timeline thumbnails; originals are never served. Registered by
``MediaConfig.ready``."""

from __future__ import annotations

import re

from django.db.models import Q

from annotator import access
from annotator.access import files
from annotator.core import handles
from annotator.media.models import Video


def may_see_video(user, video: Video) -> bool:
    """Whether ``user`` may fetch ``video``'s rendition or poster (originals are never served).

    The project's admins, reviewers and researchers (and superusers) may. Other members only when no
    ``files.veto_video`` rule refuses it (studies: footage whose frames the person still has to order
    in a study, or a rendition derived from it) and a ``files.grant_video`` rule allows it (qa: a
    video of a work unit they hold or held, that is what the verify page plays; gold: a tutorial
    example's video). Nobody else, and so no participant of a human-baseline study, which shows
    frames and never its source video (issue 7: the rendition let a participant read every frame's
    time). One query for overseers, three for annotators (plus the later grants' when the queue
    grants nothing).
    """
    role = access.role_in(user, video.project)
    if role is None:
        return False
    if role in access.OVERSEE_ROLES:
        return True
    return not files.video_vetoed(user, video) and files.video_granted(user, video)


# The files of one video's HLS rendition and timeline thumbnails (``media.streaming``):
# ``hls/<media key>/<first 16 hex of its sha256>/<file>`` and ``thumbs/<key>/<sha16>/<file>``, the key
# being the video's stored ``media_key`` (13 random letters; folders named by row id, from before
# handles, are not served: ``manage.py relocate_media`` moves them). Hundreds of segments need no row
# each: the prefix names the video. A file name is letters, digits, ``-``, ``_`` and ``.`` (no ``..``,
# no further folder).
_VIDEO_FILES = re.compile(
    r"^(?:hls|thumbs)/(" + handles.PATTERN + r")/([0-9a-f]{16})/([A-Za-z0-9][A-Za-z0-9_.-]{0,99})$"
)


def _video_of_prefixed(name: str) -> Video | None:
    """The video whose HLS or thumbnails folder holds ``name``, or None (an odd name included)."""
    match = _VIDEO_FILES.match(name)
    if match is None or ".." in name:
        return None
    key, sha16, _ = match.groups()
    return Video.objects.filter(media_key=key, sha256__startswith=sha16).select_related("project").first()


@files.register("hls/")
@files.register("thumbs/")
def may_fetch_stream_file(user, name: str) -> bool:
    """A file of a video's HLS rendition or timeline thumbnails (by path prefix, ``_VIDEO_FILES``),
    by ``may_see_video``."""
    video = _video_of_prefixed(name)
    return video is not None and may_see_video(user, video)


@files.register("")
def may_fetch_rendition(user, name: str) -> bool:
    """A name no other app's rule claims: a video's rendition or poster, by ``may_see_video``;
    anything else (originals included) by nobody."""
    video = Video.objects.filter(Q(rendition=name) | Q(poster=name)).select_related("project").first()
    # Never from a folder named by the video's row id (stored before handles, not yet moved by
    # relocate_media): the id would tell old footage from new (issue 20).
    return video is not None and name.split("/")[1:2] != [str(video.pk)] and may_see_video(user, video)
