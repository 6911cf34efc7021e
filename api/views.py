"""REST endpoints: the verification flow, the video list and the export, over token or session auth.

Views parse input, check the role (``annotator.projects.access``) and call one service or selector.
"""

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.projects import access
from annotator.projects.models import Project
from annotator.qa import queue, selectors, services
from annotator.qa.models import WorkUnit
from api import serializers as s


def project_for(request, slug: str, check) -> Project:
    """The project, if the user is a member whose role passes ``check``; 404 for non-members."""
    project = Project.objects.filter(slug=slug).first()
    if project is None or access.role_in(request.user, project) is None:
        raise NotFound("no such project")
    if not check(request.user, project):
        raise PermissionDenied("your role in this project does not allow this")
    return project


class QueueNextView(APIView):
    @extend_schema(
        request=None,
        responses={200: s.UnitOut, 204: OpenApiResponse(description="The queue is empty.")},
        summary="Claim the next work unit (or get back the one you hold)",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.can_annotate)
        unit = queue.claim_next(project, request.user)
        if unit is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(selectors.unit_payload(unit))


class UnitSubmitView(APIView):
    @extend_schema(
        request=s.SubmitIn,
        responses={200: s.SubmitOut, 400: OpenApiResponse(description="Per-field errors; nothing saved."),
                   409: OpenApiResponse(description="Unit done, leased to someone else, or key reused.")},
        summary="Submit the decisions on a unit's drafts and the QA pairs added (idempotent by key)",
    )
    def post(self, request, pk):
        unit = get_object_or_404(WorkUnit.objects.select_related("project"), pk=pk)
        project_for(request, unit.project.slug, access.can_annotate)
        data = s.SubmitIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            result = services.submit_unit(
                unit.pk, request.user,
                idempotency_key=v["idempotency_key"],
                decisions=[services.Decision(**d) for d in v["decisions"]],
                additions=[services.Addition(**a) for a in v["added"]],
                time_spent_ms=v.get("time_spent_ms"),
            )
        except services.SubmitError as exc:
            return Response({"detail": str(exc), "errors": exc.errors}, status=exc.status)
        return Response(result.as_dict())


class VideoListView(ListAPIView):
    serializer_class = s.VideoOut

    def get_queryset(self):
        project = project_for(self.request, self.kwargs["slug"], access.can_view_videos)
        return selectors.project_videos(project)


class ExportView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter(name, str, required=False) for name in ("qa_type", "provenance", "source", "illumination")],
        responses={(200, "application/jsonl"): OpenApiTypes.STR},
        summary="Stream the project's verified QA pairs as JSONL (admins only)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.can_export)
        return jsonl_export_response(project, request.query_params)


def jsonl_export_response(project: Project, params) -> StreamingHttpResponse:
    """A streamed JSONL download of ``verified_qa`` filtered by the query ``params``."""
    rows = selectors.verified_qa(project, **{k: params.get(k) or None for k in ("qa_type", "provenance", "source", "illumination")})
    response = StreamingHttpResponse(selectors.export_lines(rows), content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-verified-qa.jsonl"'
    return response
