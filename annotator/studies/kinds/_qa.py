"""What the kinds built on QA pairs share (multiple choice, open answers, Likert on QA pairs):
sampling verified pairs per QA type with a recorded seed, time-limit conditions, and cutting the
clips a page plays.

Clips are cut per item by ffmpeg (``adapters.ffmpeg.clip_args``: the pair's clip range only, no
audio, no metadata) and stored as ``studyclips/<SHA-256 of the bytes>.mp4``, so the page gets
exactly what the item shows (issue 8, Integrity: no source video the task does not show, no file
name, no time stamp). Paired QA types (a day-night group, EgoNight) play every video of the group
over the same range, each shifted by its offset.
"""

from __future__ import annotations

import hashlib
import os
import random
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
        out.append(Condition.objects.create(study=study, number=number, label=label, time_limit_s=limit,
                                            variables={}, baseline=number == 1))
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


def pair_ranges(pair) -> list[tuple]:
    """The (video, start_s, end_s) ranges a page plays for a QA pair: its clip of its video, or for a
    paired type every video of its unit's group over the clip shifted by the member's offset."""
    group = pair.unit.group if pair.qa_type.paired else None
    if group is None:
        return [(pair.video, pair.clip_start_s, pair.clip_end_s)]
    members = list(group.members.select_related("video").order_by("role"))
    return [(m.video, max(0.0, pair.clip_start_s + m.offset_s), max(0.0, pair.clip_end_s + m.offset_s)) for m in members]


def cut_clips(ranges: set[tuple], report: BuildReport, progress: Callable[[str], None]) -> dict[tuple, str]:
    """Storage names for every (video, start_s, end_s) in ``ranges``, cut in parallel by ffmpeg (one
    process per CPU) and stored under their content hash (identical bytes stored once; new files
    are added to ``report.files``). Ranges longer than ``CLIP_MAX_S`` are refused. Raises Invalid
    for those and MediaError if ffmpeg fails."""
    from annotator.media.services import local_copy, work_dir

    todo = sorted(ranges, key=lambda r: (r[0].pk, r[1], r[2]))
    for video, a, b in todo:
        if b - a > CLIP_MAX_S:
            raise Invalid(f"a clip of {video.filename} is {b - a:.0f} s long; study clips are at most {CLIP_MAX_S:.0f} s")
    out: dict[tuple, str] = {}
    if not todo:
        return out
    with ExitStack() as stack:
        tmp = stack.enter_context(work_dir("studyclips-"))
        sources = {v.pk: stack.enter_context(local_copy(v.rendition.name or v.original.name)) for v, _, _ in todo}

        def cut(i_range):
            i, (video, a, b) = i_range
            dst = tmp / f"{i}.mp4"
            ffmpeg.run(ffmpeg.clip_args(sources[video.pk], dst, start_s=a, end_s=b, max_height=CLIP_HEIGHT),
                       timeout_s=ffmpeg.timeout_for(b - a), what=f"clip {a:.1f}-{b:.1f} s of {video.filename}")
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


def media_of(pair, clips: dict[tuple, str]) -> list[dict]:
    """The ``payload["media"]`` of an item about ``pair``: its clips labelled "Video 1", "Video 2", ...
    (EgoExoBench Fig. 2 names videos by number only)."""
    return [{"name": clips[(v.pk, a, b)], "label": f"Video {i}"} for i, (v, a, b) in enumerate(pair_ranges(pair), start=1)]


def media_payload(item) -> list[dict]:
    """The page's view of an item's clips: ``[{"label": "Video 1", "url": ...}]`` (URLs of the
    content-named clip files, served only to participants of the item)."""
    from annotator.qa.selectors import media_url

    return [{"label": m["label"], "url": media_url(m["name"])} for m in item.payload.get("media", [])]
