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
import re

from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponse, HttpResponseRedirect, StreamingHttpResponse

from annotator.access import files
from annotator.media.services import on_local_disk

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
            if not request.user.is_authenticated and files.is_visitor(request):
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
    """Serve a stored rendition, poster or ordering frame to whoever may fetch it (``access.files``:
    the rule of the app that owns the file; for a study link's participant, the visitor rules) (404
    to anyone else: whether it exists is not disclosed); honours one byte range. With S3 storage,
    ``_from_bucket`` answers once access is checked."""
    if request.user.is_authenticated:
        allowed = files.may_fetch(request.user, name)
    else:
        allowed = files.visitor_may_fetch(request, name)
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
    response = StreamingHttpResponse(
        _stream(default_storage.open(name, "rb"), start, length), status=206, content_type=content_type
    )
    response["Content-Range"] = f"bytes {start}-{end}/{size}"
    response["Content-Length"] = str(length)
    response["Accept-Ranges"] = "bytes"
    return response
