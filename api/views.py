"""REST endpoints: the verification flow, QA pairs, QA types, progress, videos and the export, over
token or session auth.

The verification flow names rows by handles (``annotator.core.handles``): the unit payload's ids,
the unit in ``/api/units/<handle>/...``, the QA pairs in a submit and in its errors (issue 20).

Views parse input through a serializer, check the role (``annotator.access``) and call
one service or selector. Non-members get 404 (a project's existence is not disclosed), members
without the role 403. Views catch no errors: ``api.exceptions.handler`` maps them, and
``api.schema`` documents the error answers of every operation.
"""

import re

from django.core.exceptions import PermissionDenied
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.core import handles
from annotator.errors import DomainError, Invalid
from annotator.projects.models import Project
from annotator.qa import queue, selectors, services
from annotator.qa.downloads import jsonl_export_response
from annotator.qa.inputs import export_filters
from annotator.qa.models import QAPair, QAType, WorkUnit
from annotator.team import activity
from api import serializers as s
from api.exceptions import flatten

# 400, 401, 403 and 404 are added to every operation by ``api.schema``; 409 only where it applies.
REFUSED = {409: OpenApiResponse(description="Not yours any more, already submitted, or a version conflict.")}


def project_for(request, slug: str, roles: frozenset) -> Project:
    """The project, if the user is a member whose role is in ``roles`` (``access.require``)."""
    return access.require(request.user, roles, slug=slug)[0]


def unit_for(request, pk: int) -> WorkUnit:
    """A ``WorkUnit`` of id ``pk`` (decoded from the URL's unit handle) if the user may annotate in
    its project (404 / 403 otherwise, one query); the services load what they need of it."""
    project, _ = access.require(request.user, access.ANNOTATE_ROLES, unit_id=pk)
    return WorkUnit(pk=pk, project=project)


class QueueNextView(APIView):
    @extend_schema(
        request=None,
        responses={200: s.UnitOut, 204: OpenApiResponse(description="Nothing in the queue for you.")},
        summary="Claim the next work unit (or get back the one you hold)",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.ANNOTATE_ROLES)
        item = queue.claim_next(project, request.user)
        if item is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        activity.beat(project.pk, request.user.pk, item.pk, activity.CLAIM)  # active time (issue 20)
        return Response(selectors.unit_payload(item, request.user))


class UnitSubmitView(APIView):
    @extend_schema(
        request=s.SubmitIn,
        responses={200: s.SubmitOut, **REFUSED},
        summary="Submit your pass over a unit: decisions on its QA pairs and the QA pairs added (idempotent by key)",
    )
    def post(self, request, pk):
        unit = unit_for(request, pk)
        data = s.SubmitIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            result = services.submit_unit(
                unit.pk,
                request.user,
                idempotency_key=v["idempotency_key"],
                decisions=[services.Decision(**d) for d in v["decisions"]],
                additions=[services.Addition(**a) for a in v["added"]],
                time_spent_ms=v.get("time_spent_ms"),
            )
        except DomainError as exc:
            raise pair_handles_in(exc)
        return Response(
            {
                **result.as_dict(),
                "unit_id": handles.encode("unit", result.unit_id),
                "item_id": handles.encode("item", result.item_id),
            }
        )


_PAIR_ID = re.compile(r"(QA pair |qa\[)(\d{1,18})\b")


def pair_handles_in(exc: DomainError) -> DomainError:
    """``exc`` with QA pairs named by their handles, as the unit payload named them: in its fields'
    names (``qa[ID]``) and messages ("QA pair ID ...") and its conflicts' ``qa_id`` (issue 20: an
    annotator must not learn a row id, not even by sending a handle twice)."""

    def swap(text: str) -> str:
        return _PAIR_ID.sub(lambda m: m.group(1) + handles.encode("qa", int(m.group(2))), text)

    exc.errors = {swap(k): swap(v) if isinstance(v, str) else v for k, v in exc.errors.items()}
    exc.conflicts = [
        {**c, "qa_id": handles.encode("qa", c["qa_id"])} if isinstance(c.get("qa_id"), int) else c
        for c in exc.conflicts
    ]
    exc.args = (swap(str(exc)),)
    return exc


class UnitHeartbeatView(APIView):
    @extend_schema(
        request=None,
        responses={200: s.HeartbeatOut, **REFUSED},
        summary="Renew your lease on the unit while you work on it",
    )
    def post(self, request, pk):
        unit = unit_for(request, pk)
        item = queue.renew(unit.pk, request.user)
        activity.beat(item.project_id, request.user.pk, item.pk, activity.HEARTBEAT)  # active time (issue 20)
        return Response({"lease_expires_at": item.lease_expires_at})


