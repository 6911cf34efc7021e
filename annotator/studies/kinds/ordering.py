"""Ordering kind: put shuffled frames (EGO-FLIGHT, seed 003 Sec. 3.2-3.5, App. A, D, E) or texts
(X-LeBench summary ordering, seed 002 App. C.4) back in the order they happened.

Item ``payload`` (server-side): ``shown`` (element ids in the recorded shown order), ``hints``
(1-based true positions pinned in place), ``annotation`` (the condition's text about the clip),
``clip`` (``video_id``, ``start_s``, ``end_s``, seconds). ``truth``: element ids in true order.

Participant response (API): the list of the trial's element *handles* in the order given, earliest
first (``annotator.studies.handles``: per-trial HMACs, since element ids ascend with time). Stored
as element ids. Model predictions are element ids.

Building: frames are sampled evenly over a clip (segment centres) by ffmpeg at exact times,
resized to ``frame_size`` px square, stored once under their content hash and shared; each item's
shown order is drawn from its recorded seed (uniform over permutations, hints pinned), and is the
same for every person and model (App. A). Text items take n annotated actions of a video, evenly
spread over its timeline.
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
from annotator.media.models import Video
from annotator.scoring import ordering as scoring
from annotator.studies.kinds import BuildReport, ScoreRow, wrote

METRICS = scoring.METRICS

# What the pages call this kind (what a participant reads first is ``instructions``), and the
# dashboard's bar charts: (metric, name, axis title with its unit, axis min, axis max).
TITLE = "frame or text ordering"
PLOTS = (
    ("kendall_tau_b", "Kendall's τ-b", "Kendall's τ-b (−1 reversed … 1 right order)", -1, 1),
    ("position_accuracy", "Per-position accuracy", "Per-position accuracy (share of elements in place, 0–1)", 0, 1),
)
PRIMARY = "exact_match"

# EGO-FLIGHT's nine frame-ordering experiments (seed 003 App. E, Table 8); the baseline is 4 frames,
# medium clips, brief annotation, no hints (Sec. 3.2).
EGO_FLIGHT = [
    {"number": 1, "label": "2 frames", "n_frames": 2, "clip_length": "medium", "annotation": "brief"},
    {"number": 2, "label": "original (4 frames)", "n_frames": 4, "clip_length": "medium", "annotation": "brief"},
    {"number": 3, "label": "8 frames", "n_frames": 8, "clip_length": "medium", "annotation": "brief"},
    {"number": 4, "label": "short clips", "n_frames": 4, "clip_length": "short", "annotation": "brief"},
    {"number": 5, "label": "long clips", "n_frames": 4, "clip_length": "long", "annotation": "brief"},
    {"number": 6, "label": "no annotation", "n_frames": 4, "clip_length": "medium", "annotation": "none"},
    {
        "number": 7,
        "label": "comprehensive annotation",
        "n_frames": 4,
        "clip_length": "medium",
        "annotation": "comprehensive",
    },
    {
        "number": 8,
        "label": "hints: frames 1 & 3",
        "n_frames": 4,
        "clip_length": "medium",
        "annotation": "brief",
        "hints": [1, 3],
    },
    {
        "number": 9,
        "label": "hints: frames 2 & 4",
        "n_frames": 4,
        "clip_length": "medium",
        "annotation": "brief",
        "hints": [2, 4],
    },
]

# X-LeBench summary ordering (seed 002 App. C.4): 4, 9 or 15 event summaries of a record to order.
XLEBENCH_SUMMARY = [
    {"number": 1, "label": "4 summaries", "n_frames": 4, "item_kind": "texts"},
    {"number": 2, "label": "9 summaries", "n_frames": 9, "item_kind": "texts"},
    {"number": 3, "label": "15 summaries", "n_frames": 15, "item_kind": "texts"},
]

PRESETS = {
    "ego-flight": {
        "conditions": EGO_FLIGHT,
        "frame_size": 224,
        "practice_items": 3,
        "questions_per_participant": 102,
        "conditions_per_participant": 2,
    },
    "xlebench-summary": {
        "conditions": XLEBENCH_SUMMARY,
        "practice_items": 0,
        "questions_per_participant": 10,
        "conditions_per_participant": 1,
    },
}
DEFAULT_PRESET = "ego-flight"

# Clip windows cut from each video per length class (seed 003 Sec. 3.2: short 5-10 s, medium
# 10-25 s, long over 25 s): windows of these lengths, tiled from the start of the video.
WINDOW_S = {"short": 8.0, "medium": 15.0, "long": 30.0}
MAX_ELEMENTS = 32


def instructions(f) -> str:
    """What a participant reads before the first item (Markdown), from the study's ``Facts``
    (``studies.instructions``): frames or texts, pinned hints, keys, time limits, practice."""
    from annotator.studies.instructions import practice_line, time_limit_line

    if f.texts and not f.frames:
        what, moved = "short descriptions of events from a video, **shuffled**", "description"
    elif f.texts:
        what, moved = "frames taken from a short video, or short descriptions of events, **shuffled**", "element"
    else:
        what, moved = "frames taken from a short video, **shuffled**", "frame"
    text = (
        f"You will see {what}. Put them back in the order they happened, earliest first, "
        "reading from left to right.\n\n"
        f"- Drag a {moved} to move it, or use the keyboard: **Tab** to a {moved}, **←** / **→** to move it.\n"
    )
    if f.pinned:
        text += f"- A {moved} marked *pinned* is already in its right place and cannot move.\n"
    text += "- Press **Enter** (or the Answer button) to answer. Each answer is timed from the moment everything is shown.\n"
    return text + time_limit_line(f) + practice_line(f, "the right order beside yours")


def item_seed(study_seed: int, condition_number: int, index: int) -> int:
    """The recorded shuffle seed of an item: 48 bits of SHA-256 of (study seed, condition, index)."""
    return int(hashlib.sha256(f"{study_seed}:{condition_number}:{index}".encode()).hexdigest()[:12], 16)


def _condition_variables(spec: dict) -> dict:
    return {
        "n_frames": int(spec["n_frames"]),
        "clip_length": spec.get("clip_length", "medium"),
        "annotation": spec.get("annotation", "none"),
        "hints": list(spec.get("hints", [])),
        "item_kind": spec.get("item_kind", "frames"),
    }


def _is_baseline(v: dict) -> bool:
    return (v["n_frames"], v["clip_length"], v["annotation"], v["hints"], v["item_kind"]) == (
        4,
        "medium",
        "brief",
        [],
        "frames",
    )


def _windows(duration_s: float, length_class: str) -> list[tuple[float, float]]:
    """Non-overlapping windows of the class's length tiled from 0 over a video of ``duration_s``."""
    w = WINDOW_S[length_class]
    n = int(duration_s // w)
    return [(round(i * w, 3), round((i + 1) * w, 3)) for i in range(n)]


def _comprehensive(annotations: dict, start_s: float, end_s: float) -> str:
    """A step-by-step description of the clip: the annotated actions that overlap it, in order,
    with times relative to the clip start."""
    if annotations.get("comprehensive"):
        return str(annotations["comprehensive"])
    steps = []
    for a in sorted(
        (a for a in annotations.get("actions") or [] if isinstance(a, dict)), key=lambda a: a.get("start_s", 0)
    ):
        s, e = float(a.get("start_s", 0)), float(a.get("end_s", 0))
        if e > start_s and s < end_s and a.get("label"):
            steps.append(f"{max(s, start_s) - start_s:.1f}-{min(e, end_s) - start_s:.1f} s: {a['label']}")
    return "; ".join(steps)


def _brief(annotations: dict) -> str:
    return str(annotations.get("brief") or annotations.get("description") or "")


def build(study, options: dict, progress: Callable[[str], None]) -> BuildReport:
    """Conditions and items of an ordering study from the project's real, ready videos.

    ``options``: ``conditions`` (a list of condition dicts: ``number``, ``label``, ``n_frames``,
    ``clip_length``, ``annotation``, ``hints``, ``item_kind``; default the preset's), ``frame_size``
    (px, 16-2048), ``time_limits`` (seconds per trial, one per condition or one for all; default none).
    Frame conditions: clips are cut per length class; the last ``study.practice_items`` medium clips
    are kept for practice items (baseline condition) so they never appear as trials; for every
    condition and clip of its class an item samples ``n_frames`` times evenly over the clip.
    An item two of whose frames are the same picture is refused and counted (``repeated``).
    Text conditions: see ``_text_items``. Raises Invalid for a bad condition, MediaError if ffmpeg
    cannot read a frame (files written so far are listed in ``report.files`` for the caller to remove).
    """
    from annotator.studies.models import Condition

    specs = options.get("conditions") or PRESETS[DEFAULT_PRESET]["conditions"]
    frame_size = int(options.get("frame_size") or 224)
    if not 16 <= frame_size <= 2048:
        raise Invalid("frame_size must be between 16 and 2048 px")
    limits = _limits(options.get("time_limits"), len(specs))
    report = BuildReport()
    conditions = []
    for spec, limit in zip(specs, limits):
        v = _condition_variables(spec)
        if not 2 <= v["n_frames"] <= MAX_ELEMENTS:
            raise Invalid(f"condition {spec['number']}: n_frames must be between 2 and {MAX_ELEMENTS}")
        if v["clip_length"] not in WINDOW_S or v["annotation"] not in ("none", "brief", "comprehensive"):
            raise Invalid(f"condition {spec['number']}: unknown clip_length or annotation")
        if any(not 1 <= h <= v["n_frames"] for h in v["hints"]):
            raise Invalid(f"condition {spec['number']}: hints must be positions 1..n_frames")
        conditions.append(
            Condition.objects.create(
                study=study,
                number=int(spec["number"]),
                label=str(spec["label"]),
                time_limit_s=limit,
                variables=v,
                baseline=_is_baseline(v),
            )
        )
    videos = list(
        Video.objects.filter(project=study.project, status=Video.Status.READY, source=Video.Source.REAL).order_by("id")
    )
    texts = [c for c in conditions if c.variables["item_kind"] == "texts"]
    frames = [c for c in conditions if c.variables["item_kind"] == "frames"]
    if texts:
        _text_items(study, texts, videos, report, progress)
    if frames:
        _frame_items(study, frames, videos, frame_size, report, progress)
    return report


def _limits(value, n: int) -> list[float | None]:
    """Per-condition time limits (s) from a list of one value for all, or one per condition."""
    if not value:
        return [None] * n
    values = [None if v in (None, 0) else float(v) for v in value]
    if any(v is not None and not 1 <= v <= 3600 for v in values):
        raise Invalid("time limits must be between 1 and 3600 seconds")
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise Invalid(f"give one time limit, or one per condition ({n})")
    return values


def _frame_items(study, conditions, videos, frame_size: int, report: BuildReport, progress) -> None:
    from annotator.studies.models import Item

    clips: dict[str, list[tuple[Video, float, float]]] = {
        k: [(v, a, b) for v in videos for a, b in _windows(v.duration_s or 0.0, k)] for k in WINDOW_S
    }
    n_practice = study.practice_items
    practice_clips = clips["medium"][-n_practice:] if n_practice and len(clips["medium"]) > n_practice else []

    # No trial clip of any length overlaps a practice clip of its video: practice feedback shows the true
    # order, which would give away the order of the frames a trial takes from the same seconds.
    def overlaps_practice(clip) -> bool:
        return any(clip[0].pk == p[0].pk and clip[1] < p[2] and p[1] < clip[2] for p in practice_clips)

    trial_clips = {k: [c for c in v if not overlaps_practice(c)] for k, v in clips.items()}
    too_short = {k: sum(1 for v in videos if not _windows(v.duration_s or 0.0, k)) for k in WINDOW_S}
    baseline = next((c for c in conditions if c.baseline), conditions[0])
    plan = [
        (cond, clip, index, False)
        for cond in conditions
        for index, clip in enumerate(trial_clips[cond.variables["clip_length"]])
    ]
    start_index = max((len(trial_clips[baseline.variables["clip_length"]]),), default=0)
    plan += [(baseline, clip, start_index + j, True) for j, clip in enumerate(practice_clips)]
    wanted = {
        (video, t) for cond, (video, a, b), _, _ in plan for t in ffmpeg.sample_times(a, b, cond.variables["n_frames"])
    }
    frames = _extract_frames(wanted, frame_size, report, progress)
    for cond, (video, a, b), index, practice in plan:
        v = cond.variables
        elements = [frames[(video.pk, t)] for t in ffmpeg.sample_times(a, b, v["n_frames"])]
        if repeated([e.image.name for e in elements]):
            _skip(report, REPEATED_FRAMES)
            continue
        seed = item_seed(study.seed, cond.number, index)
        order = scoring.shown_order(len(elements), seed, v["hints"])
        annotations = video.annotations or {}
        text = {
            "none": "",
            "brief": _brief(annotations),
            "comprehensive": _comprehensive(annotations, a, b) or _brief(annotations),
        }[v["annotation"]]
        item = Item.objects.create(
            condition=cond,
            index=index,
            role=Item.Role.PRACTICE if practice else Item.Role.SCORED,
            seed=seed,
            key=f"clip:{video.pk}:{a}:{b}",
            footage=video,
            truth=[e.pk for e in elements],
            payload={
                "shown": [elements[i].pk for i in order],
                "hints": v["hints"],
                "annotation": text,
                "clip": {"video_id": video.pk, "start_s": a, "end_s": b},
            },
        )
        del item
        if practice:
            report.practice += 1
        else:
            report.items[cond.number] = report.items.get(cond.number, 0) + 1
    for cond in conditions:
        report.items.setdefault(cond.number, 0)
        skipped = too_short[cond.variables["clip_length"]]
        if skipped:
            report.skipped[f"videos too short for {cond.variables['clip_length']} clips"] = skipped
        progress(
            f"  condition {cond.number} ({cond.label}): {report.items[cond.number]} items, {skipped} videos too short"
        )


def repeated(values: list) -> bool:
    """Whether two of ``values`` are the same element to a person: equal texts (case, spacing and
    final punctuation aside) or frames with the same image (content-named, so equal bytes). Such
    an item has no single right order and is refused (issue 21: two identical summaries shown)."""
    keys = [" ".join(str(v).casefold().split()).rstrip(".!?;:, ") for v in values]
    return len(set(keys)) != len(keys)


def _skip(report: BuildReport, reason: str) -> None:
    report.skipped[reason] = report.skipped.get(reason, 0) + 1


REPEATED_TEXTS = "items refused: two of their texts are the same"
REPEATED_FRAMES = "items refused: two of their frames are the same picture"


def _text_item(study, cond, index: int, texts: list[str], *, key: str, footage, clip: dict):
    """One text-ordering item of ``cond``: ``texts`` in true order become elements (created in
    random order, so element ids do not follow the true order), shown in the order drawn from the
    item's recorded seed."""
    from annotator.studies.models import Element, Item

    n = len(texts)
    created = list(range(n))
    random.SystemRandom().shuffle(created)
    made_elements = {i: Element.objects.create(kind=Element.Kind.TEXT, text=texts[i]) for i in created}
    elements = [made_elements[i] for i in range(n)]
    seed = item_seed(study.seed, cond.number, index)
    order = scoring.shown_order(n, seed, cond.variables["hints"])
    return Item.objects.create(
        condition=cond,
        index=index,
        seed=seed,
        key=key,
        footage=footage,
        truth=[e.pk for e in elements],
        payload={
            "shown": [elements[i].pk for i in order],
            "hints": cond.variables["hints"],
            "annotation": "",
            "clip": clip,
        },
    )


def _life_log_items(study, cond, report: BuildReport) -> int:
    """X-LeBench summary ordering proper (seed 002 App. C.4): for each life log of the project
    whose parts have at least n summaries (``params["summaries"]``, by position, from the
    ``lifelog_build`` manifest), n of them spread evenly over the log in part order (all of them
    when it has n: the paper's logs have 4, 9 or 15 parts). The item's clip is the whole log in
    virtual seconds on its first part; participants see the texts only. Returns items made."""
    from annotator.media.lifelogs import parts_of
    from annotator.media.models import VideoGroup

    n = cond.variables["n_frames"]
    made = skipped = 0
    for group in VideoGroup.objects.filter(project=study.project, kind=VideoGroup.Kind.LIFE_LOG).order_by("id"):
        parts = parts_of(group)
        summaries = group.params.get("summaries") or []
        texts = [
            str(summaries[p.position]).strip()
            for p in parts
            if p.position < len(summaries) and str(summaries[p.position] or "").strip()
        ]
        if len(texts) < n:
            skipped += 1
            continue
        step = len(texts) / n
        chosen = [texts[int(i * step)] for i in range(n)]
        if repeated(chosen):
            _skip(report, REPEATED_TEXTS)
            continue
        first = Video.objects.get(pk=parts[0].video_id)
        _text_item(
            study,
            cond,
            made,
            chosen,
            key=f"lifelog:{group.pk}",
            footage=first,
            clip={"video_id": first.pk, "start_s": 0.0, "end_s": parts[-1].end_s, "life_log_id": group.pk},
        )
        made += 1
    if skipped:
        report.skipped[f"life logs with fewer than {n} part summaries"] = skipped
    return made


def _text_items(study, conditions, videos, report: BuildReport, progress) -> None:
    """Text-ordering items (X-LeBench summary ordering, seed 002 App. C.4): for each life log with
    at least n part summaries, n of them (``_life_log_items``); then for each video with at least n
    annotated actions, n of them spread evenly over its timeline (in start order), as texts to put
    back in order. Videos with fewer actions are skipped and counted, and so is any item two of
    whose texts are the same (``repeated``)."""
    for cond in conditions:
        n = cond.variables["n_frames"]
        made = _life_log_items(study, cond, report)
        skipped = 0
        for video in videos:
            actions = sorted(
                (
                    a
                    for a in (video.annotations or {}).get("actions") or []
                    if isinstance(a, dict) and str(a.get("label") or "").strip()
                ),
                key=lambda a: float(a.get("start_s", 0)),
            )
            if len(actions) < n:
                skipped += 1
                continue
            step = len(actions) / n
            chosen = [str(actions[int(i * step)]["label"]).strip() for i in range(n)]
            if repeated(chosen):
                _skip(report, REPEATED_TEXTS)
                continue
            _text_item(
                study,
                cond,
                made,
                chosen,
                key=f"record:{video.pk}",
                footage=video,
                clip={"video_id": video.pk, "start_s": 0.0, "end_s": video.duration_s or 0.0},
            )
            made += 1
        report.items[cond.number] = made
        if skipped:
            report.skipped[f"videos with fewer than {n} annotated actions"] = skipped
        progress(f"  condition {cond.number} ({cond.label}): {made} items, {skipped} videos with too few actions")


def _extract_frames(wanted: set, size: int, report: BuildReport, progress) -> dict:
    """Frame elements for every (video, time) in ``wanted``: existing ones are reused (same video,
    time and size), the others are cut by ffmpeg in parallel (one process per CPU), then stored and
    recorded here, in the caller's transaction. Files written are added to ``report.files``.
    Raises MediaError if a frame cannot be read."""
    from annotator.media.services import local_copy
    from annotator.studies.models import Element

    out: dict[tuple[int, float], Element] = {}
    for e in Element.objects.filter(kind=Element.Kind.FRAME, size=size, video__in={v for v, _ in wanted}):
        out[(e.video_id, e.t_s)] = e
    todo = sorted(((v, t) for v, t in wanted if (v.pk, t) not in out), key=lambda vt: (vt[0].pk, vt[1]))
    # Stored in random order: a bucket's Last-Modified (S3 sends it with signed URLs) and element ids
    # must not follow the frames' times.
    random.SystemRandom().shuffle(todo)
    if not todo:
        return out
    with ExitStack() as stack:
        sources = {v.pk: stack.enter_context(local_copy(v.rendition.name or v.original.name)) for v, _ in todo}

        def cut(vt):
            video, t = vt
            data = ffmpeg.run(
                ffmpeg.square_frame_args(sources[video.pk], t, size=size), timeout_s=60, what=f"frame at {t:.3f} s"
            )
            if not data:
                raise ffmpeg.MediaError(f"{video.filename}: no frame at {t:.3f} s")
            return data

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for i, ((video, t), data) in enumerate(zip(todo, pool.map(cut, todo)), start=1):
                name = store_frame(data, report.files)
                out[(video.pk, t)] = Element.objects.create(
                    kind=Element.Kind.FRAME, video=video, t_s=t, size=size, image=name
                )
                report.frames_written += 1
                if i % 50 == 0 or i == len(todo):
                    progress(f"  frames: {i}/{len(todo)}")
    return out


def frame_name(data: bytes) -> str:
    """The storage name of a frame image: ``frames/<SHA-256 of the JPEG bytes>.jpg``. Participants
    see this name in the image URL, so it carries no time, no order, no video (issue 7)."""
    return f"frames/{hashlib.sha256(data).hexdigest()}.jpg"


def store_frame(data: bytes, written: list[str]) -> str:
    """Store a frame's JPEG under its content name (``frame_name``) and return the name. Identical
    bytes are stored once: a name already present is reused (and not added to ``written``, the files
    a failed build removes, since an earlier build may own it)."""
    name = frame_name(data)
    if default_storage.exists(name):
        return name
    saved = default_storage.save(name, ContentFile(data))
    written.append(saved)
    wrote(saved)
    return saved


# ------------------------------------------------------------------------------ taking part


def shown_elements(item) -> list[dict]:
    """What an ordering item shows, in the recorded shown order: per element its ``id``, ``kind``
    (frame or text), ``image`` (storage name of the frame, '' for a text), ``text`` and
    ``pinned_position`` (1-based true position of a hint, else None). The one source of both the
    participant's page (``payload``) and a model's input (``evaluate --study``, issue 18): the same
    frame files, texts, order and hints (EGO-FLIGHT seed 003 Sec. 3: the same recorded shuffles for
    every person and model). Server-side: it holds element ids."""
    from annotator.studies.models import Element

    shown = item.payload["shown"]
    elements = {e.pk: e for e in Element.objects.filter(pk__in=shown)}
    pinned = {item.truth[p - 1]: p for p in item.payload.get("hints", [])}
    return [
        {
            "id": eid,
            "kind": elements[eid].kind,
            "image": elements[eid].image.name if elements[eid].image else "",
            "text": elements[eid].text,
            "pinned_position": pinned.get(eid),
        }
        for eid in shown
    ]


def payload(trial) -> dict:
    """The elements in the recorded shown order (``shown_elements``), each as its per-trial
    ``handle``, ``kind``, image ``url`` (named by content hash) or ``text``, and ``pinned_position``
    (1-based) for hints; the condition's ``annotation`` text. No element ids, times, video ids or
    file names (issue 7)."""
    from annotator.qa.selectors import media_url
    from annotator.studies.handles import handles_of

    item = trial.item
    handles = handles_of(trial.pk, item.payload["shown"])
    return {
        "annotation": item.payload.get("annotation", ""),
        "elements": [
            {
                "handle": handles[e["id"]],
                "kind": e["kind"],
                "url": media_url(e["image"]) if e["image"] else "",
                "text": e["text"],
                "pinned_position": e["pinned_position"],
            }
            for e in shown_elements(item)
        ],
    }


def validate(trial, response) -> list[int]:
    """``response``: the trial's element handles in order (list of 16-hex strings). Returns element
    ids. Raises Invalid for anything that is not an ordering of the trial's elements, or that moves
    a pinned hint."""
    from annotator.studies.handles import element_ids

    if not isinstance(response, list) or not all(isinstance(h, str) for h in response) or len(response) > MAX_ELEMENTS:
        raise Invalid(
            "response must be the list of this trial's element handles, earliest first",
            errors={"response": "a list of handles"},
        )
    order = element_ids(trial.pk, trial.item.truth, response)
    _check(order, trial.item)
    return order


def _check(order: list, item) -> None:
    """Refuse a participant's order that is not a whole ordering of the item's elements. The message
    names no element: ``OrderingError`` lists element ids, and ids of text elements once followed
    their true order, so a refusal must not say which ids were missing (security review, issue 8)."""
    try:
        scoring.check_ordering(order, item.truth)
    except scoring.OrderingError:
        message = f"the answer must name each of the {len(item.truth)} elements exactly once"
        raise Invalid(message, errors={"response": message}) from None
    for pos in item.payload.get("hints", []):
        if order[pos - 1] != item.truth[pos - 1]:
            raise Invalid(f"the hint at position {pos} must stay where it is", errors={"response": "a hint moved"})


def validate_prediction(item, predicted) -> list[int]:
    """A model's predicted order: the item's element ids (``study_items`` lists them), earliest first."""
    if not isinstance(predicted, list):
        raise ValueError('"predicted" must be a list of element ids')
    try:
        scoring.check_ordering(predicted, item.truth)
    except scoring.OrderingError as exc:
        raise ValueError(str(exc)) from None
    return predicted


def score(rows: list[ScoreRow]) -> list[dict]:
    """Scores of many orderings (``scoring.ordering.score_many``): the six EGO-FLIGHT metrics plus
    ``position_accuracy``; hint elements are left out (seed 003 Sec. 4); no answer in time scores
    as the worst order (tau-b -1, nothing right)."""
    return scoring.score_many([(r.response, r.truth, r.payload.get("hints", []), r.timed_out) for r in rows])


def feedback(trial) -> dict:
    """A practice trial's true order as its handles, and whether the answer was exactly right."""
    from annotator.studies.handles import handles_of

    handles = handles_of(trial.pk, trial.item.truth)
    return {
        "correct": trial.response == trial.item.truth and not trial.timed_out,
        "truth": [handles[eid] for eid in trial.item.truth],
    }


def export(item) -> dict:
    """Researcher fields: ``shown`` and ``truth`` (element ids), ``hints`` (1-based), ``clip``."""
    return {
        "shown": item.payload["shown"],
        "truth": item.truth,
        "hints": item.payload.get("hints", []),
        "clip": item.payload.get("clip"),
        "annotation": item.payload.get("annotation", ""),
    }


def _clip_ranges(item) -> list[tuple]:
    """The footage an item's elements come from, (video id, start_s, end_s): its clip, or every part
    of a life log, whole, for a summary-ordering item over the log."""
    clip = item.payload.get("clip") or {}
    if isinstance(clip.get("life_log_id"), int):
        from annotator.media.models import VideoGroupMember

        return [
            (v, None, None)
            for v in VideoGroupMember.objects.filter(group_id=clip["life_log_id"]).values_list("video_id", flat=True)
        ]
    if isinstance(clip.get("video_id"), int):
        return [(clip["video_id"], clip.get("start_s"), clip.get("end_s"))]
    return [(item.footage_id, None, None)] if item.footage_id else []


def shows(item) -> list:
    """What a trial of ``item`` puts in front of the person (exposure ledger, issue 19): stills of
    its clip (frame items; text items show texts, no footage). Stills in a shuffled order give no
    order away, so they are recorded as frames, not footage."""
    from annotator.exposure.ledger import FRAMES, Shown
    from annotator.studies.models import Element

    shown = item.payload.get("shown") or []
    if not shown or not Element.objects.filter(pk=shown[0], kind=Element.Kind.FRAME).exists():
        return []
    return [Shown(FRAMES, v, a, b) for v, a, b in _clip_ranges(item)]


def needs(item):
    """What the item's truth rests on: the order of events in its footage."""
    from annotator.exposure.ledger import Needs

    return Needs(order_of=tuple(_clip_ranges(item)))


def reveals(item) -> list:
    """What a practice trial's feedback puts in front of the person (``feedback``): the true order of
    its clip, recorded as that footage played (it gives away the order of any overlapping clip)."""
    from annotator.exposure.ledger import FOOTAGE, Shown

    return [Shown(FOOTAGE, v, a, b) for v, a, b in _clip_ranges(item)]
