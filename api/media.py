"""Videos in by API: upload a file (multipart), or register an object already in the S3 bucket.

Both ingest through ``media.services`` (``ingest_file`` / ``register_stored``): deduplicated by
SHA-256 within the project (the existing video answers 200), probed and decode-checked, the
transcode queued on commit (a new video answers 201, ``status`` ``processing``). A file ffmpeg
cannot read is recorded as a ``failed`` video with the reason in ``error`` (201 when new, 200 when
that content had already failed), as the ``ingest`` command records it. Project admins only, as
only the people who run the platform may run ``ingest``.

An upload is streamed to a temporary file under ``MEDIA_WORK_DIR`` as it arrives
(``BoundedUploadHandler``): never whole in memory, and refused with 413 as soon as the body passes
``MEDIA_MAX_UPLOAD_BYTES``. One that stops arriving for REQUEST_BODY_TIMEOUT_S seconds is cut off
with 408 (``gunicorn.conf.py``, ``api.exceptions.body_cut_off``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import APIException
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.errors import Invalid
from annotator.media import services, workfiles
from annotator.media.models import Video
from api import serializers as s
from api.exceptions import flatten
from api.views import VideoListView, project_for

# Room for the multipart framing and the manifest fields around the file, bytes.
MULTIPART_SLACK = 1 << 20
FILENAME_MAX = 255  # Video.filename


class PayloadTooLarge(APIException):
    status_code = 413
    default_detail = "the upload is too large"
    default_code = "too_large"


class WorkDirUploadedFile(UploadedFile):
    """An upload being written to a temporary file under ``MEDIA_WORK_DIR`` (deleted when closed;
    Django closes a request's files when its response is done)."""

    def __init__(self, name, content_type, charset, content_type_extra=None):
        suffix = Path(name).suffix.lower()
        if len(suffix) > 10 or not suffix[1:].isalnum():
            suffix = ""
        file = tempfile.NamedTemporaryFile(suffix=".upload" + suffix, dir=workfiles.work_root())
        super().__init__(file, name, content_type, 0, charset, content_type_extra)

    def temporary_file_path(self) -> str:
        return self.file.name

    def close(self):
        try:
            return self.file.close()
        except FileNotFoundError:
            pass


class BoundedUploadHandler(FileUploadHandler):
    """Writes every file part straight to a ``WorkDirUploadedFile`` in the chunks Django reads
    (64 KiB), and raises ``PayloadTooLarge`` once a body announced, or a file received, is over
    ``MEDIA_MAX_UPLOAD_BYTES`` (the rest of the body is then never read)."""

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        limit = settings.MEDIA_MAX_UPLOAD_BYTES
        if content_length and content_length > limit + MULTIPART_SLACK:
            raise PayloadTooLarge(f"the upload is {content_length} bytes; the limit is {limit} bytes per video")
        return None

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.received = 0
        self.file = WorkDirUploadedFile(self.file_name, self.content_type, self.charset, self.content_type_extra)

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > settings.MEDIA_MAX_UPLOAD_BYTES:
            self.file.close()
            raise PayloadTooLarge(f"the file is over the limit of {settings.MEDIA_MAX_UPLOAD_BYTES} bytes per video")
        self.file.write(raw_data)
        return None

    def file_complete(self, file_size):
        self.file.seek(0)
        self.file.size = file_size
        return self.file


class ManifestFieldsIn(serializers.Serializer):
    """A video's metadata as a manifest gives it (``media.manifest``); blank or absent means unset."""

    source = serializers.ChoiceField(choices=Video.Source.choices, required=False, allow_blank=True)
    illumination = serializers.ChoiceField(choices=Video.Illumination.choices, required=False, allow_blank=True)
    difficulty = serializers.ChoiceField(choices=Video.Difficulty.choices, required=False, allow_blank=True)
    view = serializers.ChoiceField(choices=Video.View.choices, required=False, allow_blank=True)
    domain = serializers.CharField(max_length=100, required=False, allow_blank=True)  # Video.domain
    scenario = serializers.CharField(max_length=200, required=False, allow_blank=True)  # Video.scenario

    METADATA = ("source", "illumination", "difficulty", "view", "domain", "scenario")

    def metadata(self) -> dict[str, str]:
        """The validated metadata given (blank values left out)."""
        return {k: v for k, v in self.validated_data.items() if k in self.METADATA and v}


class VideoUploadIn(ManifestFieldsIn):
    file = serializers.FileField(
        max_length=FILENAME_MAX,
        allow_empty_file=True,
        help_text="The video file, sent as multipart/form-data; at most MEDIA_MAX_UPLOAD_BYTES.",
    )


class VideoRegisterIn(ManifestFieldsIn):
    key = serializers.CharField(
        max_length=services.KEY_MAX,
        trim_whitespace=False,
        help_text="The object's key in the configured bucket (not under the platform's own "
        "prefixes originals/, renditions/, hls/, thumbs/, frames/, studyclips/, ...).",
    )


def _answer(result: services.IngestResult, metadata: dict[str, str], request) -> Response:
    """The ingested video (``VideoOut``), with ``metadata`` set on it: 201 for a new row (queued, or
    recorded as failed), 200 for content the project already had. A failure that made no row (no
    such file, too large) is a 400.

    The metadata is set here rather than passed to ingest as a manifest entry: an entry also
    replaces a video's ``annotations`` and ``extra``, which a re-upload of known content would
    then wipe."""
    if result.video_id is None:
        raise Invalid(f"could not ingest {result.path}: {result.reason}", errors={"file": result.reason})
    if metadata:
        Video.objects.filter(pk=result.video_id).update(**metadata)
    video = Video.objects.get(pk=result.video_id)
    already = result.outcome == "duplicate" or result.reason.startswith("already ingested")
    return Response(s.VideoOut(video, context={"request": request}).data, status=200 if already else 201)


INGESTED = {
    200: OpenApiResponse(
        s.VideoOut,
        description="The project already has this content (same SHA-256): that video "
        "(status failed, with its error, if it had failed).",
    ),
    201: OpenApiResponse(
        s.VideoOut,
        description="A new video: processing (its transcode queued), or failed with the "
        "reason in error when ffmpeg cannot read it.",
    ),
}


class VideoListUploadView(VideoListView):
    """``GET``: the project's videos (``VideoListView``); ``POST``: upload one (multipart)."""

    parser_classes = [MultiPartParser]

    def initialize_request(self, request, *args, **kwargs):
        # Before authentication: a session's CSRF check reads request.POST, which parses the body.
        if request.method == "POST":
            request.upload_handlers = [BoundedUploadHandler(request)]
        return super().initialize_request(request, *args, **kwargs)

    def perform_authentication(self, request):
        # A signed-in session's CSRF check reads the body (request.POST) and swallows a read error, so
        # a stalled upload would be answered "CSRF token missing": read it first for such sessions
        # and let ``api.exceptions.body_cut_off`` answer (408). A token's holder is known before any
        # byte of the body is read, and anyone else is refused with the body unread.
        django_request = request._request
        if request.method == "POST" and getattr(getattr(django_request, "user", None), "is_authenticated", False):
            django_request.POST  # noqa: B018 (parses the multipart body; UnreadablePostError if cut off)
        super().perform_authentication(request)

    @extend_schema(
        request={"multipart/form-data": VideoUploadIn},
        responses={
            **INGESTED,
            413: OpenApiResponse(description="The upload is over MEDIA_MAX_UPLOAD_BYTES."),
            408: OpenApiResponse(description="The upload stalled: nothing arrived for REQUEST_BODY_TIMEOUT_S."),
        },
        summary="Upload a video (admins): deduplicated by SHA-256, probed, its transcode queued",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.MANAGE_ROLES)
        data = VideoUploadIn(data=request.data)
        if not data.is_valid():
            raise Invalid("the upload has errors; nothing was saved", errors=flatten(data.errors))
        upload = data.validated_data["file"]
        name = os.path.basename(upload.name.replace("\\", "/")).strip() or "upload"
        if any(ord(c) < 32 for c in name):
            raise Invalid("the file name has control characters", errors={"file": "control characters in the name"})
        result = services.ingest_file(project, Path(upload.temporary_file_path()), filename=name)
        return _answer(result, data.metadata(), request)


class VideoRegisterView(APIView):
    @extend_schema(
        request=VideoRegisterIn,
        responses=INGESTED,
        summary="Register a video already in the S3 bucket by its key (admins; STORAGE_BACKEND=s3 only)",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.MANAGE_ROLES)
        data = VideoRegisterIn(data=request.data)
        if not data.is_valid():
            raise Invalid("the registration has errors; nothing was saved", errors=flatten(data.errors))
        key = data.validated_data["key"]
        result = services.register_stored(project, key)
        return _answer(result, data.metadata(), request)
