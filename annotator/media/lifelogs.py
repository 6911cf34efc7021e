"""Life logs in virtual time (X-LeBench, seed 002 Sec. 3 and Sec. 3.1 Stage 3).

A life log is a ``VideoGroup(kind="life_log")``: its ``part`` members, ordered by ``position``
(0..n-1), are placed at virtual wall-clock time, ``offset_s`` seconds after the log's start
``params["start"]`` (an ISO 8601 datetime). Parts never overlap; the time between two parts is time
not recorded (a *gap*). X-LeBench's logs span 23 minutes to 16.4 hours; a log here may span at most
``MAX_SPAN_S`` (7 days).

This module holds:

- the virtual-time arithmetic (pure, no database): ``Part``, ``locate`` (virtual second -> part
  and local second), ``resume_at`` (the same, jumping a gap to the next part's start), ``to_virtual``
  and ``gaps``; ``static/js/virtual_player.js`` does the same in the browser;
- the manifest of a life log (``read_manifest``: JSONL or CSV, as ``annotator.media.manifest``)
  and ``build_life_log``, which the ``lifelog_build`` command calls (and an API can call with rows
  of its own), validating every row with its line number before writing anything.
"""

from __future__ import annotations

import bisect
import csv
import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path

from django.db import transaction

from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.projects.models import Project

MAX_SPAN_S = 7 * 24 * 3600.0  # a log may cover at most 7 days of virtual time
MAX_PARTS = 2000
OVERLAP_TOLERANCE_S = 1e-3  # container durations are given to the millisecond
MAX_NAME = 255


# ----------------------------------------------------------------------------- virtual time


@dataclass(frozen=True)
class Part:
    """One part of a life log: video ``video_id`` shown from virtual second ``offset_s`` (after the
    log's start) for ``duration_s`` seconds; ``position`` is its place among the parts (0-based)."""

    position: int
    video_id: int
    offset_s: float
    duration_s: float

    @property
    def end_s(self) -> float:
        """Virtual second at which the part ends."""
        return self.offset_s + self.duration_s


def locate(parts: list[Part], t: float) -> tuple[int, float] | None:
    """The part recorded at virtual second ``t`` and the local second in its video, as
    ``(index into parts, local seconds)``; None when ``t`` falls in a gap, before the first part or
    at/after the last one's end. A part covers ``[offset_s, end_s)``. ``parts`` sorted by offset."""
    starts = [p.offset_s for p in parts]
    i = bisect.bisect_right(starts, t) - 1
    if i < 0 or t >= parts[i].end_s:
        return None
    return i, t - parts[i].offset_s


def resume_at(parts: list[Part], t: float) -> tuple[int, float] | None:
    """Where playback from virtual second ``t`` goes on: ``locate(parts, t)`` when ``t`` is
    recorded, else the start of the next part (local second 0); None after the last part."""
    found = locate(parts, t)
    if found is not None:
        return found
    for i, p in enumerate(parts):
        if p.offset_s >= t:
            return i, 0.0
    return None


def to_virtual(parts: list[Part], index: int, local_s: float) -> float:
    """Virtual second of local second ``local_s`` of part ``index``. Raises IndexError."""
    return parts[index].offset_s + local_s


def gaps(parts: list[Part]) -> list[tuple[float, float]]:
    """Unrecorded stretches between consecutive parts, as (start, end) virtual seconds, in order
    (stretches shorter than ``OVERLAP_TOLERANCE_S`` are not gaps)."""
    return [(a.end_s, b.offset_s) for a, b in pairwise(parts) if b.offset_s - a.end_s > OVERLAP_TOLERANCE_S]


def parts_of(group: VideoGroup) -> list[Part]:
    """The parts of life log ``group`` by position (one query)."""
    rows = (
        VideoGroupMember.objects.filter(group=group, role=VideoGroupMember.Role.PART)
        .order_by("position")
        .values_list("position", "video_id", "offset_s", "video__duration_s")
    )
    return [Part(pos, vid, off, dur or 0.0) for pos, vid, off, dur in rows]


