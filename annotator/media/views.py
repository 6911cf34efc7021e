"""Pages for videos, and serving stored media to logged-in members with HTTP range support.

Browsers seek in a video with ``Range`` requests; without 206 answers a <video> cannot jump to
a clip's start. Pages and the API link every stored file to this view (``/files/NAME``), which
checks access first. On local disk it serves the bytes itself; with S3 storage it answers a 302 to
a presigned URL of the object (the browser sends its ``Range`` there), except for HLS playlists
and WebVTT files, served from here so that the relative URLs inside them (segments, variant
playlists, sprite sheets) resolve under ``/files/`` again and are checked in turn. Scripts may
send ``Authorization: Token <key>`` (the API's token) instead of a session.
"""

import functools
import mimetypes
import operator
import re

from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.db.models import Q
from django.http import FileResponse, Http404, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import render

from annotator.core import handles
from annotator.media.models import Video
from annotator.media.services import on_local_disk
from annotator.projects import access

# At most 18 digits per bound (any stored file is smaller than 10**18 bytes): a longer number is not
# a range we could serve, and int() of a 5,000-digit string raises ValueError (a 500). A Range header
# that does not match is ignored and the whole file is sent, as RFC 9110 (14.2) allows.
_RANGE = re.compile(r"^bytes=(\d{0,18})-(\d{0,18})$")
CHUNK = 256 * 1024


def _stream(fh, start: int, length: int):
    fh.seek(start)
    remaining = length
    try:
        while remaining > 0:
            block = fh.read(min(CHUNK, remaining))
            if not block:
                break
            remaining -= len(block)
            yield block
    finally:
        fh.close()


# More videos other apps let a project's annotators play, as ``rule(user, video) -> bool`` (issue 20: a
# tutorial example's); asked after the refusals below. Registered by the app that owns the rule
# (``grant_video``), so this module imports none of them.
VIDEO_GRANTS: list = []


def grant_video(rule):
    """Decorator: let an annotator play ``video`` when ``rule(user, video)`` is true. Returns ``rule``."""
    if rule not in VIDEO_GRANTS:
        VIDEO_GRANTS.append(rule)
    return rule


def may_see_video(user, video: Video) -> bool:
    """Whether ``user`` may fetch ``video``'s rendition or poster (originals are never served).

    The project's admins, reviewers and researchers (and superusers) may. An annotator may only for
    a video of a work unit they hold or held in a queue (a ``QueueItem`` of the unit, or of its
    group: any member of its day-night pair or ego-exo set, or a labelled video of one of its QA
    pairs, ``QAPair.videos``; whose ``leased_by`` or ``completed_by`` is them): that is what the
    verify page plays. Nobody else, and so no participant of a human-baseline study, which shows frames and never
    its source video (issue 7: the rendition let a participant read every frame's time); and never
    footage (or a rendition derived from it) whose frames the annotator still has to order in a study.
    Other apps may grant more (``grant_video``: a tutorial example's video). One query for overseers,
    three for annotators (plus the grants' when the queue grants nothing).
    """
    from annotator.qa.models import QueueItem

    role = access.role_in(user, video.project)
    if role is None:
        return False
    if role in access.OVERSEE_ROLES:
        return True
    from annotator.studies.selectors import footage_in_open_trials

    if (video.derived_from_id or video.pk) in footage_in_open_trials(user):
        return False  # its frames are to be ordered by this person: the footage would give the order away
    mine = Q(leased_by=user) | Q(completed_by=user)
    shown = (Q(unit__video=video) | Q(unit__group__members__video=video)
             | Q(unit__qa_pairs__videos__contains=[{"video_id": video.pk}]))
    return QueueItem.objects.filter(mine).filter(shown).exists() or any(rule(user, video) for rule in VIDEO_GRANTS)


