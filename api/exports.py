"""REST endpoints of exports run as jobs (issue 21, "Export dialog"): start one, follow it, list the
project's recent ones. Project admins only (``access.EXPORT_ROLES``), as the streamed JSONL export.
The work is ``annotator.qa.export_jobs``; the zip is downloaded from the page's
``/projects/<slug>/exports/<id>/download/`` (``qa.views.export_file``)."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.errors import Invalid
from annotator.qa import export_jobs, exports
from api import serializers as s
from api.exceptions import flatten
from api.views import project_for


class ExportStartIn(s.ExportFilterIn):
    """An export to run: its format, its filters (``ExportFilterIn``) and whether clips are cut."""

    format = serializers.ChoiceField(choices=list(exports.FORMATS))
    with_media = serializers.BooleanField(default=False)


class ExportJobOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["queued", "running", "done", "failed"])
    format = serializers.CharField()
    label = serializers.CharField()
    with_media = serializers.BooleanField()
    filters = serializers.DictField(child=serializers.CharField())
    done = serializers.IntegerField(help_text="QA pairs written so far.")
    total = serializers.IntegerField(allow_null=True, help_text="QA pairs to write; null until counted.")
    rows = serializers.IntegerField(allow_null=True)
    empty = serializers.BooleanField(help_text="Finished with no QA pair matching: nothing to download.")
    size = serializers.IntegerField(help_text="The zip's size, bytes.")
    media_failures = serializers.ListField(child=serializers.CharField())
    error = serializers.CharField()
    created_at = serializers.CharField()
    download = serializers.CharField(allow_null=True)


def _out(project, job) -> dict:
    info = export_jobs.describe(job)
    info["download"] = reverse("export-file", args=[project.slug, job.pk]) if export_jobs.stored_file(job) else None
    return info


class ExportJobListView(APIView):
    @extend_schema(responses={200: ExportJobOut(many=True)}, summary="The project's recent exports (admins)")
    def get(self, request, slug):
        project = project_for(request, slug, access.EXPORT_ROLES)
        return Response([_out(project, job) for job in export_jobs.recent(project)])

    @extend_schema(
        request=ExportStartIn,
        responses={202: ExportJobOut, 409: OpenApiResponse(description="Too many exports running.")},
        summary="Start an export as a job (admins): format, filters, media",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.EXPORT_ROLES)
        data = ExportStartIn(data=request.data)
        if not data.is_valid():
            raise Invalid("the export has errors; nothing was started", errors=flatten(data.errors))
        values = dict(data.validated_data)
        fmt, with_media = values.pop("format"), values.pop("with_media")
        job_id = export_jobs.start(project, request.user, fmt, values, with_media=with_media)
        return Response(_out(project, export_jobs.job_of(project, job_id)), status=202)


class ExportJobView(APIView):
    @extend_schema(responses={200: ExportJobOut}, summary="One export's progress and download link (admins)")
    def get(self, request, slug, pk):
        project = project_for(request, slug, access.EXPORT_ROLES)
        return Response(_out(project, export_jobs.job_of(project, pk)))