def log_start(group: VideoGroup) -> datetime | None:
    """The log's wall-clock start (``params["start"]``), or None if it is missing or unreadable."""
    try:
        return datetime.fromisoformat(str(group.params.get("start", "")))
    except ValueError:
        return None


def clock(start: datetime | None, t: float) -> str:
    """Wall-clock label of virtual second ``t``: ``HH:MM:SS`` (with ``+Nd`` past the first day)
    from the log's ``start``; from 00:00:00 when start is None."""
    base = start or datetime(2000, 1, 1)
    at = base + timedelta(seconds=t)
    days = (at.date() - base.date()).days
    return at.strftime("%H:%M:%S") + (f" +{days}d" if days else "")


# ----------------------------------------------------------------------------- manifests


class LifeLogError(ValueError):
    """A life-log manifest (or rows) that cannot be built. ``problems`` lists every problem found,
    each naming its line; ``str()`` joins them, one a line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class LogRow:
    """One manifest row as read: ``where`` names it ("log.jsonl line 3"); exactly one of ``file``
    (an ingested video's file name), ``sha256`` or ``path`` (a file to ingest, relative to the
    manifest) names the video; exactly one of ``start`` (ISO 8601 datetime) or ``offset_s``
    (seconds after the log's start) places it. ``summary`` is optional text about the part."""

    where: str
    file: str = ""
    sha256: str = ""
    path: str = ""
    start: datetime | None = None
    offset_s: float | None = None
    summary: str = ""
    extra: dict = field(default_factory=dict)


_HMS = re.compile(r"^(\d{1,3}):([0-5]\d):([0-5]\d(?:\.\d+)?)$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


def parse_offset(value) -> float:
    """Seconds from a number, a numeric string or ``H:MM:SS[.fff]``. Raises ValueError (TypeError for a boolean)."""
    if isinstance(value, bool):
        raise TypeError("not a number of seconds")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        text = str(value).strip()
        m = _HMS.match(text)
        seconds = int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3]) if m else float(text)
    if not math.isfinite(seconds):
        raise ValueError("not a finite number of seconds")
    return seconds


def _row(raw, where: str) -> tuple[LogRow, list[str]]:
    problems: list[str] = []
    if not isinstance(raw, dict):
        return LogRow(where), [f"{where}: expected an object, got {type(raw).__name__}"]
    row = LogRow(where)
    named = [k for k in ("file", "sha256", "path") if raw.get(k) not in (None, "")]
    if len(named) != 1:
        problems.append(
            f"{where}: name the video by exactly one of file, sha256 or path"
            + (f" (got {', '.join(named)})" if named else "")
        )
    for key in named:
        if not isinstance(raw[key], str):
            problems.append(f"{where}: {key} must be text")
            continue
        setattr(row, key, raw[key].strip())
    if row.sha256 and not _SHA.match(row.sha256.lower()):
        problems.append(f"{where}: sha256 must be 64 hex digits")
    row.sha256 = row.sha256.lower()
    placed = [k for k in ("start", "offset_s") if raw.get(k) not in (None, "")]
    if len(placed) != 1:
        problems.append(
            f"{where}: give exactly one of start (ISO 8601 datetime) or offset_s (seconds after the log's start)"
        )
    elif placed[0] == "start":
        try:
            row.start = datetime.fromisoformat(str(raw["start"]).strip())
        except ValueError:
            problems.append(
                f"{where}: start {str(raw['start'])[:40]!r} is not an ISO 8601 datetime (e.g. 2024-05-01T08:30:00)"
            )
    else:
        try:
            row.offset_s = parse_offset(raw["offset_s"])
        except (TypeError, ValueError):
            problems.append(f"{where}: offset_s {str(raw['offset_s'])[:40]!r} is not seconds (a number or H:MM:SS)")
    summary = raw.get("summary")
    if summary not in (None, ""):
        if not isinstance(summary, str) or len(summary) > 4000:
            problems.append(f"{where}: summary must be text of at most 4,000 characters")
        else:
            row.summary = summary.strip()
    row.extra = {
        k: v
        for k, v in raw.items()
        if k not in {"file", "sha256", "path", "start", "offset_s", "summary"} and v not in (None, "")
    }
    return row, problems