class UnitSkipView(APIView):
    @extend_schema(
        request=s.SkipIn,
        responses={204: None, **REFUSED},
        summary="Skip the unit with a reason; it is never served to you again",
    )
    def post(self, request, pk):
        unit = unit_for(request, pk)
        data = s.SkipIn(data=request.data)
        data.is_valid(raise_exception=True)
        services.skip_unit(unit.pk, request.user, data.validated_data["reason"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class UnitAutosaveView(APIView):
    @extend_schema(
        request=s.AutosaveIn,
        responses={204: None, **REFUSED},
        summary="Keep your in-progress work on the unit (restored with the unit after a reload)",
    )
    def put(self, request, pk):
        unit = unit_for(request, pk)
        data = s.AutosaveIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        item_id = services.autosave(unit.pk, request.user, v["state"], v["client_saved_at_ms"], v["time_spent_ms"])
        activity.beat(unit.project.pk, request.user.pk, item_id, activity.AUTOSAVE)  # active time (issue 20)
        return Response(status=status.HTTP_204_NO_CONTENT)


def visible_pair(request, pk: int, roles: frozenset) -> QAPair:
    """QA pair ``pk`` for a reviewer, researcher or admin of its project whose role is in ``roles``
    (403 when it is not). Anyone else (an annotator included) gets one 404 whether the row exists or
    not: an annotator must not learn which row ids exist, or a gold copy made at their claim would
    show as new rows (issue 20)."""
    pair = QAPair.objects.select_related("project", "qa_type").filter(pk=pk).first()
    role = access.role_in(request.user, pair.project) if pair is not None else None
    if role not in access.OVERSEE_ROLES:
        raise Http404("no such QA pair")
    if role not in roles:
        raise PermissionDenied("your role in this project does not allow this")
    return pair


class QAPairView(APIView):
    def _pair(self, request, pk, roles) -> QAPair:
        return visible_pair(request, pk, roles)

    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        summary="A QA pair with its history: every revision, who, when, and word diffs",
    )
    def get(self, request, pk):
        pair = self._pair(request, pk, access.OVERSEE_ROLES)
        selectors.refuse_during_blind_pass(request.user, pair.unit_id)
        return Response({"qa_pair": s.QAPairOut(pair).data, "history": selectors.history(pair)})

    @extend_schema(
        request=s.QAEditIn,
        responses={200: s.QAPairOut, **REFUSED},
        summary="Edit a QA pair outside the queue, naming the version you saw (409 on a conflict)",
    )
    def patch(self, request, pk):
        pair = self._pair(request, pk, access.EDIT_QA_ROLES)
        data = s.QAEditIn(data=request.data)
        data.is_valid(raise_exception=True)
        pair = services.edit_qa_pair(pair.pk, request.user, **data.validated_data)
        return Response(s.QAPairOut(pair).data)


class QAFlagView(APIView):
    @extend_schema(
        request=s.QAFlagIn,
        responses={200: s.QAPairOut},
        summary="Flag a QA pair with a model's reason; its unit is served first",
    )
    def post(self, request, pk):
        pair = visible_pair(request, pk, access.MANAGE_ROLES)
        data = s.QAFlagIn(data=request.data)
        data.is_valid(raise_exception=True)
        pair = services.flag_qa_pair(pair.pk, **data.validated_data, user=request.user)
        return Response(s.QAPairOut(pair).data)


class QATypeListView(APIView):
    @extend_schema(responses={200: s.QATypeIO(many=True)}, summary="The project's QA types")
    def get(self, request, slug):
        project = project_for(request, slug, access.ALL_ROLES)
        return Response(s.QATypeIO(QAType.objects.filter(project=project), many=True).data)

    @extend_schema(request=s.QATypeIO, responses={201: s.QATypeIO}, summary="Define a QA type (admins)")
    def post(self, request, slug):
        project = project_for(request, slug, access.MANAGE_ROLES)
        data = s.QATypeIO(data=request.data, context={"project": project})
        data.is_valid(raise_exception=True)
        qa_type = data.save(project=project)
        return Response(s.QATypeIO(qa_type).data, status=201)


class PolicyView(APIView):
    @extend_schema(responses={200: s.PolicyIO}, summary="The project's queue policy")
    def get(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        return Response(s.PolicyIO(project).data)

    @extend_schema(
        request=s.PolicyIO,
        responses={200: s.PolicyIO},
        summary="Change the queue policy (admins); overlap applies to units not started yet",
    )
    def patch(self, request, slug):
        project = project_for(request, slug, access.MANAGE_ROLES)
        data = s.PolicyIO(data=request.data)
        data.is_valid(raise_exception=True)
        services.set_queue_policy(project, **data.validated_data)
        project.refresh_from_db()
        return Response(s.PolicyIO(project).data)


class ProgressView(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        summary="Progress per pass kind, annotator, QA type and video, and the kept share",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        return Response(selectors.progress(project))


@extend_schema(parameters=[s.VideoFilterIn])
class VideoListView(ListAPIView):
    """The project's videos, a page at a time, filtered by ``status``, ``source`` and
    ``illumination`` (an unknown value is a 400 naming the choices)."""

    serializer_class = s.VideoOut

    def get_queryset(self):
        project = project_for(self.request, self.kwargs["slug"], access.VIEW_VIDEOS_ROLES)
        params = self.request.query_params
        data = s.VideoFilterIn(data={k: params.get(k, "") for k in s.VideoFilterIn().fields})
        if not data.is_valid():
            raise Invalid("the video filters have errors", errors=flatten(data.errors))
        filters = {k: v for k, v in data.validated_data.items() if v}
        return selectors.project_videos(project).filter(**filters)


class ExportView(APIView):
    @extend_schema(
        parameters=[s.ExportFilterIn],
        responses={(200, "application/jsonl"): OpenApiTypes.STR},
        summary="Stream the project's verified QA pairs as JSONL (admins only)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.EXPORT_ROLES)
        return jsonl_export_response(project, export_filters(request.query_params))
