"""Video groups: day-night pairs and ego-exo view sets, checked and made."""

from __future__ import annotations

from django.db import transaction

from annotator.errors import Invalid
from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.projects.models import Project

# A group member must keep at least this much time after its offset (seconds), and an ego-exo set has
# at most this many exo views (EgoExoBench's synchronised sets have a handful of exo cameras, seed 001 Sec. 3.2).
GROUP_MIN_OVERLAP_S = 1.0
EGO_EXO_MAX_EXOS = 8
GROUP_OFFSET_MAX_S = 24 * 3600.0


def _check_members(kind: str, videos: list[Video], name: str) -> None:
    """Shared rules of every group: ``videos`` (at least one) all of one project, none twice, each
    probed and not failed, and ``name`` (when given) not taken in the project. Raises Invalid in
    plain words."""
    if len({v.project_id for v in videos}) != 1:
        raise Invalid(f"a {kind} group needs videos of one project", errors={"members": "videos of another project"})
    if len({v.pk for v in videos}) != len(videos):
        raise Invalid(
            f"a {kind} group needs different videos: a video is named twice", errors={"members": "a video twice"}
        )
    for v in videos:
        if v.status == Video.Status.FAILED or not v.duration_s:
            raise Invalid(
                f"video {v.filename} ({v.pk}) "
                + ("failed to ingest" if v.status == Video.Status.FAILED else "has not been probed yet"),
                errors={"members": "not usable"},
            )
    if name and VideoGroup.objects.filter(project_id=videos[0].project_id, name=name).exists():
        raise Invalid(f"this project already has a group named {name!r}", errors={"name": "taken"})


def make_day_night_group(
    day: Video, night: Video, *, offset_s: float = 0.0, name: str = "", params: dict | None = None
) -> VideoGroup:
    """Group two videos of a project as a day-night pair (EgoNight seed 000 Sec. 3.1): the same
    route lit and dark, the night one ``offset_s`` seconds later (night time = day time + offset).
    Returns the existing group if these two are already paired. Raises Invalid for videos of
    different projects, the same video twice, a video not probed or failed, a name taken, or a
    night video that is not at least 1 s long after the offset."""
    if day.project_id != night.project_id or day.pk == night.pk:
        raise Invalid(
            "a day-night pair needs two different videos of the same project", errors={"members": "two videos"}
        )
    if not 0 <= offset_s <= GROUP_OFFSET_MAX_S or (night.duration_s or 0) - offset_s < GROUP_MIN_OVERLAP_S:
        raise Invalid(
            f"offset {offset_s} s leaves less than 1 s of the night video", errors={"offset_s": "out of range"}
        )
    existing = (
        VideoGroup.objects.filter(kind=VideoGroup.Kind.DAY_NIGHT, members__video=day, members__role="day")
        .filter(members__video=night)
        .first()
    )
    if existing is not None:
        return existing
    name = name or f"{day.filename} / {night.filename}"
    _check_members("day-night", [day, night], name)
    with transaction.atomic():
        group = VideoGroup.objects.create(
            project_id=day.project_id, kind=VideoGroup.Kind.DAY_NIGHT, name=name, params=params or {}
        )
        VideoGroupMember.objects.bulk_create(
            [
                VideoGroupMember(group=group, video=day, role=VideoGroupMember.Role.DAY, offset_s=0.0),
                VideoGroupMember(group=group, video=night, role=VideoGroupMember.Role.NIGHT, offset_s=offset_s),
            ]
        )
    return group


def ego_exo_window(ego_duration_s: float, exos: list[tuple[float, float]]) -> tuple[float, float]:
    """The stretch of ego time (seconds) during which every view has footage: ``exos`` is
    [(exo duration_s, offset_s)], exo time = ego time + offset_s (seed 001 Sec. 3.2: synchronised
    multi-view recordings). Returns (start_s, end_s) in ego time; end <= start means no overlap."""
    start = max([0.0, *(-offset for _, offset in exos)])
    end = min([ego_duration_s, *(duration - offset for duration, offset in exos)])
    return start, end