def read_manifest(path: str | Path) -> list[LogRow]:
    """Read a life-log manifest: ``.csv`` (a header row, then one row a part) or JSONL (one object
    a line, blank lines skipped). Keys: ``file`` | ``sha256`` | ``path``; ``start`` | ``offset_s``;
    optional ``summary``. Rows come in time order. Raises LifeLogError listing every malformed row
    with its line number (1-based; a CSV's header is line 1), OSError if the file cannot be read."""
    path = Path(path)
    raws: list[tuple[str, object]] = []
    problems: list[str] = []
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as fh:
            raws = [(f"{path.name} line {i + 2}", row) for i, row in enumerate(csv.DictReader(fh))]
    else:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    raws.append((f"{path.name} line {lineno}", json.loads(line)))
                except json.JSONDecodeError as exc:
                    problems.append(f"{path.name} line {lineno}: not JSON ({exc.msg})")
    rows = read_rows(raws, problems)
    return rows


def read_rows(raws: list[tuple[str, object]], problems: list[str] | None = None) -> list[LogRow]:
    """Rows from ``(where, object)`` pairs (an API body's rows named "rows[0]", ...). Raises
    LifeLogError listing every problem (plus those already in ``problems``)."""
    problems = list(problems or [])
    rows = []
    if len(raws) > MAX_PARTS:
        problems.append(f"at most {MAX_PARTS} parts in a life log, got {len(raws)}")
    for where, raw in raws[:MAX_PARTS]:
        row, found = _row(raw, where)
        problems += found
        rows.append(row)
    if not raws and not problems:
        problems.append("the manifest lists no parts")
    if problems:
        raise LifeLogError(problems)
    return rows


# ----------------------------------------------------------------------------- building


@dataclass(frozen=True)
class BuildResult:
    """``outcome``: created, unchanged or rebuilt; ``ingested``: messages about files ingested."""

    group: VideoGroup
    outcome: str
    ingested: tuple[str, ...] = ()


def _resolve(
    project: Project, rows: list[LogRow], base_dir: Path | None, ingest: bool
) -> tuple[list[Video | None], list[str], list[str]]:
    from annotator.media.services import ingest_file

    videos: list[Video | None] = []
    problems: list[str] = []
    notes: list[str] = []
    for row in rows:
        video = None
        if row.file:
            found = list(Video.objects.filter(project=project, filename=row.file)[:2])
            if not found:
                problems.append(
                    f"{row.where}: no video named {row.file!r} in project {project.slug} (ingest it first, or give its path)"
                )
            elif len(found) > 1:
                problems.append(f"{row.where}: several videos are named {row.file!r}; name it by sha256")
            else:
                video = found[0]
        elif row.sha256:
            video = Video.objects.filter(project=project, sha256=row.sha256).first()
            if video is None:
                problems.append(f"{row.where}: no video with sha256 {row.sha256[:12]}... in project {project.slug}")
        elif row.path:
            target = Path(row.path)
            if not target.is_absolute() and base_dir is not None:
                target = base_dir / target
            if not ingest:
                problems.append(f"{row.where}: paths cannot be ingested here; name an ingested video by file or sha256")
            elif not target.is_file():
                problems.append(f"{row.where}: no such file {row.path!r}")
            else:
                result = ingest_file(project, target)
                notes.append(f"{result.outcome} {row.path}" + (f" ({result.reason})" if result.reason else ""))
                video = Video.objects.filter(pk=result.video_id).first() if result.video_id else None
                if video is None:
                    problems.append(f"{row.where}: {row.path} could not be ingested: {result.reason}")
        if video is not None and video.status == Video.Status.FAILED:
            problems.append(
                f"{row.where}: video {video.filename} failed to ingest ({video.error}); it cannot be a part"
            )
            video = None
        elif video is not None and not (video.duration_s and video.duration_s > 0):
            problems.append(f"{row.where}: video {video.filename} has no known duration")
            video = None
        videos.append(video)
    return videos, problems, notes


