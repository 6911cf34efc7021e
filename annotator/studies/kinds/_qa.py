"""What the kinds built on QA pairs share (multiple choice, open answers, Likert on QA pairs):
sampling verified pairs per QA type with a recorded seed, time-limit conditions, and cutting the
clips a page plays.

What an item shows comes from ``annotator.qa.stimulus`` (the builder a model's input comes from
too, issue 18). Clips are cut per item by ffmpeg (``adapters.ffmpeg.clip_args``: the pair's clip range only, no
audio, no metadata) and stored as ``studyclips/<SHA-256 of the bytes>.mp4``, so the page gets
exactly what the item shows (issue 8, Integrity: no source video the task does not show, no file
name, no time stamp).
"""

from __future__ import annotations

import hashlib
import os
import random
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotator.adapters import ffmpeg
from annotator.errors import Invalid
from annotator.studies.kinds import BuildReport, wrote

CLIP_HEIGHT = 480
CLIP_MAX_S = 600.0
# A time a question names: "4.5 s", "12 sec", "3 seconds", or a clock "1:05", "0:01:05.5", "12:31:41".
_SECONDS = re.compile(r"(?<![\w.:])(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b", re.IGNORECASE)
_CLOCK = re.compile(r"(?<![\w.:])(\d{1,2}):([0-5]\d)(?::([0-5]\d))?(\.\d+)?(?![\w:])")
TIME_SLACK_S = 0.05  # a named time this close to the clip's end (or a start this close to 0) is inside


def time_limit_conditions(study, limits, labels: dict[float, str] | None = None) -> list:
    """One condition per time limit (seconds; None or 0: no limit), numbered from 1, labelled
    ``quick (60 s)``-style from ``labels`` where given (EgoExoBench App. A.5: 60 s "quick", 180 s
    "deliberate"). Raises Invalid for a limit outside 1-3600 s."""
    from annotator.studies.models import Condition

    values = [None if v in (None, 0) else float(v) for v in (limits or [None])]
    if any(v is not None and not 1 <= v <= 3600 for v in values):
        raise Invalid("time limits must be between 1 and 3600 seconds", errors={"time_limits": "out of range"})
    if len(set(values)) != len(values):
        raise Invalid("time limits must differ", errors={"time_limits": "repeated"})
    out = []
    for number, limit in enumerate(values, start=1):
        name = (labels or {}).get(limit)
        label = "no time limit" if limit is None else f"{name} ({limit:g} s)" if name else f"{limit:g} s limit"
        out.append(
            Condition.objects.create(
                study=study, number=number, label=label, time_limit_s=limit, variables={}, baseline=number == 1
            )
        )
    return out


def sample_pairs(study, pairs, per_type: int | None, *, record: str = "per_type") -> dict[str, list]:
    """Up to ``per_type`` QA pairs of each QA type from ``pairs`` (a queryset), drawn without
    replacement by ``random.Random(f"{study.seed}:{type slug}")`` from the pairs in id order, so the
    same seed and data give the same sample. Records in ``study.sampling[record]`` per type: pairs
    available and taken, and the seed. Returns QA type slug -> pairs (in draw order)."""
    by_type: dict[str, list] = {}
    for pair in pairs.select_related("qa_type", "unit__group", "video").order_by("qa_type__slug", "id"):
        by_type.setdefault(pair.qa_type.slug, []).append(pair)
    out = {}
    for slug, found in by_type.items():
        take = len(found) if not per_type else min(per_type, len(found))
        out[slug] = random.Random(f"{study.seed}:{slug}").sample(found, take)
        study.sampling.setdefault(record, {})[slug] = {"available": len(found), "taken": take}
    study.sampling["seed"] = study.seed
    return out


def qa_pool(study, pool, options: dict):
    """``pool`` (a QAPair queryset) narrowed to the QA types of ``options["qa_types"]`` (slugs; all
    when absent), and to the benchmark's own units (never a gold, qualification or tutorial copy, issue
    20). Raises Invalid naming a slug the project does not have."""
    from annotator.qa.models import QAType, WorkUnit

    pool = pool.filter(unit__purpose=WorkUnit.Purpose.REAL)
    wanted = options.get("qa_types") or []
    if not wanted:
        return pool
    if isinstance(wanted, str) or not all(isinstance(t, str) for t in wanted) or len(wanted) > 100:
        raise Invalid("qa_types is a list of QA type slugs", errors={"qa_types": "not a list of slugs"})
    known = set(QAType.objects.filter(project=study.project, slug__in=wanted).values_list("slug", flat=True))
    unknown = [t for t in wanted if t not in known]
    if unknown:
        raise Invalid(
            f"project {study.project.slug} has no QA type {', '.join(map(repr, unknown))}",
            errors={"qa_types": "unknown"},
        )
    return pool.filter(qa_type__slug__in=wanted)


