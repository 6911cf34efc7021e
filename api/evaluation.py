"""REST endpoints of model evaluation: the leaderboard, starting and cancelling an evaluation, one
evaluation's report with its breakdown, the raw predictions (JSONL or CSV), and the human re-judge
of the LLM judge (draw the sample, take the next answer, record a verdict).

The people who run a project (admins, reviewers, researchers) see evaluations and re-judge;
admins and researchers start, cancel and draw samples; annotators get 403 and non-members 404.
Every number a client sends is bounded by its serializer (400 in plain words otherwise). The
writes are ``annotator.evaluation.runs`` and ``.rejudge``; the reads ``.selectors``.
"""

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.core.validators import BIGINT_MAX
from annotator.errors import Invalid, NotFound
from annotator.evaluation import rejudge, runs, selectors, study_items
from annotator.evaluation.models import (
    FRAMES_DEFAULT,
    FRAMES_MAX,
    FRAMES_MIN,
    Ablation,
    Evaluation,
    RejudgeItem,
    Rubric,
)
from annotator.studies.models import Study
from api.exceptions import flatten
from api.studies import FormatIsTheExports
from api.views import project_for

OVERSEERS_ONLY = OpenApiResponse(description="Only the project's admins, reviewers and researchers see evaluations.")
STATUS_HELP = "queued, running, done, failed (done, some items failed) or cancelled."


def evaluation_for(request, pk: int, roles: frozenset) -> Evaluation:
    """Evaluation ``pk`` if the user's role in its project is in ``roles`` (404 for non-members and
    unknown ids, 403 for other roles)."""
    evaluation = Evaluation.objects.select_related("project", "created_by").filter(pk=pk).first()
    if evaluation is None:
        raise NotFound("no such evaluation")
    project_for(request, evaluation.project.slug, roles)
    return evaluation


# ------------------------------------------------------------------------------ shapes


def _ci(**kw):
    return serializers.ListField(
        child=serializers.FloatField(),
        min_length=2,
        max_length=2,
        allow_null=True,
        help_text="95% interval [low, high]; null when it cannot be had.",
        **kw,
    )


class EvalHeadOut(serializers.Serializer):
    id = serializers.IntegerField()
    model = serializers.CharField(help_text="The model evaluated.")
    server = serializers.CharField(allow_null=True)
    base_url = serializers.CharField(allow_null=True)
    judge_model = serializers.CharField()
    judge_server = serializers.CharField(allow_null=True)
    rubric = serializers.CharField(help_text="egonight (seed 000 App. A.5.1) or vudg (seed 004 Sec. 3.4).")
    score_max = serializers.IntegerField(
        help_text="The judge score's top: 5 (egonight) or 10 (vudg: accuracy + relevance)."
    )
    frames = serializers.IntegerField(help_text="Frames sampled evenly over each clip.")
    qa_type = serializers.CharField(allow_blank=True, help_text="Only this QA type ('' for all).")
    prompt_version = serializers.CharField()
    status = serializers.CharField(help_text=STATUS_HELP)
    error = serializers.CharField(allow_blank=True)
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class EvalScoreOut(serializers.Serializer):
    n = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True)
    ci = _ci()


class EvalItemCountsOut(serializers.Serializer):
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    pending = serializers.IntegerField(help_text="Queued or running.")


class EvalRowOut(EvalHeadOut):
    items = EvalItemCountsOut()
    mcq_accuracy = EvalScoreOut(help_text="Multiple choice scored exactly (Wilson interval).")
    judge_accuracy = EvalScoreOut(help_text="Share of judged open answers the judge called correct (Wilson interval).")
    judge_score = EvalScoreOut(help_text="Mean judge score (Student t interval).")
    cost_usd = serializers.FloatField()


class EvalProportionOut(serializers.Serializer):
    n = serializers.IntegerField()
    k = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True)
    ci = _ci()


