"""REST endpoints of pipeline runs (issue 10, "Progress"): list and start a project's runs, read one
run's progress report, cancel and resume it, and list the project's model servers.

Admins and researchers start, cancel and resume runs; reviewers read them; annotators get 403 and
non-members 404 (``annotator.access``). Runs are started by ``annotator.drafts.runs.start``,
the one entry point the ``draft`` command and the runs page use too; the reports are
``annotator.drafts.selectors``'. A model server's key is never answered: only the name of the
environment variable that holds it.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.core.params import PARAM_KEY_MAX, PARAMS_MAX_CHARS, PARAMS_MAX_KEYS, check_params
from annotator.core.validators import StorableJSONField, storable_json
from annotator.drafts import runs, selectors
from annotator.drafts.models import DraftRun
from annotator.drafts.pipelines import stage_names
from annotator.errors import Conflict, Invalid
from api.exceptions import flatten
from api.views import project_for

PAGE_MAX = 100
SERVER_NAME_MAX = 64  # ModelServer.name

READERS_ONLY = OpenApiResponse(description="Only the project's admins, reviewers and researchers see runs.")
RUNNERS_ONLY = OpenApiResponse(description="Only the project's admins and researchers start, cancel and resume runs.")


def run_for(request, pk: int, roles: frozenset) -> DraftRun:
    """Run ``pk`` if the user's role in its project is in ``roles`` (404 for no such run or a
    non-member, 403 for a member whose role does not allow it)."""
    run = get_object_or_404(DraftRun.objects.select_related("project", "created_by"), pk=pk)
    project_for(request, run.project.slug, roles)
    return run


# ------------------------------------------------------------------------------ shapes


class RunVideosOut(serializers.Serializer):
    total = serializers.IntegerField()
    queued = serializers.IntegerField()
    running = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()


class RunServerOut(serializers.Serializer):
    server = serializers.CharField()
    model = serializers.CharField()


STATUS_HELP = "queued, running, done, failed (some videos failed) or cancelled."


class RunRowOut(serializers.Serializer):
    run = serializers.IntegerField(help_text="The run's id.")
    pipeline = serializers.CharField()
    status = serializers.CharField(help_text=STATUS_HELP)
    error = serializers.CharField(allow_blank=True, help_text="Why the whole run failed ('' otherwise).")
    qa_type = serializers.CharField(allow_blank=True)
    servers = serializers.DictField(child=RunServerOut(), help_text="Stage -> the server and model it calls.")
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    videos = RunVideosOut(help_text="Videos of the run by status.")
    drafts = serializers.IntegerField(help_text="Drafts written so far.")
    calls = serializers.IntegerField(help_text="Model calls, cache hits included.")
    cache_hits = serializers.IntegerField()
    errors = serializers.IntegerField(help_text="Calls that failed (and were retried, or failed their video).")
    cost_usd = serializers.FloatField(help_text="Estimated cost in US dollars.")


class RunListOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="Runs matching, over all pages.")
    results = RunRowOut(many=True, help_text="Newest first.")


class RunStageCallsOut(serializers.Serializer):
    calls = serializers.IntegerField()
    errors = serializers.IntegerField()
    cache_hits = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost_usd = serializers.FloatField()
    latency_ms_mean = serializers.IntegerField(
        allow_null=True, help_text="Mean latency (ms) of requests sent (cache hits excluded); null when none."
    )


class RunFailureOut(serializers.Serializer):
    video = serializers.CharField(help_text="The video's file name.")
    stage = serializers.CharField(allow_blank=True, help_text="The stage it failed at ('' if not at a stage).")
    error = serializers.CharField()


class RunFailedCallOut(serializers.Serializer):
    id = serializers.IntegerField()
    video = serializers.CharField()
    stage = serializers.CharField(allow_blank=True)
    attempt = serializers.IntegerField()
    error = serializers.CharField(help_text="e.g. malformed: ..., rate_limited: ..., timeout: ...")
    at = serializers.DateTimeField()


class RunServerDetailOut(RunServerOut):
    base_url = serializers.CharField()


class RunOut(serializers.Serializer):
    run = serializers.IntegerField(help_text="The run's id.")
    pipeline = serializers.CharField()
    status = serializers.CharField(help_text=STATUS_HELP)
    error = serializers.CharField(allow_blank=True)
    qa_type = serializers.CharField(allow_blank=True)
    servers = serializers.DictField(child=RunServerDetailOut(), help_text="Stage -> the server it calls.")
    params = serializers.DictField(help_text="The run's parameters, as the pipeline checked them.")
    videos = RunVideosOut()
    drafts = serializers.IntegerField()
    summary = serializers.DictField(
        child=serializers.FloatField(),
        help_text="The pipeline's counts summed over videos (e.g. clips, questions, flagged).",
    )
    calls = serializers.DictField(child=RunStageCallsOut(), help_text="Per stage.")
    cost_usd = serializers.FloatField(help_text="Estimated cost in US dollars.")
    failures = RunFailureOut(many=True, help_text="Failed videos, newest first (at most 50).")
    failed_calls = RunFailedCallOut(
        many=True, help_text=f"The latest failed model calls (at most {selectors.FAILED_CALLS})."
    )
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class RunStartedOut(RunOut):
    queued = serializers.IntegerField(help_text="Videos queued.")
    skipped = serializers.DictField(child=serializers.IntegerField(), help_text="Videos left out, by reason.")


class RunResumedOut(RunOut):
    queued = serializers.IntegerField(help_text="Failed and cancelled videos queued again.")


class RunListQuery(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=DraftRun.Status.values, required=False, help_text="Only runs of this status."
    )
    limit = serializers.IntegerField(
        min_value=1, max_value=PAGE_MAX, required=False, default=20, help_text=f"At most {PAGE_MAX} runs."
    )
    offset = serializers.IntegerField(min_value=0, max_value=10**9, required=False, default=0)


class RunStartIn(serializers.Serializer):
    pipeline = serializers.CharField(
        max_length=40, help_text="templates, llm, egonight, vudg, egoexobench_checks or import."
    )
    server = serializers.CharField(
        max_length=SERVER_NAME_MAX,
        required=False,
        allow_blank=True,
        default="",
        help_text="The model server of every stage (by name).",
    )
    stage_servers = serializers.DictField(
        child=serializers.CharField(max_length=SERVER_NAME_MAX),
        required=False,
        default=dict,
        help_text="Stage -> server name, overriding server for that stage.",
    )
    qa_type = serializers.SlugField(
        max_length=64,
        required=False,
        allow_blank=True,
        default="",
        help_text="llm: the QA type asked for (default open_ended); egonight: only this type.",
    )
    params = StorableJSONField(
        required=False,
        default=dict,
        help_text=f"The pipeline's parameters (see docs/researcher.md), a JSON object of at most "
        f"{PARAMS_MAX_KEYS} keys and {PARAMS_MAX_CHARS} characters; not the server's "
        "URL, model or key, nor a file.",
    )

    def validate_stage_servers(self, value):
        if len(value) > len(stage_names()):
            raise serializers.ValidationError(f"at most {len(stage_names())} stages")
        for stage in value:
            if len(stage) > PARAM_KEY_MAX:
                raise serializers.ValidationError(f"a stage name has at most {PARAM_KEY_MAX} characters")
            storable_json(stage, "stage")
        return value

    def validate_params(self, value):
        try:
            return check_params(value)
        except Invalid as exc:
            raise serializers.ValidationError(str(exc)) from None


class ModelServerOut(serializers.Serializer):
    name = serializers.CharField()
    base_url = serializers.CharField()
    model = serializers.CharField()
    key_env = serializers.CharField(
        allow_blank=True,
        help_text="The environment variable holding the key (the key "
        "itself is never shown); '' for a server that needs none.",
    )
    concurrency = serializers.IntegerField(help_text="Requests in flight at most, across all workers.")
    timeout_s = serializers.FloatField()
    price_prompt_per_mtok = serializers.FloatField(help_text="USD per million prompt tokens.")
    price_completion_per_mtok = serializers.FloatField(help_text="USD per million completion tokens.")


def _query(params) -> dict:
    data = RunListQuery(data={k: params[k] for k in RunListQuery().fields if k in params})
    if not data.is_valid():
        raise Invalid("the query has errors", errors=flatten(data.errors))
    return data.validated_data


# ------------------------------------------------------------------------------ views


class RunListView(APIView):
    @extend_schema(
        parameters=[RunListQuery],
        responses={200: RunListOut, 403: READERS_ONLY},
        summary="The project's pipeline runs, newest first, a page at a time (limit, offset), each with its "
        "status, videos done, failed and queued, drafts, calls, cache hits and cost (admins, "
        "reviewers, researchers)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        q = _query(request.query_params)
        count, rows = selectors.run_rows(project, status=q.get("status"), limit=q["limit"], offset=q["offset"])
        return Response({"count": count, "results": rows})

    @extend_schema(
        request=RunStartIn,
        responses={
            201: RunStartedOut,
            403: RUNNERS_ONLY,
            400: OpenApiResponse(
                description="Unknown pipeline, server or stage, a stage without a server, or bad "
                "parameters; nothing was started."
            ),
            409: OpenApiResponse(
                description="No video of the project needs this pipeline's work (the reasons are in `errors`)."
            ),
        },
        summary="Start a pipeline run over the project's videos, with a server for every stage (admins, researchers); "
        "a worker does the work: follow it with GET /api/runs/{id}/",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.RESEARCH_ROLES)
        data = RunStartIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        launch = runs.start(
            project,
            v["pipeline"],
            server=v["server"],
            stage_servers=v["stage_servers"],
            params=v["params"],
            qa_type=v["qa_type"],
            user=request.user,
        )
        if launch.run is None:
            why = ", ".join(f"{n} {reason}" for reason, n in launch.skipped.items()) or "the project has no video"
            raise Conflict(
                f"nothing to draft: no video needs this pipeline's work ({why})",
                errors={f"skipped.{reason}": str(n) for reason, n in launch.skipped.items()},
            )
        run = DraftRun.objects.select_related("created_by").get(pk=launch.run.pk)
        return Response({**selectors.run_report(run), "queued": launch.queued, "skipped": launch.skipped}, status=201)


class RunView(APIView):
    @extend_schema(
        responses={200: RunOut, 403: READERS_ONLY},
        summary="A run's progress: videos by status, drafts, calls per stage (calls, errors, cache hits, "
        "tokens, cost, mean latency), failed videos and the latest failed calls (admins, reviewers, "
        "researchers)",
    )
    def get(self, request, pk):
        return Response(selectors.run_report(run_for(request, pk, access.OVERSEE_ROLES)))


class RunCancelView(APIView):
    @extend_schema(
        request=None,
        responses={200: RunOut, 403: RUNNERS_ONLY, 409: OpenApiResponse(description="The run is finished already.")},
        summary="Cancel a queued or running run: videos not started are cancelled at once, videos in flight "
        "stop before their next model call and write nothing (admins, researchers)",
    )
    def post(self, request, pk):
        run = runs.cancel(run_for(request, pk, access.RESEARCH_ROLES))
        return Response(selectors.run_report(run))


class RunResumeView(APIView):
    @extend_schema(
        request=None,
        responses={
            200: RunResumedOut,
            403: RUNNERS_ONLY,
            409: OpenApiResponse(
                description="The run is queued, running or done, or has no failed or cancelled video."
            ),
        },
        summary="Resume a failed or cancelled run: its failed and cancelled videos are queued again, and "
        "stages that succeeded before are answered from the cache (admins, researchers)",
    )
    def post(self, request, pk):
        run = run_for(request, pk, access.RESEARCH_ROLES)
        queued = runs.resume(run)
        run.refresh_from_db()
        return Response({**selectors.run_report(run), "queued": queued})


class ModelServerListView(APIView):
    @extend_schema(
        responses={200: ModelServerOut(many=True), 403: READERS_ONLY},
        summary="The project's model servers (name, URL, model, concurrency, prices; the key's environment "
        "variable by name, never the key) (admins, reviewers, researchers)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        return Response(ModelServerOut(selectors.model_servers(project), many=True).data)
