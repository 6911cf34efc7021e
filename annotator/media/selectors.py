"""Reads for media shared by commands and the API: a video named by id or file name, and groups
with their members in display order."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from annotator.errors import Invalid, NotFound
from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.projects.models import Project

# Display order of a group's members: ego then exo 1..N, day then night, life-log parts by position.
ROLE_ORDER = {
    VideoGroupMember.Role.EGO: 0,
    VideoGroupMember.Role.DAY: 0,
    VideoGroupMember.Role.NIGHT: 1,
    VideoGroupMember.Role.EXO: 1,
    VideoGroupMember.Role.PART: 0,
}


def find_video(project: Project, ref: str | int) -> Video:
    """The project's video named by ``ref``: its id (digits) or its file name. Raises NotFound (no
    such video) or Invalid (a file name shared by several videos: name it by id)."""
    text = str(ref).strip()
    if text.isdigit():
        video = Video.objects.filter(project=project, pk=int(text)).first()
        if video is not None:
            return video
    named = list(Video.objects.filter(project=project, filename=text)[:2])
    if len(named) == 2:
        raise Invalid(
            f"several videos of {project.slug} are named {text!r}: name it by its id", errors={"video": "ambiguous"}
        )
    if not named:
        raise NotFound(f"no video {text!r} in project {project.slug}", errors={"video": "not found"})
    return named[0]


def member_label(role: str, position: int) -> str:
    """What a player shows for a member: "ego", "exo 1" .. "exo N", "day", "night", "part 1"."""
    return (
        f"{role} {position}"
        if role == VideoGroupMember.Role.EXO
        else (f"part {position + 1}" if role == VideoGroupMember.Role.PART else role)
    )


def ordered_members(members) -> list[VideoGroupMember]:
    """Group members (any iterable: ``group.members.all()``, a queryset) in display order:
    ``ROLE_ORDER``, then ``position`` (ego then exo 1..N; day then night; life-log parts in order)."""
    return sorted(members, key=lambda m: (ROLE_ORDER.get(m.role, 9), m.position))


def group_window(members) -> tuple[float, float]:
    """The stretch of the lead member's time (seconds; the day or ego video, whose offset is 0) in
    which every member of a day-night pair or an ego-exo set has footage, given the members with
    their videos loaded (member time = lead time + offset_s). See ``services.ego_exo_window``."""
    from annotator.media.services import ego_exo_window

    lead, *others = ordered_members(members)
    return ego_exo_window(lead.video.duration_s, [(m.video.duration_s, m.offset_s) for m in others])


def project_groups(project: Project) -> QuerySet[VideoGroup]:
    """The project's groups, oldest first, with members and their videos (two queries in all)."""
    members = Prefetch("members", queryset=VideoGroupMember.objects.select_related("video"))
    return VideoGroup.objects.filter(project=project).prefetch_related(members).order_by("id")