class EvalMeanOut(serializers.Serializer):
    n = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True)
    sd = serializers.FloatField(allow_null=True)
    ci = _ci()


class EvalSummaryOut(serializers.Serializer):
    items = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    pending = serializers.IntegerField()
    mcq = EvalProportionOut(help_text="Accuracy of multiple choice (Wilson).")
    judge_accuracy = EvalProportionOut(help_text="Open answers judged correct (Wilson).")
    judge_score = EvalMeanOut(help_text="Mean judge score (t interval).")
    judge_accuracy_score = EvalMeanOut(help_text="VUDG: mean accuracy 0-5.")
    judge_relevance_score = EvalMeanOut(help_text="VUDG: mean relevance 0-5.")


class EvalGroupOut(EvalSummaryOut):
    value = serializers.CharField(help_text="The group, e.g. night, or kept / modified_or_added.")


class EvalBreakdownOut(serializers.Serializer):
    qa_type = EvalGroupOut(many=True)
    illumination = EvalGroupOut(many=True)
    source = EvalGroupOut(many=True)
    provenance = EvalGroupOut(
        many=True, help_text="kept (machine, kept) against modified_or_added: EgoNight's judge-bias check."
    )


class EvalStatusCountsOut(serializers.Serializer):
    total = serializers.IntegerField()
    queued = serializers.IntegerField()
    running = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()


class EvalFailureOut(serializers.Serializer):
    prediction = serializers.IntegerField()
    qa_pair = serializers.IntegerField(allow_null=True)
    stage = serializers.CharField(allow_blank=True, help_text="predict or judge ('' before the model was asked).")
    error = serializers.CharField(allow_blank=True)


class EvalAgreementMetricOut(serializers.Serializer):
    value = serializers.FloatField()
    ci = serializers.ListField(child=serializers.FloatField(allow_null=True), min_length=2, max_length=2)
    n_items = serializers.IntegerField()


class EvalAgreementOut(serializers.Serializer):
    computed_at = serializers.DateTimeField()
    fresh = serializers.BooleanField(help_text="Computed after the last verdict.")
    percent_agreement = EvalAgreementMetricOut(allow_null=True)
    cohen_kappa = EvalAgreementMetricOut(allow_null=True)
    skipped = serializers.DictField(child=serializers.CharField(), help_text="Metric -> why it was not measured.")


class RejudgeStatusOut(serializers.Serializer):
    size = serializers.IntegerField(help_text="The size asked for.")
    seed = serializers.IntegerField()
    n_items = serializers.IntegerField(help_text="Answers drawn (at most size).")
    judged = serializers.IntegerField()
    right = serializers.IntegerField()
    wrong = serializers.IntegerField()
    rating_set = serializers.CharField()
    scope = serializers.CharField(help_text="The agreement scope, ratings:<rating set>.")
    percent_right = serializers.FloatField(allow_null=True)
    agreement = EvalAgreementOut(allow_null=True, help_text="The agreement engine's latest computation.")


class EvalReportOut(EvalHeadOut):
    items = EvalStatusCountsOut()
    cost_usd = serializers.FloatField()
    calls = serializers.IntegerField(help_text="Model calls stored (attempts and cache hits).")
    summary = EvalSummaryOut()
    breakdown = EvalBreakdownOut()
    failures = EvalFailureOut(many=True, help_text=f"At most {selectors.FAILURES_SHOWN}, newest first.")
    rejudge = RejudgeStatusOut(allow_null=True)


# ------------------------------------------------------------------------------ evaluations


