"""REST endpoint of the benchmark report (issue 18, part 5): humans beside models per split, with 95%
intervals and paired comparisons (``annotator.reports.selectors.build``). Only the project's admins,
reviewers and researchers read it. Every query parameter has a bound; an unknown field, preset,
metric, study or evaluation is a 400 with the reason in words."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.reports import presets, selectors
from annotator.reports.records import FIELDS
from api.views import project_for

OVERSEERS_ONLY = OpenApiResponse(description="Only the project's admins, reviewers and researchers read the report.")
BAD_QUERY = OpenApiResponse(
    description="An unknown split field, preset, metric, study or evaluation, or a number "
    "out of bounds; the body says which."
)


class ReportQuery(serializers.Serializer):
    study = serializers.ListField(
        child=serializers.CharField(max_length=100), max_length=selectors.SOURCES_MAX, required=False, default=list
    )
    evaluation = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=selectors.SEED_MAX),
        max_length=selectors.SOURCES_MAX,
        required=False,
        default=list,
    )
    by = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    preset = serializers.ChoiceField(choices=presets.choices(), required=False, allow_blank=True, default="")
    metric = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    seed = serializers.IntegerField(min_value=0, max_value=selectors.SEED_MAX, required=False, default=0)
    resamples = serializers.IntegerField(
        min_value=selectors.RESAMPLES_MIN, max_value=selectors.RESAMPLES_MAX, required=False, default=1000
    )


class ReportCellOut(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    ci = serializers.ListField(child=serializers.FloatField(), allow_null=True, help_text="[low, high], 95%.")
    n = serializers.IntegerField()


class ReportPairedOut(serializers.Serializer):
    diff = serializers.FloatField(allow_null=True, help_text="Human minus model, mean over the keys both answered.")
    ci = serializers.ListField(child=serializers.FloatField(), allow_null=True, help_text="Percentile bootstrap, 95%.")
    p = serializers.FloatField(allow_null=True, help_text="Two-sided paired permutation (sign-flip) test.")
    n = serializers.IntegerField(help_text="Keys both answered.")


class ReportRowOut(serializers.Serializer):
    split = serializers.DictField(help_text="Split field -> value (text, seconds, null; 'all' on the last row).")
    cells = serializers.DictField(child=ReportCellOut(), help_text="Column ('human' or a model) -> its cell.")
    paired = serializers.DictField(child=ReportPairedOut(), help_text="Model column -> human minus model.")


class ReportTableOut(serializers.Serializer):
    title = serializers.CharField()
    metric = serializers.CharField()
    metric_words = serializers.CharField()
    range = serializers.ListField(child=serializers.FloatField(allow_null=True))
    by = serializers.ListField(child=serializers.CharField())
    by_words = serializers.ListField(child=serializers.CharField())
    columns = serializers.ListField(child=serializers.CharField())
    rows = ReportRowOut(many=True)


class BenchmarkReportOut(ReportTableOut):
    title = None
    tables = ReportTableOut(many=True)
    preset = serializers.CharField(allow_null=True)
    studies = serializers.ListField(child=serializers.CharField())
    evaluations = serializers.ListField(child=serializers.IntegerField())
    seed = serializers.IntegerField()
    n_resamples = serializers.IntegerField()
    confidence = serializers.FloatField()
    intervals = serializers.CharField()


class ReportView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "by",
                str,
                description=f"Split fields, comma-separated (at most {selectors.BY_MAX}): "
                f"{', '.join(FIELDS)}; subtask = qa_type.",
            ),
            OpenApiParameter(
                "study",
                str,
                many=True,
                description="A study's name (repeatable). With no study and no "
                "evaluation: every ready study and finished evaluation.",
            ),
            OpenApiParameter("evaluation", int, many=True, description="An evaluation's id (repeatable)."),
            OpenApiParameter(
                "preset", str, enum=presets.choices(), description="A paper's table layout (not with by)."
            ),
            OpenApiParameter("metric", str, description="The metric (default: the first study kind's primary metric)."),
            OpenApiParameter("seed", int, description="Seed of the bootstrap and the permutation test (default 0)."),
            OpenApiParameter(
                "resamples",
                int,
                description=f"Resamples, {selectors.RESAMPLES_MIN}-{selectors.RESAMPLES_MAX} (default 1000).",
            ),
        ],
        responses={200: BenchmarkReportOut, 400: BAD_QUERY, 403: OVERSEERS_ONLY},
        summary="The benchmark report: per split cell, people and each model with 95% intervals and n, and the paired "
        "human-minus-model difference with its bootstrap interval and permutation p (admins, reviewers, researchers)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        q = request.query_params
        query = ReportQuery(
            data={
                "study": q.getlist("study"),
                "evaluation": q.getlist("evaluation"),
                **{k: q[k] for k in ("by", "preset", "metric", "seed", "resamples") if k in q},
            }
        )
        if not query.is_valid():
            raise ValidationError(query.errors)
        v = query.validated_data
        report = selectors.build(
            project,
            studies=v["study"],
            evaluations=v["evaluation"],
            by=v["by"] or None,
            preset=v["preset"] or None,
            metric=v["metric"] or None,
            seed=v["seed"],
            n_resamples=v["resamples"],
        )
        return Response(report)