def _place(
    rows: list[LogRow], videos: list[Video | None], start: datetime | None
) -> tuple[datetime | None, list[float], list[str]]:
    """The log's start and each row's offset (seconds); problems for unplaceable, out-of-order,
    overlapping or too-late rows, or a start too near the end of the calendar for the log's span."""
    problems: list[str] = []
    if start is None:
        first = next((r for r in rows if r.start is not None), None)
        if first is None:
            return (
                None,
                [],
                ["the log's start is unknown: give --start (an ISO 8601 datetime) or a start datetime on the rows"],
            )
        if rows[0].start is None:
            return (
                None,
                [],
                [f"{rows[0].where}: the first row needs a start datetime, or give the log's start (--start)"],
            )
        start = rows[0].start
    try:
        start + timedelta(seconds=MAX_SPAN_S)  # every wall-clock time of the log must be a datetime
    except OverflowError:
        return (
            start,
            [],
            [
                f"the log's start {start.isoformat()} is too late: the {MAX_SPAN_S / 86400:g} days a log "
                f"may span would pass the year 9999"
            ],
        )
    offsets: list[float] = []
    for row in rows:
        if row.start is not None:
            if (row.start.tzinfo is None) != (start.tzinfo is None):
                problems.append(f"{row.where}: mixes a datetime with and without a time zone")
                offsets.append(math.nan)
                continue
            offsets.append((row.start - start).total_seconds())
        else:
            offsets.append(row.offset_s if row.offset_s is not None else math.nan)
    prev: tuple[LogRow, float, float] | None = None  # the last placed row, its offset and end
    seen: dict[int, str] = {}
    for row, video, off in zip(rows, videos, offsets):
        if math.isnan(off):
            continue
        if video is not None:
            if video.pk in seen:
                problems.append(f"{row.where}: video {video.filename} is already a part ({seen[video.pk]})")
            seen.setdefault(video.pk, row.where)
        if off < 0:
            problems.append(f"{row.where}: starts {-off:g} s before the log's start")
            continue
        end = off + (video.duration_s if video is not None else 0.0)
        if end > MAX_SPAN_S:
            problems.append(
                f"{row.where}: ends {end / 3600:.1f} h after the log's start; a life log spans at most "
                f"{MAX_SPAN_S / 86400:g} days"
            )
        if prev is not None:
            p_row, p_off, p_end = prev
            if off <= p_off:
                problems.append(
                    f"{row.where}: starts at {clock(start, off)}, not after the row before it "
                    f"({p_row.where}, {clock(start, p_off)}); list parts in time order"
                )
            elif off < p_end - OVERLAP_TOLERANCE_S:
                problems.append(
                    f"{row.where}: starts at {clock(start, off)}, {p_end - off:.3f} s before the part of "
                    f"{p_row.where} ends ({clock(start, p_end)}); parts may not overlap"
                )
        if prev is None or off > prev[1]:
            prev = (row, off, end)
    return start, offsets, problems


