"""REST endpoint that builds a life log (X-LeBench, seed 002 Sec. 3) from videos of the project, as
the ``lifelog_build`` command does from a manifest (``annotator.media.lifelogs.build_life_log``):
parts named by video id, placed at virtual seconds after the log's ``start``, in time order. Only
admins build them (as they make other groups); every member reads them through the groups API.
Every problem is a 400 naming the part (``parts[i]``) in plain words, and nothing is written.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.errors import Invalid
from annotator.media import lifelogs
from annotator.media.models import Video
from api.views import project_for


class WallClockField(serializers.DateTimeField):
    """A datetime kept as given: DRF would convert an offset to the server's zone, and the life
    log's clock labels (local wall-clock time, X-LeBench seed 002 Sec. 3) with it."""

    def enforce_timezone(self, value):
        return value


class LifeLogPartIn(serializers.Serializer):
    video = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="A video id of the project.")
    offset_s = serializers.FloatField(
        min_value=0.0,
        max_value=lifelogs.MAX_SPAN_S,
        help_text="Virtual seconds after the log's start at which the part begins.",
    )
    summary = serializers.CharField(
        max_length=4000,
        required=False,
        allow_blank=True,
        default="",
        help_text="What happens in the part (summary ordering, seed 002 App. C.4).",
    )


class LifeLogIn(serializers.Serializer):
    name = serializers.CharField(max_length=lifelogs.MAX_NAME, help_text="Unique in the project.")
    start = WallClockField(help_text="The log's wall-clock start, ISO 8601 (kept with its offset, or naive, as given).")
    parts = serializers.ListField(
        child=LifeLogPartIn(),
        min_length=1,
        max_length=lifelogs.MAX_PARTS,
        help_text=f"1 to {lifelogs.MAX_PARTS} parts in time order; they may not overlap.",
    )


class LifeLogPartOut(serializers.Serializer):
    position = serializers.IntegerField()
    video_id = serializers.IntegerField()
    filename = serializers.CharField()
    offset_s = serializers.FloatField()
    duration_s = serializers.FloatField()
    clock = serializers.CharField(help_text="Wall-clock start, HH:MM:SS (+Nd past the first day).")
    summary = serializers.CharField()


class LifeLogGapOut(serializers.Serializer):
    start_s = serializers.FloatField()
    end_s = serializers.FloatField()
    duration_s = serializers.FloatField()


class LifeLogOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    start = serializers.CharField(help_text="ISO 8601.")
    span_s = serializers.FloatField(help_text="Virtual seconds from the start to the end of the last part.")
    outcome = serializers.ChoiceField(choices=["created", "unchanged", "rebuilt"])
    parts = LifeLogPartOut(many=True)
    gaps = LifeLogGapOut(many=True)


class LifeLogBuildView(APIView):
    @extend_schema(
        request=LifeLogIn,
        responses={201: LifeLogOut, 200: LifeLogOut},
        summary="Build a life log from videos of the project placed at virtual times (admins)",
    )
    def post(self, request, slug):
        """201 when built, 200 when the same log already existed (``unchanged``) or was rebuilt."""
        project = project_for(request, slug, access.MANAGE_ROLES)
        data = LifeLogIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        shas = dict(
            Video.objects.filter(project=project, pk__in=[p["video"] for p in v["parts"]]).values_list("pk", "sha256")
        )
        rows = []
        for i, part in enumerate(v["parts"]):
            if part["video"] not in shas:
                raise Invalid(
                    f"parts[{i}]: no video {part['video']} in project {project.slug}",
                    errors={f"parts[{i}].video": "not a video of this project"},
                )
            rows.append(
                lifelogs.LogRow(
                    where=f"parts[{i}]",
                    sha256=shas[part["video"]],
                    offset_s=part["offset_s"],
                    summary=part["summary"].strip(),
                )
            )
        try:
            result = lifelogs.build_life_log(project, v["name"], rows, start=v["start"], ingest=False)
        except lifelogs.LifeLogError as exc:
            raise Invalid(
                exc.problems[0] if len(exc.problems) == 1 else f"{len(exc.problems)} problems: {exc.problems[0]} ...",
                errors={"parts": "\n".join(exc.problems)},
            ) from None
        body = lifelogs.timeline(result.group)
        out = {key: body[key] for key in ("id", "name", "start", "span_s", "gaps")}
        out["parts"] = [
            {k: p[k] for k in ("position", "video_id", "filename", "offset_s", "duration_s", "clock", "summary")}
            for p in body["parts"]
        ]
        out["outcome"] = result.outcome
        return Response(LifeLogOut(out).data, status=201 if result.outcome == "created" else 200)
