"""API of onboarding and gold checks (issue 20, sections 1 and 2), for the project's admins: the
policy, every qualification attempt, the pauses and lifting one, and another try for a person.
Routes in ``urlpatterns`` below, included by ``api/urls.py``. Every number has a bound; bad input is
a 400 naming the field, a pause already lifted a 409, never a 5xx."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.errors import Invalid
from annotator.gold import selectors, services
from annotator.gold.models import GOLD_RATE_MAX, TRIES_MAX, WINDOW_MAX, Attempt, Pause
from api.exceptions import flatten
from api.views import project_for

ADMINS_ONLY = OpenApiResponse(description="Only the project's admins see attempts and pauses and change the policy.")


class GoldPolicyIO(serializers.Serializer):
    gold_rate = serializers.FloatField(
        min_value=0,
        max_value=GOLD_RATE_MAX,
        required=False,
        help_text=f"Share of claims served a gold unit, 0 to {GOLD_RATE_MAX}.",
    )
    threshold = serializers.FloatField(
        min_value=0,
        max_value=1,
        required=False,
        help_text="Share of decisions that must agree with the known ones: to qualify, "
        "and over the last K gold units not to be paused.",
    )
    tries = serializers.IntegerField(
        min_value=1, max_value=TRIES_MAX, required=False, help_text="Tries each person has at the qualification set."
    )
    window = serializers.IntegerField(
        min_value=1,
        max_value=WINDOW_MAX,
        required=False,
        help_text="K: gold units over which accuracy is judged for a pause.",
    )
    qualification_required = serializers.BooleanField(
        required=False, help_text="Annotators get real units once they pass."
    )
    seed = serializers.IntegerField(
        min_value=-(2**31),
        max_value=2**31 - 1,
        required=False,
        help_text="Seed of the gold draws and of the choice of verified units.",
    )


class QualificationAttemptOut(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")

    class Meta:
        model = Attempt
        fields = [
            "id",
            "user",
            "username",
            "number",
            "threshold",
            "started_at",
            "finished_at",
            "decisions",
            "agreed",
            "score",
            "passed",
        ]


class GoldPauseOut(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")
    lifted_by = serializers.CharField(source="lifted_by.username", allow_null=True, default=None)

    class Meta:
        model = Pause
        fields = [
            "id",
            "user",
            "username",
            "reason",
            "accuracy",
            "window",
            "threshold",
            "created_at",
            "lifted_at",
            "lifted_by",
            "note",
        ]


class GoldPauseLiftIn(serializers.Serializer):
    note = serializers.CharField(
        max_length=services.NOTE_MAX,
        required=False,
        allow_blank=True,
        default="",
        help_text="What was agreed with the person (kept with the pause).",
    )


class QualificationTryIn(serializers.Serializer):
    user = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="The person's user id.")


class QualificationTryOut(serializers.Serializer):
    user = serializers.IntegerField(source="user_id")
    extra_tries = serializers.IntegerField()


class GoldPolicyView(APIView):
    @extend_schema(
        responses={200: GoldPolicyIO, 403: ADMINS_ONLY}, summary="The project's gold and qualification policy"
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.MANAGE_ROLES)
        return Response(GoldPolicyIO(services.policy_of(project)).data)

    @extend_schema(
        request=GoldPolicyIO,
        responses={200: GoldPolicyIO, 403: ADMINS_ONLY},
        summary="Change the gold rate, threshold, tries, window K, the gate or the seed (admins)",
    )
    def patch(self, request, slug):
        project = project_for(request, slug, access.MANAGE_ROLES)
        data = GoldPolicyIO(data=request.data)
        if not data.is_valid():
            raise Invalid("the policy has errors; nothing was saved", errors=flatten(data.errors))
        return Response(GoldPolicyIO(services.set_policy(project, **data.validated_data)).data)


@extend_schema(
    parameters=[OpenApiParameter("user", int, description="Only this person's attempts (a user id).")],
    responses={200: QualificationAttemptOut(many=True), 403: ADMINS_ONLY},
)
class AttemptListView(ListAPIView):
    """Every qualification attempt of the project, newest first: the person, the try's number, when,
    and the share of decisions that agreed with the known ones against the threshold (admins)."""

    serializer_class = QualificationAttemptOut

    def get_queryset(self):
        project = project_for(self.request, self.kwargs["slug"], access.MANAGE_ROLES)
        qs = selectors.attempts(project)
        user = self.request.query_params.get("user", "")
        if user:
            if not (user.isascii() and user.isdigit() and len(user) < 19):
                raise Invalid("user must be a user id", errors={"user": "a whole number"})
            qs = qs.filter(user_id=int(user))
        return qs


@extend_schema(
    parameters=[
        OpenApiParameter(
            "state", str, enum=["open", "lifted"], description="Only open or only lifted pauses (default: all)."
        )
    ],
    responses={200: GoldPauseOut(many=True), 403: ADMINS_ONLY},
)
class PauseListView(ListAPIView):
    """The project's pauses, newest first: who, why (accuracy over the window against the threshold),
    when, and who lifted it with their note (admins)."""

    serializer_class = GoldPauseOut

    def get_queryset(self):
        project = project_for(self.request, self.kwargs["slug"], access.MANAGE_ROLES)
        state = self.request.query_params.get("state", "")
        if state not in ("", "open", "lifted"):
            raise Invalid("state must be open or lifted", errors={"state": "open or lifted"})
        return selectors.pauses(project, state)


class PauseLiftView(APIView):
    @extend_schema(
        request=GoldPauseLiftIn,
        responses={
            200: GoldPauseOut,
            403: ADMINS_ONLY,
            409: OpenApiResponse(description="The pause was already lifted."),
        },
        summary="Lift a pause: the person gets units again and their gold window starts afresh (admins)",
    )
    def post(self, request, pk):
        pause = get_object_or_404(Pause.objects.select_related("project"), pk=pk)
        project = project_for(request, pause.project.slug, access.MANAGE_ROLES)
        data = GoldPauseLiftIn(data=request.data)
        if not data.is_valid():
            raise Invalid("the request has errors; nothing was changed", errors=flatten(data.errors))
        services.lift_pause(pause.pk, request.user, data.validated_data["note"], project=project)
        return Response(GoldPauseOut(Pause.objects.select_related("user", "lifted_by").get(pk=pause.pk)).data)


class GrantTryView(APIView):
    @extend_schema(
        request=QualificationTryIn,
        responses={
            200: QualificationTryOut,
            403: ADMINS_ONLY,
            409: OpenApiResponse(description="The person has already qualified."),
        },
        summary="Give a person one more try at the qualification set than the policy allows (admins)",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.MANAGE_ROLES)
        data = QualificationTryIn(data=request.data)
        if not data.is_valid():
            raise Invalid("the request has errors; nothing was changed", errors=flatten(data.errors))
        return Response(QualificationTryOut(services.grant_try(project, data.validated_data["user"])).data)


urlpatterns: list = [
    path("projects/<slug:slug>/gold/policy/", GoldPolicyView.as_view(), name="api-gold-policy"),
    path("projects/<slug:slug>/qualification/attempts/", AttemptListView.as_view(), name="api-qualification-attempts"),
    path("projects/<slug:slug>/qualification/tries/", GrantTryView.as_view(), name="api-qualification-tries"),
    path("projects/<slug:slug>/gold/pauses/", PauseListView.as_view(), name="api-gold-pauses"),
    path("gold/pauses/<id:pk>/lift/", PauseLiftView.as_view(), name="api-gold-pause-lift"),
]