class StartIn(serializers.Serializer):
    server = serializers.SlugField(max_length=64, help_text="The model server of the model evaluated.")
    model = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text="The model evaluated (default: the server's).",
    )
    frames = serializers.IntegerField(
        min_value=FRAMES_MIN,
        max_value=FRAMES_MAX,
        required=False,
        default=FRAMES_DEFAULT,
        help_text="Frames sampled evenly over each clip.",
    )
    qa_type = serializers.SlugField(max_length=64, required=False, allow_blank=True, default="")
    judge_server = serializers.SlugField(
        max_length=64,
        required=False,
        allow_blank=True,
        default="",
        help_text="The judge's server, with its model (default: server).",
    )
    rubric = serializers.ChoiceField(choices=Rubric.choices, required=False, default=Rubric.EGONIGHT)
    cache = serializers.BooleanField(
        required=False, default=True, help_text="Reuse stored answers to unchanged inputs (no cost)."
    )
    ablation = serializers.ChoiceField(
        choices=Ablation.choices,
        required=False,
        default="",
        help_text="An input ablation, recorded and reported as its own column.",
    )
    study = serializers.SlugField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="Evaluate on this study's scored items, with what its participants got; "
        "the answers are stored as a model participant of the study.",
    )
    frames_by_condition = serializers.DictField(
        child=serializers.IntegerField(min_value=FRAMES_MIN, max_value=FRAMES_MAX),
        required=False,
        default=dict,
        help_text='Study evaluations: frames per condition number, e.g. {"1": 4, "2": 8} (others get frames).',
    )


