"""One stimulus, two subjects (issue 18): what a QA pair shows, as an ordered list of labelled media.

A study item's media (the participant's players) and a model's input (the frames sent, each video's
introduced by its label) are both made from the ``Stimulus`` this module builds, so a person and a
model always get the same videos, views, labels, ranges and order:

- **labelled videos** (``QAPair.videos``: query, reference and candidate videos whose options name
  them, EgoExoBench seed 001 Fig. 2): each video under exactly its label, over its own range;
- **ego-exo sets** (EgoExoBench seed 001 Sec. 3): every view of the set, ego then exo 1..N
  (``media.selectors.ordered_members``), each over the pair's clip in its own time (member time =
  ego time + the member's sync offset), clamped to its footage; played in sync;
- **day-night pairs of a paired QA type** (EgoNight seed 000 Sec. 3.2): the day and the night video
  over the clip, the night shifted by its offset; played in sync;
- **life logs** (X-LeBench seed 002 Sec. 3): one medium in virtual time over the pair's clip (virtual
  seconds after the log's start), made of the segments of the parts the range covers (gaps have
  none), with the log's wall clock at the range's start;
- anything else: the pair's clip of its own video, "Video 1".

Times are seconds: of the medium's video for a video, virtual seconds of the log for a life log
(its segments' ``start_s``/``end_s`` are seconds of the part's own video).
"""

from __future__ import annotations

from dataclasses import dataclass, field

LAYOUTS = ("single", "sync", "labelled", "life_log")


@dataclass(frozen=True)
class Segment:
    """A recorded stretch of a life-log medium: seconds ``start_s``..``end_s`` of part video
    ``video_id``, which the log shows from virtual second ``virtual_start_s``."""

    video_id: int
    start_s: float
    end_s: float
    virtual_start_s: float


@dataclass(frozen=True)
class Medium:
    """One labelled medium of a stimulus. ``kind`` is ``video`` (``video_id`` over ``start_s``..
    ``end_s`` of that video, ``offset_s`` its sync offset in a set) or ``life_log`` (virtual seconds
    ``start_s``..``end_s`` of log ``group_id``, ``segments`` in time order, ``clock_start`` the wall
    clock at ``start_s``, "HH:MM:SS")."""

    label: str
    kind: str
    start_s: float
    end_s: float
    video_id: int | None = None
    offset_s: float = 0.0
    group_id: int | None = None
    segments: tuple[Segment, ...] = ()
    clock_start: str = ""

    @property
    def ranges(self) -> list[tuple[int, float, float]]:
        """The (video id, start_s, end_s) ranges of footage this medium shows, in order."""
        if self.kind == "life_log":
            return [(s.video_id, s.start_s, s.end_s) for s in self.segments]
        return [(self.video_id, self.start_s, self.end_s)]


@dataclass(frozen=True)
class Stimulus:
    """What a QA pair shows: its ``layout`` (one of ``LAYOUTS``: ``sync`` media are views of one
    moment, played together; ``labelled`` media are separate videos named by the options) and its
    ``media`` in order."""

    layout: str
    media: tuple[Medium, ...] = field(default_factory=tuple)

    @property
    def labels(self) -> list[str]:
        return [m.label for m in self.media]


def _clamped(start_s: float, end_s: float, duration_s: float | None) -> tuple[float, float]:
    start, end = max(0.0, start_s), max(0.0, end_s)
    if duration_s:
        end = min(end, duration_s)
    return start, end


def life_log_medium(group, start_s: float, end_s: float, *, label: str = "Life log") -> Medium:
    """The medium of virtual seconds ``start_s``..``end_s`` of life log ``group``: the parts the
    range covers, each cut to the covered local range (two queries)."""
    from annotator.media import lifelogs

    segments = []
    for part in lifelogs.parts_of(group):
        a, b = max(start_s - part.offset_s, 0.0), min(end_s - part.offset_s, part.duration_s)
        if b > a:
            segments.append(Segment(part.video_id, round(a, 3), round(b, 3), round(part.offset_s + a, 3)))
    return Medium(
        label=label,
        kind="life_log",
        start_s=start_s,
        end_s=end_s,
        group_id=group.pk,
        segments=tuple(segments),
        clock_start=lifelogs.clock(lifelogs.log_start(group), start_s),
    )