def may_see_frame(user, name: str) -> bool:
    """Whether ``user`` may fetch the ordering frame stored as ``name``: the project's admins,
    reviewers and researchers may, and a participant whose trials include an element with that image.
    Nobody else (an annotator of the video's units is not shown its frames)."""
    from annotator.studies.models import Element, Trial

    elements = list(Element.objects.filter(image=name).select_related("video__project"))
    if not elements or elements[0].video is None:
        return False
    if access.role_in(user, elements[0].video.project) in access.OVERSEE_ROLES:
        return True
    # An image stored once may back several elements (identical bytes share a content name).
    shown = functools.reduce(operator.or_, (Q(item__payload__shown__contains=[e.pk]) for e in elements))
    return Trial.objects.filter(participant__user=user).filter(shown).exists()


def may_see_study_clip(user, name: str) -> bool:
    """Whether ``user`` may fetch ``name``, a clip cut for study items (``studyclips/``): the
    project's admins, reviewers and researchers may, and a participant with an unanswered trial of
    an item that plays it (``Item.payload["media"]``: a video's clip, or a clip of a life log's
    segment). Nobody else."""
    from annotator.studies.models import Item
    from annotator.studies.selectors import open_trial_shows

    item = (Item.objects.filter(Q(payload__contains={"media": [{"name": name}]})
                                | Q(payload__contains={"media": [{"segments": [{"name": name}]}]}))
            .select_related("condition__study__project").first())
    if item is None:
        return False
    if access.role_in(user, item.condition.study.project) in access.OVERSEE_ROLES:
        return True
    return open_trial_shows(user, name)


# The files of one video's HLS rendition and timeline thumbnails (``media.streaming``):
# ``hls/<media key>/<first 16 hex of its sha256>/<file>`` and ``thumbs/<key>/<sha16>/<file>``, the key
# being the video's stored ``media_key`` (13 random letters; folders named by row id, from before
# handles, are not served: ``manage.py relocate_media`` moves them). Hundreds of segments need no row
# each: the prefix names the video. A file name is letters, digits, ``-``, ``_`` and ``.`` (no ``..``,
# no further folder).
_VIDEO_FILES = re.compile(r"^(?:hls|thumbs)/(" + handles.PATTERN + r")/([0-9a-f]{16})/([A-Za-z0-9][A-Za-z0-9_.-]{0,99})$")


def _video_of_prefixed(name: str) -> Video | None:
    """The video whose HLS or thumbnails folder holds ``name``, or None (an odd name included)."""
    match = _VIDEO_FILES.match(name)
    if match is None or ".." in name:
        return None
    key, sha16, _ = match.groups()
    return Video.objects.filter(media_key=key, sha256__startswith=sha16).select_related("project").first()


def _may_fetch(user, name: str) -> bool:
    """The access rule of ``serve_media``: frames by ``may_see_frame``; study clips by
    ``may_see_study_clip``; a video's rendition or poster, and the files of its HLS rendition and
    timeline thumbnails (by path prefix, ``_VIDEO_FILES``), by ``may_see_video``; anything else
    (originals included) by nobody."""
    if name.startswith("frames/"):
        return may_see_frame(user, name)
    if name.startswith("studyclips/"):
        return may_see_study_clip(user, name)
    if name.startswith(("hls/", "thumbs/")):
        video = _video_of_prefixed(name)
        return video is not None and may_see_video(user, video)
    video = Video.objects.filter(Q(rendition=name) | Q(poster=name)).select_related("project").first()
    # Never from a folder named by the video's row id (stored before handles, not yet moved by
    # relocate_media): the id would tell old footage from new (issue 20).
    return (video is not None and name.split("/")[1:2] != [str(video.pk)]
            and may_see_video(user, video))


def _may_fetch_for_link(request, name: str) -> bool:
    """A study link's anonymous participant (``studies.sessions``, no account) may fetch only a
    study clip or ordering frame of the trial they are on (``selectors.current_trials_show``):
    never a video's rendition, HLS files, posters or another trial's media."""
    from annotator.studies.selectors import current_trials_show
    from annotator.studies.sessions import participant_ids

    if not name.startswith(("studyclips/", "frames/")):
        return False
    return current_trials_show(participant_ids(request), name)