def make_ego_exo_set(
    ego: Video, exos: list[tuple[Video, float]], *, name: str = "", params: dict | None = None
) -> VideoGroup:
    """Group an egocentric video and 1..``EGO_EXO_MAX_EXOS`` exocentric views of the same activity as
    an EgoExoBench multi-view set (seed 001 Sec. 3.2, "synchronized multi-view videos").

    ``exos`` is [(video, offset_s)] in display order: the exo at position k (1-based) shows
    ``ego time + offset_s`` (seconds; negative when that camera started later than the ego one).
    The ego member has position 0 and offset 0. Returns the existing set when one with this ego
    and these exos, in this order and with these offsets, exists (so a re-run is harmless).
    Raises Invalid (in plain words, nothing written) for: no exo or more than the maximum, videos
    of different projects, a video twice, a video not probed or failed, an offset beyond a day, a
    view that keeps less than ``GROUP_MIN_OVERLAP_S`` of common time with the ego video (naming
    it), or a name already taken in the project."""
    if not 1 <= len(exos) <= EGO_EXO_MAX_EXOS:
        raise Invalid(
            f"an ego-exo set needs 1 to {EGO_EXO_MAX_EXOS} exo videos (got {len(exos)})",
            errors={"members": f"1 to {EGO_EXO_MAX_EXOS} exo videos"},
        )
    _check_members("ego-exo", [ego, *(v for v, _ in exos)], "")
    for k, (video, offset) in enumerate(exos, start=1):
        if not -GROUP_OFFSET_MAX_S <= offset <= GROUP_OFFSET_MAX_S:
            raise Invalid(
                f"exo {k} ({video.filename}): offset {offset} s is more than a day",
                errors={f"exos[{k}].offset_s": "at most a day either way"},
            )
        start, end = ego_exo_window(ego.duration_s, [(video.duration_s, offset)])
        if end - start < GROUP_MIN_OVERLAP_S:
            raise Invalid(
                f"exo {k} ({video.filename}, {video.duration_s:g} s) at offset {offset:g} s keeps "
                f"{max(end - start, 0):g} s in common with the ego video ({ego.duration_s:g} s): at least "
                f"{GROUP_MIN_OVERLAP_S:g} s is needed",
                errors={f"exos[{k}].offset_s": "too little overlap"},
            )
    start, end = ego_exo_window(ego.duration_s, [(v.duration_s, o) for v, o in exos])
    if end - start < GROUP_MIN_OVERLAP_S:
        raise Invalid(
            f"the views keep {max(end - start, 0):g} s in common (ego time {start:g}-{end:g} s): at least "
            f"{GROUP_MIN_OVERLAP_S:g} s is needed",
            errors={"members": "too little common time"},
        )
    wanted = [(ego.pk, VideoGroupMember.Role.EGO, 0, 0.0)] + [
        (v.pk, VideoGroupMember.Role.EXO, k, float(o)) for k, (v, o) in enumerate(exos, start=1)
    ]
    for group in VideoGroup.objects.filter(
        kind=VideoGroup.Kind.EGO_EXO, members__video=ego, members__role=VideoGroupMember.Role.EGO
    ).prefetch_related("members"):
        if sorted((m.video_id, m.role, m.position, m.offset_s) for m in group.members.all()) == sorted(wanted):
            return group
    name = name or " + ".join([ego.filename, *(v.filename for v, _ in exos)])[:255]
    _check_members("ego-exo", [ego], name)
    with transaction.atomic():
        group = VideoGroup.objects.create(
            project_id=ego.project_id, kind=VideoGroup.Kind.EGO_EXO, name=name, params=params or {}
        )
        VideoGroupMember.objects.bulk_create(
            [
                VideoGroupMember(group=group, video_id=video_id, role=role, position=position, offset_s=offset)
                for video_id, role, position, offset in wanted
            ]
        )
    return group


def _day_night_from_members(project: Project, members: list[dict], name: str) -> VideoGroup:
    day = [m for m in members if m["role"] == VideoGroupMember.Role.DAY]
    night = [m for m in members if m["role"] == VideoGroupMember.Role.NIGHT]
    if len(day) != 1 or len(night) != 1 or len(members) != 2:
        raise Invalid("a day-night pair needs one day and one night member", errors={"members": "one day, one night"})
    if day[0].get("offset_s", 0.0):
        raise Invalid("the day member's offset is 0: give the night member's offset", errors={"members": "day offset"})
    return make_day_night_group(day[0]["video"], night[0]["video"], offset_s=night[0].get("offset_s", 0.0), name=name)


def _ego_exo_from_members(project: Project, members: list[dict], name: str) -> VideoGroup:
    ego = [m for m in members if m["role"] == VideoGroupMember.Role.EGO]
    exos = [m for m in members if m["role"] == VideoGroupMember.Role.EXO]
    if len(ego) != 1 or len(ego) + len(exos) != len(members):
        raise Invalid(
            "an ego-exo set needs one ego member and exo members only", errors={"members": "one ego, then exo"}
        )
    if ego[0].get("offset_s", 0.0):
        raise Invalid(
            "the ego member's offset is 0: the exo offsets are relative to it", errors={"members": "ego offset"}
        )
    return make_ego_exo_set(ego[0]["video"], [(m["video"], m.get("offset_s", 0.0)) for m in exos], name=name)


# How each kind of group is made from a list of members (``make_group``); a new kind adds its maker here.
GROUP_MAKERS = {VideoGroup.Kind.DAY_NIGHT: _day_night_from_members, VideoGroup.Kind.EGO_EXO: _ego_exo_from_members}


def make_group(project: Project, kind: str, members: list[dict], *, name: str = "") -> VideoGroup:
    """Make a group of ``kind`` in ``project`` from ``members`` [{video: id, role, offset_s}] (the
    groups API's input; exo members in display order), by the kind's maker in ``GROUP_MAKERS``.
    Raises Invalid in plain words: an unknown kind, a video id not of this project (naming the
    member), roles that do not fit the kind, or any rule of the kind's maker."""
    maker = GROUP_MAKERS.get(kind)
    if maker is None:
        raise Invalid(
            f"groups of kind {kind!r} cannot be made here; kinds: {', '.join(GROUP_MAKERS)}", errors={"kind": "unknown"}
        )
    videos = Video.objects.in_bulk([m["video"] for m in members])
    resolved = []
    for i, m in enumerate(members):
        video = videos.get(m["video"])
        if video is None or video.project_id != project.pk:
            raise Invalid(
                f"members[{i}]: no video {m['video']} in project {project.slug}",
                errors={f"members[{i}].video": "not a video of this project"},
            )
        resolved.append({**m, "video": video})
    return maker(project, resolved, name)
