"""REST endpoints of video groups (issue 11, "Media in and out by API: create groups"): list a
project's groups, read one, and make a day-night pair (EgoNight seed 000 Sec. 3.1) or an ego-exo
multi-view set (EgoExoBench seed 001 Sec. 3.2) from videos of the project.

Members are named by video id with their role and offset in seconds (``VideoGroup`` says what the
offset means per kind); exo members are shown in the order given. Every member of the project may
list and read groups (as they may list videos); only admins make them. Life logs are listed to the
people who run the project only (``visible_groups``), as their pages are. The rules of each kind are
``annotator.media.services.make_group``'s (a 400 in plain words, nothing written).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.errors import NotFound
from annotator.media import selectors, services
from annotator.media.models import VideoGroup, VideoGroupMember
from api.views import project_for

# The kinds this API makes and the roles their members take (a life-log maker adds its own).
KINDS = [VideoGroup.Kind.DAY_NIGHT, VideoGroup.Kind.EGO_EXO]
ROLES = [VideoGroupMember.Role.DAY, VideoGroupMember.Role.NIGHT, VideoGroupMember.Role.EGO, VideoGroupMember.Role.EXO]
MEMBERS_MAX = 1 + services.EGO_EXO_MAX_EXOS
NAME_MAX = 255  # VideoGroup.name


class GroupMemberIn(serializers.Serializer):
    video = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="A video id of the project.")
    role = serializers.ChoiceField(choices=ROLES, help_text="day and night (day_night); ego and exo (ego_exo).")
    offset_s = serializers.FloatField(
        min_value=-services.GROUP_OFFSET_MAX_S,
        max_value=services.GROUP_OFFSET_MAX_S,
        required=False,
        default=0.0,
        help_text="Seconds: night time = day time + offset; exo time = ego time + offset. 0 for day and ego.",
    )


class GroupIn(serializers.Serializer):
    kind = serializers.ChoiceField(choices=KINDS)
    name = serializers.CharField(
        max_length=NAME_MAX,
        required=False,
        allow_blank=True,
        default="",
        help_text="Unique in the project; made from the file names when blank.",
    )
    members = serializers.ListField(
        child=GroupMemberIn(),
        min_length=2,
        max_length=MEMBERS_MAX,
        help_text=f"2 to {MEMBERS_MAX} members; exo members in display order.",
    )


class GroupMemberOut(serializers.Serializer):
    video = serializers.IntegerField(source="video_id")
    filename = serializers.CharField(source="video.filename")
    role = serializers.CharField()
    position = serializers.IntegerField(help_text="0 for day, night and ego; 1..N for exo views.")
    label = serializers.SerializerMethodField(help_text='What players show: "ego", "exo 1", "day", "night".')
    offset_s = serializers.FloatField()

    def get_label(self, member) -> str:
        return selectors.member_label(member.role, member.position)


class GroupOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    name = serializers.CharField()
    params = serializers.JSONField()
    created_at = serializers.DateTimeField()
    members = serializers.SerializerMethodField(help_text="In display order: ego then exo 1..N, day then night.")

    @extend_schema_field(GroupMemberOut(many=True))
    def get_members(self, group) -> list[dict]:
        return GroupMemberOut(selectors.ordered_members(group.members.all()), many=True).data


def visible_groups(request, project):
    """``selectors.project_groups`` that ``request.user`` may read: all of them for the people who run
    the project (``access.OVERSEE_ROLES``); no life log for annotators. Annotators are the
    participants of the project's human-baseline studies, and a life log's params (its parts'
    summaries in true order, its start) and members (wall-clock offsets, file names) are the truth
    of the X-LeBench summary-ordering items (seed 002 App. C.4) built from it."""
    groups = selectors.project_groups(project)
    if access.role_in(request.user, project) not in access.OVERSEE_ROLES:
        groups = groups.exclude(kind=VideoGroup.Kind.LIFE_LOG)
    return groups


class GroupListView(ListAPIView):
    """The project's video groups, oldest first, a page at a time, with their members."""

    serializer_class = GroupOut

    def get_queryset(self):
        project = project_for(self.request, self.kwargs["slug"], access.VIEW_VIDEOS_ROLES)
        return visible_groups(self.request, project)

    @extend_schema(
        request=GroupIn,
        responses={201: GroupOut},
        summary="Make a day-night pair or an ego-exo set from videos of the project (admins)",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.MANAGE_ROLES)
        data = GroupIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        group = services.make_group(project, v["kind"], v["members"], name=v["name"].strip())
        return Response(GroupOut(selectors.project_groups(project).get(pk=group.pk)).data, status=201)


class GroupView(APIView):
    @extend_schema(responses={200: GroupOut}, summary="One video group with its members")
    def get(self, request, slug, pk):
        project = project_for(request, slug, access.VIEW_VIDEOS_ROLES)
        group = visible_groups(request, project).filter(pk=pk).first()
        if group is None:
            raise NotFound(f"no group {pk} in project {project.slug}")
        return Response(GroupOut(group).data)
