"""Pages for videos, and serving stored media to logged-in members with HTTP range support.

Browsers seek in a video with ``Range`` requests; without 206 answers a <video> cannot jump to
a clip's start. For S3 storage the page links to the bucket's signed URLs instead and this view
is not used.
"""

import mimetypes
import re

from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.db.models import Q
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from annotator.media.models import Video
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


@login_required
def serve_media(request, name: str):
    """Serve a stored rendition or poster to members of the video's project; honours one byte range."""
    video = Video.objects.filter(Q(rendition=name) | Q(poster=name)).select_related("project").first()
    if video is None and name.startswith("frames/"):  # an ordering experiment's frame
        from annotator.experiments.models import Element

        element = Element.objects.filter(image=name).select_related("video__project").first()
        video = element.video if element else None
    if video is None or access.role_in(request.user, video.project) is None or not default_storage.exists(name):
        raise Http404("no such media")
    size = default_storage.size(name)
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
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