def build_life_log(
    project: Project,
    name: str,
    rows: list[LogRow],
    *,
    start: datetime | None = None,
    base_dir: Path | None = None,
    ingest: bool = True,
) -> BuildResult:
    """Build (or re-build) the life log ``name`` of ``project`` from ``rows`` in time order.

    Each row's video is found by file name or sha256 among the project's videos, or ingested from
    ``path`` (relative to ``base_dir``; only when ``ingest``). The log starts at ``start`` or, when
    None, at the first row's ``start`` datetime; ``offset_s`` rows are seconds after it. Parts get
    positions 0..n-1 in row order and their summaries go to ``params["summaries"]`` (a list by
    position). Running it again with the same rows changes nothing (``unchanged``); other rows
    replace the parts (``rebuilt``) unless work units already use the log.

    Raises LifeLogError listing every problem with its row: an unknown, failed or repeated video,
    rows out of time order, overlapping parts (a part starting before the previous one ends), a
    part before the start or ending more than 7 days after it, more than ``MAX_PARTS`` rows, or a
    name used by a group of another kind. Nothing is written to the log then (files named by path
    may have been ingested already; ingesting again is a no-op).
    """
    name = (name or "").strip()
    if not name or len(name) > MAX_NAME:
        raise LifeLogError([f"a life log needs a name of 1 to {MAX_NAME} characters"])
    existing = VideoGroup.objects.filter(project=project, name=name).first()
    if existing is not None and existing.kind != VideoGroup.Kind.LIFE_LOG:
        raise LifeLogError(
            [f"group {name!r} of project {project.slug} is a {existing.get_kind_display()}, not a life log"]
        )
    videos, problems, notes = _resolve(project, rows, base_dir, ingest)
    start, offsets, placing = _place(rows, videos, start)
    problems += placing
    if problems:
        raise LifeLogError(problems)
    params = {"start": start.isoformat(), "summaries": [r.summary for r in rows]}
    wanted = [(i, v.pk, round(off, 6)) for i, (v, off) in enumerate(zip(videos, offsets))]
    with transaction.atomic():
        if existing is not None:
            group = VideoGroup.objects.select_for_update().get(pk=existing.pk)
            have = [
                (m.position, m.video_id, round(m.offset_s, 6))
                for m in group.members.filter(role=VideoGroupMember.Role.PART).order_by("position")
            ]
            if (
                have == wanted
                and group.params.get("start") == params["start"]
                and group.params.get("summaries") == params["summaries"]
            ):
                return BuildResult(group, "unchanged", tuple(notes))
            if group.units.exists():
                raise LifeLogError(
                    [f"life log {name!r} already has work units; build the changed log under a new name"]
                )
            group.members.all().delete()
            group.params = {**group.params, **params}
            group.save(update_fields=["params"])
            outcome = "rebuilt"
        else:
            group = VideoGroup.objects.create(project=project, kind=VideoGroup.Kind.LIFE_LOG, name=name, params=params)
            outcome = "created"
        VideoGroupMember.objects.bulk_create(
            [
                VideoGroupMember(group=group, video_id=vid, role=VideoGroupMember.Role.PART, position=pos, offset_s=off)
                for pos, vid, off in wanted
            ]
        )
    return BuildResult(group, outcome, tuple(notes))


def timeline(group: VideoGroup) -> dict:
    """What the day timeline page and the verify page need of a life log (times in virtual seconds
    after the start)::

        {"id", "name", "start": ISO datetime, "span_s": end of the last part,
         "parts": [{"position", "video_id", "filename", "offset_s", "duration_s", "url", "poster_url",
                    "hls_url", "thumbnails_vtt_url", "clock": "HH:MM:SS", "summary"}],
         "gaps": [{"start_s", "end_s", "duration_s"}]}
    """
    from annotator.media.urls import media_urls

    members = list(group.members.filter(role=VideoGroupMember.Role.PART).select_related("video").order_by("position"))
    start = log_start(group)
    summaries = group.params.get("summaries") or []
    parts = []
    for m in members:
        v = m.video
        parts.append(
            {
                "position": m.position,
                "video_id": v.pk,
                "filename": v.filename,
                "offset_s": m.offset_s,
                "duration_s": v.duration_s or 0.0,
                **media_urls(v),
                "clock": clock(start, m.offset_s),
                "summary": summaries[m.position] if m.position < len(summaries) else "",
            }
        )
    plain = [Part(p["position"], p["video_id"], p["offset_s"], p["duration_s"]) for p in parts]
    return {
        "id": group.pk,
        "name": group.name,
        "start": group.params.get("start", ""),
        "span_s": plain[-1].end_s if plain else 0.0,
        "parts": parts,
        "gaps": [{"start_s": a, "end_s": b, "duration_s": b - a} for a, b in gaps(plain)],
    }