def of_pair(pair) -> Stimulus:
    """The stimulus of QA pair ``pair`` (see the module docstring for each set kind). Reads the
    pair's unit's group and its members (prefetch ``unit__group__members__video`` to save queries)."""
    from annotator.media.models import VideoGroup, VideoGroupMember
    from annotator.media.selectors import member_label, ordered_members

    if pair.videos:
        return Stimulus(
            "labelled",
            tuple(
                Medium(
                    label=str(v.get("label", "")),
                    kind="video",
                    video_id=v.get("video_id"),
                    start_s=float(v["start_s"]),
                    end_s=float(v["end_s"]),
                )
                for v in pair.videos
            ),
        )
    group = pair.unit.group if pair.unit_id and pair.unit.group_id else None
    if group is not None and group.kind == VideoGroup.Kind.LIFE_LOG:
        return Stimulus("life_log", (life_log_medium(group, pair.clip_start_s, pair.clip_end_s),))
    members = ordered_members(group.members.all()) if group is not None else []
    if (
        group is not None
        and group.kind == VideoGroup.Kind.EGO_EXO
        or (
            members
            and pair.qa_type.paired
            and {m.role for m in members} <= {VideoGroupMember.Role.DAY, VideoGroupMember.Role.NIGHT}
        )
    ):
        media = []
        for m in members:
            a, b = _clamped(pair.clip_start_s + m.offset_s, pair.clip_end_s + m.offset_s, m.video.duration_s)
            media.append(
                Medium(
                    label=member_label(m.role, m.position),
                    kind="video",
                    video_id=m.video_id,
                    start_s=a,
                    end_s=b,
                    offset_s=m.offset_s,
                )
            )
        return Stimulus("sync", tuple(media))
    return Stimulus(
        "single",
        (
            Medium(
                label="Video 1", kind="video", video_id=pair.video_id, start_s=pair.clip_start_s, end_s=pair.clip_end_s
            ),
        ),
    )


def problem(stimulus: Stimulus, videos: dict, *, max_clip_s: float | None = None) -> str:
    """Why ``stimulus`` cannot be rendered, in plain words ('' when it can): a medium with no video
    or no footage in its range, a video that is not ready or has no stored file, a range longer
    than ``max_clip_s`` seconds. ``videos``: video id -> Video for every id the stimulus names."""
    from annotator.media.models import Video

    if not stimulus.media:
        return "it shows no video"
    for medium in stimulus.media:
        ranges = medium.ranges
        if not ranges:
            return f"{medium.label}: nothing is recorded in its range"
        for video_id, a, b in ranges:
            video = videos.get(video_id)
            if video is None:
                return f"{medium.label}: its video is gone"
            if video.status != Video.Status.READY or not (video.rendition.name or video.original.name):
                return f"{medium.label}: its video is not ready"
            if b - a <= 0:
                return f"{medium.label}: its range is empty"
            if max_clip_s is not None and b - a > max_clip_s:
                return f"{medium.label}: a range of {b - a:.0f} s is longer than {max_clip_s:.0f} s"
    return ""


def video_ids(stimulus: Stimulus) -> set[int]:
    """Every video id the stimulus shows footage of."""
    return {v for m in stimulus.media for v, _, _ in m.ranges}


def to_json(stimulus: Stimulus, names: dict[tuple, str] | None = None) -> dict:
    """The stimulus as stored on a study item (``{"layout", "media": [...]}``), each range with the
    storage ``name`` of its cut clip from ``names`` ((video id, start_s, end_s) -> name) when given.
    Server-side only: it holds video ids and times."""
    names = names or {}
    media = []
    for m in stimulus.media:
        if m.kind == "life_log":
            media.append(
                {
                    "label": m.label,
                    "kind": m.kind,
                    "start_s": m.start_s,
                    "end_s": m.end_s,
                    "group_id": m.group_id,
                    "clock_start": m.clock_start,
                    "segments": [
                        {
                            "video_id": s.video_id,
                            "start_s": s.start_s,
                            "end_s": s.end_s,
                            "virtual_start_s": s.virtual_start_s,
                            "name": names.get((s.video_id, s.start_s, s.end_s), ""),
                        }
                        for s in m.segments
                    ],
                }
            )
        else:
            media.append(
                {
                    "label": m.label,
                    "kind": m.kind,
                    "video_id": m.video_id,
                    "start_s": m.start_s,
                    "end_s": m.end_s,
                    "offset_s": m.offset_s,
                    "name": names.get((m.video_id, m.start_s, m.end_s), ""),
                }
            )
    return {"layout": stimulus.layout, "media": media}


def from_json(data: dict) -> Stimulus:
    """The ``Stimulus`` stored by ``to_json`` (study items built before issue 18 hold only clip names
    and labels: their media come back with no video, and ``problem`` says so)."""
    media = []
    for m in data.get("media") or []:
        if m.get("kind") == "life_log":
            media.append(
                Medium(
                    label=m["label"],
                    kind="life_log",
                    start_s=m["start_s"],
                    end_s=m["end_s"],
                    group_id=m.get("group_id"),
                    clock_start=m.get("clock_start", ""),
                    segments=tuple(
                        Segment(s["video_id"], s["start_s"], s["end_s"], s["virtual_start_s"]) for s in m["segments"]
                    ),
                )
            )
        else:
            media.append(
                Medium(
                    label=m.get("label", ""),
                    kind="video",
                    video_id=m.get("video_id"),
                    start_s=float(m.get("start_s", 0.0)),
                    end_s=float(m.get("end_s", 0.0)),
                    offset_s=float(m.get("offset_s", 0.0)),
                )
            )
    return Stimulus(data.get("layout") or ("single" if len(media) == 1 else "labelled"), tuple(media))