def token_or_login_required(view):
    """``login_required`` that also takes the API's token: a request with ``Authorization: Token
    <key>`` is that token's user (DRF's ``TokenAuthentication``: an unknown key or an inactive user
    is a 401 saying only that the token is not valid); without the header the session decides,
    redirecting anonymous visitors to the login page as before. GET only matters here (no CSRF)."""
    from rest_framework.authentication import TokenAuthentication
    from rest_framework.exceptions import AuthenticationFailed

    session_view = login_required(view)

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        try:
            found = TokenAuthentication().authenticate(request)
        except AuthenticationFailed:
            response = HttpResponse("invalid token\n", status=401, content_type="text/plain; charset=utf-8")
            response["WWW-Authenticate"] = "Token"
            return response
        if found is None:
            from annotator.studies.sessions import participant_ids

            if not request.user.is_authenticated and participant_ids(request):
                return view(request, *args, **kwargs)  # a study link's participant: serve_media checks their trial
            return session_view(request, *args, **kwargs)
        request.user = found[0]
        return view(request, *args, **kwargs)

    return wrapped


# Text files whose relative URLs must resolve under /files/ (HLS playlists, thumbnails WebVTT):
# served from here even with S3 storage, up to this size (bytes).
RELATIVE_URL_SUFFIXES = (".m3u8", ".vtt")
PROXIED_MAX_BYTES = 8 * 1024 * 1024


def _from_bucket(name: str, content_type: str) -> HttpResponse:
    """The answer for ``name`` in an S3 bucket, access already checked: the playlist or WebVTT text
    itself (``RELATIVE_URL_SUFFIXES``, at most ``PROXIED_MAX_BYTES``), else a 302 to a presigned GET
    URL valid ``AWS_QUERYSTRING_EXPIRE`` seconds. Neither may be cached (the URL expires)."""
    if name.endswith(RELATIVE_URL_SUFFIXES):
        with default_storage.open(name, "rb") as fh:
            data = fh.read(PROXIED_MAX_BYTES + 1)
        if len(data) > PROXIED_MAX_BYTES:
            raise Http404("no such media")
        response = HttpResponse(data, content_type=content_type)
    else:
        response = HttpResponseRedirect(default_storage.url(name))
    response["Cache-Control"] = "private, no-store"
    return response


@token_or_login_required
def serve_media(request, name: str):
    """Serve a stored rendition, poster or ordering frame to whoever ``_may_fetch`` it (a study
    link's participant: ``_may_fetch_for_link``) (404 to
    anyone else: whether it exists is not disclosed); honours one byte range. With S3 storage,
    ``_from_bucket`` answers once access is checked."""
    if request.user.is_authenticated:
        allowed = _may_fetch(request.user, name)
    else:
        allowed = _may_fetch_for_link(request, name)
    if not allowed or not default_storage.exists(name):
        raise Http404("no such media")
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    if not on_local_disk():
        return _from_bucket(name, content_type)
    size = default_storage.size(name)
    match = _RANGE.match(request.headers.get("Range", ""))
    if not match or (not match.group(1) and not match.group(2)):
        response = FileResponse(default_storage.open(name, "rb"), content_type=content_type)
        response["Accept-Ranges"] = "bytes"
        return response
    first, last = match.groups()
    if first:
        start, end = int(first), min(int(last) if last else size - 1, size - 1)
    else:  # suffix range: the last N bytes
        start, end = max(size - int(last), 0), size - 1
    if start >= size or start > end:
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        return response
    length = end - start + 1
    response = StreamingHttpResponse(_stream(default_storage.open(name, "rb"), start, length), status=206,
                                     content_type=content_type)
    response["Content-Range"] = f"bytes {start}-{end}/{size}"
    response["Content-Length"] = str(length)
    response["Accept-Ranges"] = "bytes"
    return response


@login_required
def video_list(request, slug: str):
    """The project's videos with their status and, for failed ones, the reason."""
    project, _ = access.require(request.user, access.VIEW_VIDEOS_ROLES, slug=slug)
    videos = Video.objects.filter(project=project).order_by("id")
    return render(request, "media/video_list.html", {"project": project, "videos": videos})