def render(pairs: list, report: BuildReport, progress: Callable[[str], None]) -> tuple[list, dict[int, dict]]:
    """The stimulus of every QA pair in ``pairs`` (``annotator.qa.stimulus.of_pair``: every view of
    an ego-exo set, each labelled video, a day-night pair's two videos, a life log's segments in
    virtual time), its clips cut (``cut_clips``), as stored on an item: QA pair id ->
    ``{"layout", "media"}`` (``stimulus.to_json`` with each range's clip name). A pair whose
    stimulus cannot be shown (a video not ready, a range longer than ``CLIP_MAX_S``, nothing
    recorded in a life log's range), or whose question names a time its clip does not show
    (``time_problem``: "at 4.5 s" of a 3-second clip), is refused, counted in ``report.skipped`` under its reason, and
    left out of the returned pairs (in their order). Raises MediaError if ffmpeg fails."""
    from annotator.media.models import Video
    from annotator.qa import stimulus

    stimuli = {p.pk: stimulus.of_pair(p) for p in pairs}
    videos = Video.objects.in_bulk({v for s in stimuli.values() for v in stimulus.video_ids(s) if v is not None})
    kept = []
    for pair in pairs:
        reason = stimulus.problem(stimuli[pair.pk], videos, max_clip_s=CLIP_MAX_S) or time_problem(
            pair.question, stimuli[pair.pk], pair
        )
        if reason:
            key = f"QA pairs that cannot be shown ({reason})"
            report.skipped[key] = report.skipped.get(key, 0) + 1
            progress(f"  refused QA pair {pair.pk} ({pair.qa_type.slug}): {reason}")
            continue
        kept.append(pair)
    ranges = {(videos[v], a, b) for p in kept for m in stimuli[p.pk].media for v, a, b in m.ranges}
    clips = cut_clips(ranges, report, progress)
    return kept, {p.pk: stimulus.to_json(stimuli[p.pk], clips) for p in kept}


def named_times(text: str) -> list[tuple[float, str]]:
    """The times ``text`` names, in order of appearance, as (value, form): form ``seconds`` for "4.5 s",
    "12 sec", "3 seconds" (value in seconds); ``clock`` for "0:01:05.5", "12:31:41" (h:mm:ss, value in
    seconds); ``short clock`` for "1:05" (value read as m:ss, in seconds; as hh:mm it is 60 times that)."""
    found = [(m.start(), float(m.group(1)), "seconds") for m in _SECONDS.finditer(text)]
    for m in _CLOCK.finditer(text):
        a, b, c, frac = m.groups()
        value = (int(a) * 3600 + int(b) * 60 + int(c)) if c is not None else int(a) * 60 + int(b)
        found.append((m.start(), value + (float(frac) if frac else 0.0), "clock" if c is not None else "short clock"))
    return [(v, form) for _, v, form in sorted(found)]


def time_problem(question: str, shown, pair) -> str:
    """Why ``question`` does not fit its clip, in plain words ('' when it does): it names a time the
    participant cannot find in what is played (``shown``: the pair's ``qa.stimulus.Stimulus``).

    A clip plays from 0 s, so a time in seconds (or an m:ss clock) fits only a clip cut from the
    start of its video and no longer than the time: "at 4.5 s" of a 3-second clip, or of a clip cut
    from 3 s to 6 s (whose page shows 0-3 s), does not. A life log shows its wall clock instead:
    an h:mm:ss clock must fall inside the range's wall-clock span (``clock_start`` plus its length;
    an hh:mm clock is read as the wall clock's hours and minutes)."""
    times = named_times(question) if question else []
    if not times or not shown.media:
        return ""
    first = shown.media[0]
    if shown.layout == "sync":
        start, end = pair.clip_start_s, pair.clip_end_s
    else:
        start, end = first.start_s, first.end_s
    length = end - start
    outside = "its question names a time the clip does not show"
    for value, form in times:
        if first.kind == "life_log" and form != "seconds" and first.clock_start:
            h, m, sec = (int(x) for x in first.clock_start.split()[0].split(":"))
            begin = h * 3600 + m * 60 + sec
            at = value * 60 if form == "short clock" else value  # a life log's "12:31" is hh:mm
            # hh:mm names a whole minute: it fits if any second of that minute is shown.
            slack = 60 if form == "short clock" else TIME_SLACK_S
            if (at - begin) % 86400 > length + slack and (begin - at) % 86400 >= slack:
                return outside
            continue
        if abs(start) > TIME_SLACK_S or value > length + TIME_SLACK_S:
            return outside
    return ""