class EvaluationListView(APIView):
    @extend_schema(
        responses={200: EvalRowOut(many=True), 403: OVERSEERS_ONLY},
        summary="The leaderboard: every evaluation of the project, newest first, with its MCQ accuracy, "
        "judge accuracy and mean judge score with 95% intervals, and its cost (admins, reviewers, "
        "researchers)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        return Response(selectors.leaderboard(project))

    @extend_schema(
        request=StartIn,
        responses={
            201: EvalHeadOut,
            403: OpenApiResponse(description="Only admins and researchers start evaluations."),
        },
        summary="Evaluate a model on the project's verified QA pairs: multiple choice scored exactly, open answers "
        "judged by an LLM (a worker does it; poll the evaluation)",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.RESEARCH_ROLES)
        data = StartIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        if v["study"]:
            study = Study.objects.filter(project=project, name=v["study"]).first()
            if study is None:
                raise Invalid(f"project {project.slug} has no study {v['study']!r}", errors={"study": "unknown"})
            if len(v["frames_by_condition"]) > 1000 or not all(
                str(k).isdigit() and len(str(k)) <= 3 for k in v["frames_by_condition"]
            ):
                raise Invalid(
                    "frames_by_condition maps condition numbers to frames", errors={"frames_by_condition": "keys"}
                )
            spec = ",".join(f"{k}={n}" for k, n in v["frames_by_condition"].items()) or None
            evaluation = study_items.start(
                study,
                server=v["server"],
                model=v["model"],
                n_frames=v["frames"],
                frames=spec,
                judge_server=v["judge_server"],
                rubric=v["rubric"],
                ablation=v["ablation"],
                use_cache=v["cache"],
                user=request.user,
            )
        else:
            evaluation = runs.start(
                project,
                server=v["server"],
                model=v["model"],
                n_frames=v["frames"],
                qa_type=v["qa_type"],
                judge_server=v["judge_server"],
                rubric=v["rubric"],
                use_cache=v["cache"],
                ablation=v["ablation"],
                user=request.user,
            )
        return Response(selectors.evaluation_head(evaluation), status=201)


class EvaluationView(APIView):
    @extend_schema(
        responses={200: EvalReportOut, 403: OVERSEERS_ONLY},
        summary="One evaluation: progress, cost, scores with 95% intervals broken down by QA type, "
        "illumination, source and provenance, failures, and the re-judge's agreement",
    )
    def get(self, request, pk):
        return Response(selectors.report(evaluation_for(request, pk, access.OVERSEE_ROLES)))


class EvaluationCancelView(APIView):
    @extend_schema(
        request=None,
        responses={200: EvalHeadOut, 409: OpenApiResponse(description="The evaluation is finished already.")},
        summary="Cancel a queued or running evaluation (admins and researchers)",
    )
    def post(self, request, pk):
        evaluation = evaluation_for(request, pk, access.RESEARCH_ROLES)
        runs.cancel(evaluation)
        evaluation.refresh_from_db()
        return Response(selectors.evaluation_head(evaluation))


class PredictionsQuery(serializers.Serializer):
    format = serializers.ChoiceField(
        choices=list(selectors.EXPORT_FORMATS),
        required=False,
        default="jsonl",
        help_text="jsonl (one JSON object a line) or csv (lists as JSON text).",
    )


class PredictionsView(APIView):
    content_negotiation_class = FormatIsTheExports
    renderer_classes = [JSONRenderer]

    @extend_schema(
        parameters=[PredictionsQuery],
        responses={
            (200, "application/jsonl"): OpenApiTypes.STR,
            (200, "text/csv"): OpenApiTypes.STR,
            403: OVERSEERS_ONLY,
        },
        summary="Stream the raw predictions, one row per item: " + ", ".join(selectors.EXPORT_COLUMNS),
    )
    def get(self, request, pk):
        evaluation = evaluation_for(request, pk, access.OVERSEE_ROLES)
        query = PredictionsQuery(data={k: request.query_params[k] for k in ("format",) if k in request.query_params})
        if not query.is_valid():
            raise Invalid("format must be jsonl or csv", errors=flatten(query.errors))
        fmt = query.validated_data["format"]
        lines = selectors.jsonl_lines(evaluation) if fmt == "jsonl" else selectors.csv_lines(evaluation)
        response = StreamingHttpResponse(
            lines, content_type="application/jsonl; charset=utf-8" if fmt == "jsonl" else "text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="evaluation-{evaluation.pk}-predictions.{fmt}"'
        return response


# ------------------------------------------------------------------------------ re-judge


class RejudgeOut(serializers.Serializer):
    evaluation = serializers.IntegerField()
    sample = RejudgeStatusOut(allow_null=True, help_text="Null until a sample is drawn.")


class SampleIn(serializers.Serializer):
    size = serializers.IntegerField(
        min_value=rejudge.SIZE_MIN,
        max_value=rejudge.SIZE_MAX,
        required=False,
        default=rejudge.SIZE_DEFAULT,
        help_text="Judged open answers to draw.",
    )
    seed = serializers.IntegerField(
        min_value=0,
        max_value=BIGINT_MAX,
        required=False,
        allow_null=True,
        default=None,
        help_text="The draw's seed (recorded; random when absent).",
    )
    replace = serializers.BooleanField(
        required=False, default=False, help_text="Replace the evaluation's sample (its verdicts go with it)."
    )


class RejudgeView(APIView):
    @extend_schema(
        responses={200: RejudgeOut, 403: OVERSEERS_ONLY},
        summary="The re-judge sample of an evaluation: verdicts so far and the agreement engine's percent "
        "agreement and Cohen's kappa of the judge against people",
    )
    def get(self, request, pk):
        evaluation = evaluation_for(request, pk, access.OVERSEE_ROLES)
        return Response({"evaluation": evaluation.pk, "sample": rejudge.status(evaluation)})

    @extend_schema(
        request=SampleIn,
        responses={
            201: RejudgeOut,
            403: OpenApiResponse(description="Only admins and researchers draw samples."),
            409: OpenApiResponse(description="The evaluation has a sample already (send replace: true)."),
        },
        summary="Draw a seeded random sample of the evaluation's judged open answers for people to re-judge",
    )
    def post(self, request, pk):
        evaluation = evaluation_for(request, pk, access.RESEARCH_ROLES)
        data = SampleIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        rejudge.create_sample(evaluation, size=v["size"], seed=v["seed"], replace=v["replace"], user=request.user)
        return Response({"evaluation": evaluation.pk, "sample": rejudge.status(evaluation)}, status=201)


class RejudgeItemOut(serializers.Serializer):
    id = serializers.IntegerField()
    position = serializers.IntegerField(help_text="0-based place in the sample.")
    n_items = serializers.IntegerField()
    judged = serializers.IntegerField(help_text="Answers of the sample with a verdict.")
    question = serializers.CharField()
    truth = serializers.CharField(allow_blank=True, help_text="The ground-truth answer.")
    prediction = serializers.CharField(allow_blank=True, help_text="The model's answer.")
    qa_type = serializers.CharField()
    judge_label = serializers.CharField(help_text="correct or incorrect.")
    judge_score = serializers.IntegerField(allow_null=True)
    score_max = serializers.IntegerField()
    judge_accuracy = serializers.IntegerField(allow_null=True, help_text="VUDG only.")
    judge_relevance = serializers.IntegerField(allow_null=True, help_text="VUDG only.")
    judge_reason = serializers.CharField(allow_blank=True)
    verdict = serializers.CharField(allow_blank=True, help_text="right, wrong, or '' while open.")
    claimed_until = serializers.DateTimeField(allow_null=True)


def item_dict(item: RejudgeItem) -> dict:
    """An item of a re-judge sample as the reviewer sees it (``RejudgeItemOut``)."""
    p, sample = item.prediction, item.sample
    return {
        "id": item.pk,
        "position": item.position,
        "n_items": sample.n_items,
        "judged": sample.items.exclude(verdict="").count(),
        "question": p.question,
        "truth": p.truth,
        "prediction": p.prediction,
        "qa_type": p.qa_type,
        "judge_label": item.judge_label,
        "judge_score": p.judge_score,
        "score_max": sample.evaluation.score_max,
        "judge_accuracy": p.judge_accuracy,
        "judge_relevance": p.judge_relevance,
        "judge_reason": p.judge_reason,
        "verdict": item.verdict,
        "claimed_until": item.claimed_until,
    }


class RejudgeNextView(APIView):
    @extend_schema(
        request=None,
        responses={
            200: RejudgeItemOut,
            204: OpenApiResponse(description="Every answer of the sample has a verdict or is held by someone else."),
            403: OVERSEERS_ONLY,
        },
        summary="Take the next answer of the evaluation's re-judge sample (or the one you hold), held for you for "
        f"{rejudge.LEASE_S // 60} minutes",
    )
    def post(self, request, pk):
        evaluation = evaluation_for(request, pk, access.OVERSEE_ROLES)
        item = rejudge.next_item(rejudge.sample_for(evaluation), request.user)
        if item is None:
            return Response(status=204)
        return Response(item_dict(item))


class VerdictIn(serializers.Serializer):
    verdict = serializers.ChoiceField(
        choices=[RejudgeItem.Verdict.RIGHT, RejudgeItem.Verdict.WRONG],
        help_text="right: the judge's label is right; wrong: it is not.",
    )


class RejudgeVerdictView(APIView):
    @extend_schema(
        request=VerdictIn,
        responses={
            200: RejudgeItemOut,
            403: OVERSEERS_ONLY,
            409: OpenApiResponse(description="The answer has a verdict already, or someone else holds it."),
        },
        summary="Mark the judge's label of one re-judged answer right or wrong; the agreement engine's rating set "
        "is brought up to date and computed again",
    )
    def post(self, request, pk):
        item = RejudgeItem.objects.select_related("sample__evaluation__project").filter(pk=pk).first()
        if item is None:
            raise NotFound("no such answer in a re-judge sample")
        project_for(request, item.sample.evaluation.project.slug, access.OVERSEE_ROLES)
        data = VerdictIn(data=request.data)
        data.is_valid(raise_exception=True)
        rejudge.record(item.pk, request.user, data.validated_data["verdict"])
        return Response(item_dict(rejudge.item_for(item.sample.evaluation.project, item.pk)))
