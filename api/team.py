"""API of annotator.team (issue 20, sections 5 and 6): per-annotator figures (admins and reviewers of the
project) and the pay report (admins). Its routes are in ``urlpatterns`` below, included by api/urls.py.

Periods are days ``from`` to ``to`` (YYYY-MM-DD, both included, UTC), each from 2000-01-01 to
2100-12-31; a bad, reversed or missing (where required) date is a 400 naming the field.
"""

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.errors import Invalid
from annotator.team import pay, selectors, stats
from api.exceptions import flatten
from api.views import project_for


def _day(name: str, required: bool) -> OpenApiParameter:
    return OpenApiParameter(
        name,
        OpenApiTypes.DATE,
        required=required,
        description=("First" if name == "from" else "Last") + " day, YYYY-MM-DD, included (UTC), "
        "2000-01-01 to 2100-12-31." + ("" if required else " Open without."),
    )


class PeriodQuery(serializers.Serializer):
    """``from`` and ``to`` as texts (bounded here; parsed and checked by ``team.selectors``)."""

    def get_fields(self):
        return {
            "from": serializers.CharField(max_length=10, required=False, allow_blank=True),
            "to": serializers.CharField(max_length=10, required=False, allow_blank=True),
        }


def period_from(request, *, required: bool):
    """The period of the query's ``from`` and ``to``, and the two dates as given ('' when open).
    Raises Invalid (400) naming the field."""
    q = request.query_params
    data = PeriodQuery(data={k: q[k] for k in ("from", "to") if k in q})
    if not data.is_valid():
        raise Invalid("the period has errors", errors=flatten(data.errors))
    v = data.validated_data
    first, last = selectors.parse_day(v.get("from"), "from"), selectors.parse_day(v.get("to"), "to")
    return selectors.period_of(first, last, required=required), v.get("from") or "", v.get("to") or ""


class GoldAccuracyOut(serializers.Serializer):
    value = serializers.FloatField(
        allow_null=True, help_text="Share of gold decisions right (null: none yet, or no gold app)."
    )
    ci = serializers.ListField(child=serializers.FloatField(), allow_null=True, help_text="[low, high], 95%.")
    n = serializers.IntegerField(allow_null=True, help_text="Gold decisions measured.")


class AnnotatorOut(serializers.Serializer):
    user = serializers.CharField()
    user_id = serializers.IntegerField()
    units = serializers.IntegerField(help_text="Real units of which the person submitted a pass in the period.")
    qa_pairs = serializers.IntegerField(help_text="Decisions (keep, modify, delete, add) in those passes.")
    active_s = serializers.FloatField(help_text="Active seconds: heartbeats, autosaves and submits, idle gaps removed.")
    gold_accuracy = GoldAccuracyOut()
    override_rate = serializers.FloatField(
        allow_null=True, help_text="Share of first-pass decisions a double-check changed."
    )
    agreement = serializers.FloatField(
        allow_null=True, help_text="Pairwise percent agreement with blind overlap peers."
    )
    rework_rate = serializers.FloatField(allow_null=True, help_text="From the review app (null without it).")
    passes = serializers.IntegerField()
    reported_s = serializers.FloatField(help_text="Time the verify page reported for those passes.")
    time_per_unit_s = serializers.FloatField(allow_null=True, help_text="Active seconds on real units per unit.")
    override_n = serializers.IntegerField(allow_null=True, help_text="First-pass decisions that were double-checked.")
    agreement_n = serializers.IntegerField(allow_null=True, help_text="(QA pair, peer) comparisons.")


class AnnotatorsOut(serializers.Serializer):
    annotators = AnnotatorOut(many=True)


class RateOut(serializers.Serializer):
    basis = serializers.ChoiceField(choices=["video", "unit", "hour"])
    basis_label = serializers.CharField()
    amount = serializers.CharField(help_text="Decimal, 2 places, as text.")
    currency = serializers.CharField()
    count_gold = serializers.BooleanField()
    count_qualification = serializers.BooleanField()
    count_rework = serializers.BooleanField()


class PayPersonOut(serializers.Serializer):
    user = serializers.CharField()
    user_id = serializers.IntegerField()
    units = serializers.IntegerField(help_text="Counted units first submitted by the person in the period.")
    videos = serializers.IntegerField(help_text="Videos of those units first worked on in the period.")
    active_s = serializers.IntegerField(help_text="Active seconds on counted units, whole.")
    active_hours = serializers.CharField(help_text="Active hours, 2 places, as text.")
    amount = serializers.CharField(allow_null=True, help_text="Decimal, 2 places, as text; null without a rate.")
    currency = serializers.CharField(allow_null=True)


class TotalOut(serializers.Serializer):
    amount = serializers.CharField()
    currency = serializers.CharField()


class PayOut(serializers.Serializer):
    project = serializers.CharField()
    to = serializers.CharField()
    rate = RateOut(allow_null=True)
    people = PayPersonOut(many=True)
    total = TotalOut(allow_null=True)

    def get_fields(self):
        return {"project": serializers.CharField(), "from": serializers.CharField(), **super().get_fields()}


class AnnotatorsView(APIView):
    @extend_schema(
        parameters=[_day("from", False), _day("to", False)],
        responses={200: AnnotatorsOut, 403: OpenApiResponse(description="Only the project's admins and reviewers.")},
        summary="Per-annotator figures over a period: units, QA pairs, active time, gold accuracy, override rate, "
        "agreement with overlap peers, rework rate (admins and reviewers)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.FIGURES_ROLES)
        period, _, _ = period_from(request, required=False)
        return Response(stats.annotators(project, period))


class PayView(APIView):
    @extend_schema(
        parameters=[_day("from", True), _day("to", True)],
        responses={200: PayOut, 403: OpenApiResponse(description="Only the project's admins.")},
        summary="The pay report over a period: per person units, videos, active hours, amount and currency (admins)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.MANAGE_ROLES)
        period, first, last = period_from(request, required=True)
        return Response({"project": project.slug, "from": first, "to": last, **pay.report(project, period)})


urlpatterns: list = [
    path("projects/<slug:slug>/annotators/", AnnotatorsView.as_view(), name="api-annotators"),
    path("projects/<slug:slug>/pay/", PayView.as_view(), name="api-pay"),
]