def cut_clips(ranges: set[tuple], report: BuildReport, progress: Callable[[str], None]) -> dict[tuple, str]:
    """Storage names for every (video, start_s, end_s) in ``ranges``, cut in parallel by ffmpeg (one
    process per CPU) and stored under their content hash (identical bytes stored once; new files
    are added to ``report.files``). Ranges longer than ``CLIP_MAX_S`` are refused. Raises Invalid
    for those and MediaError if ffmpeg fails."""
    from annotator.media.services import local_copy, work_dir

    todo = sorted(ranges, key=lambda r: (r[0].pk, r[1], r[2]))
    for video, a, b in todo:
        if b - a > CLIP_MAX_S:
            raise Invalid(
                f"a clip of {video.filename} is {b - a:.0f} s long; study clips are at most {CLIP_MAX_S:.0f} s"
            )
    out: dict[tuple, str] = {}
    if not todo:
        return out
    with ExitStack() as stack:
        tmp = stack.enter_context(work_dir("studyclips-"))
        sources = {v.pk: stack.enter_context(local_copy(v.rendition.name or v.original.name)) for v, _, _ in todo}

        def cut(i_range):
            i, (video, a, b) = i_range
            dst = tmp / f"{i}.mp4"
            ffmpeg.run(
                ffmpeg.clip_args(sources[video.pk], dst, start_s=a, end_s=b, max_height=CLIP_HEIGHT),
                timeout_s=ffmpeg.timeout_for(b - a),
                what=f"clip {a:.1f}-{b:.1f} s of {video.filename}",
            )
            return dst.read_bytes()

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for i, (rng, data) in enumerate(zip(todo, pool.map(cut, enumerate(todo))), start=1):
                if not data:
                    raise ffmpeg.MediaError(f"{rng[0].filename}: empty clip {rng[1]:.1f}-{rng[2]:.1f} s")
                name = f"studyclips/{hashlib.sha256(data).hexdigest()}.mp4"
                if not default_storage.exists(name):
                    name = default_storage.save(name, ContentFile(data))
                    report.files.append(name)
                    wrote(name)
                out[(rng[0].pk, rng[1], rng[2])] = name
                if i % 20 == 0 or i == len(todo):
                    progress(f"  clips: {i}/{len(todo)}")
    return out


def clip_names(payload: dict) -> list[str]:
    """The storage names of every clip an item's page plays (``payload["media"]``; a life log's
    segments each have one), in order."""
    out = []
    for m in payload.get("media", []):
        out += [seg["name"] for seg in m["segments"]] if m.get("kind") == "life_log" else [m["name"]]
    return out


def media_payload(item) -> list[dict]:
    """The page's view of an item's media, in order: a video is ``{"label", "url"}`` (the
    content-named clip, served only to participants of the item); a life log is ``{"label",
    "clock_start", "duration_s", "parts": [{"url", "offset_s", "duration_s"}]}``, its parts placed
    in virtual seconds after the range's start, for the virtual player (``static/js/virtual_player.js``).
    No video id, file name or source time."""
    from annotator.qa.selectors import media_url

    out = []
    for m in item.payload.get("media", []):
        if m.get("kind") == "life_log":
            out.append(
                {
                    "label": m["label"],
                    "clock_start": m.get("clock_start", ""),
                    "duration_s": round(m["end_s"] - m["start_s"], 3),
                    "parts": [
                        {
                            "url": media_url(s["name"]),
                            "offset_s": round(s["virtual_start_s"] - m["start_s"], 3),
                            "duration_s": round(s["end_s"] - s["start_s"], 3),
                        }
                        for s in m["segments"]
                    ],
                }
            )
        else:
            out.append({"label": m["label"], "url": media_url(m["name"])})
    return out


def video_layout(item) -> str:
    """How the page lays out an item's videos: ``sync`` (views of one moment, one control plays
    them together: an ego-exo set, a day-night pair), ``labelled`` (separate videos the options
    name), ``life_log`` or ``single``."""
    return item.payload.get("layout") or ("single" if len(item.payload.get("media", [])) <= 1 else "labelled")


def footage_shown(payload: dict) -> list:
    """What an item's clips play, for the exposure ledger: a ``Shown`` of kind footage per range of
    source footage (``payload["media"]``; a life log's segments each), seconds of the video."""
    from annotator.exposure.ledger import FOOTAGE, Shown
    from annotator.qa import stimulus

    return [Shown(FOOTAGE, v, a, b) for m in stimulus.from_json(payload).media for v, a, b in m.ranges if v is not None]
