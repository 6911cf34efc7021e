"""Writes for ordering experiments: build one from a preset, import model predictions, score.

Building (``create_experiment``) cuts clips from the project's real, ready videos per length class,
samples each condition's frames evenly over a clip with ffmpeg at exact timestamps (resized to the
experiment's square size, stored once per video, time and size), and records each item's shuffle
seed and shown order. Scoring fills the metric columns of trials and predictions from
``annotator.scoring.ordering``; it runs in a Celery worker (``workers.tasks.score_ordering``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from annotator.adapters import ffmpeg
from annotator.experiments.models import Clip, Condition, Element, Experiment, Item, Prediction, Trial
from annotator.experiments.presets import PRESETS, WINDOW_S
from annotator.media.models import Video
from annotator.media.services import local_copy
from annotator.projects.models import Project
from annotator.scoring import ordering


@dataclass
class CreateReport:
    """What ``create_experiment`` made: items per condition number, clips skipped per condition
    (too short for its length class, or fewer clips than the practice set needs), frames written."""

    experiment: Experiment
    items: dict[int, int] = field(default_factory=dict)
    practice: int = 0
    skipped: dict[int, int] = field(default_factory=dict)
    frames_written: int = 0


def item_seed(experiment_seed: int, condition_number: int, index: int) -> int:
    """The recorded shuffle seed of an item: 48 bits of SHA-256 of (experiment seed, condition, index)."""
    return int(hashlib.sha256(f"{experiment_seed}:{condition_number}:{index}".encode()).hexdigest()[:12], 16)


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
    for a in sorted((a for a in annotations.get("actions") or [] if isinstance(a, dict)), key=lambda a: a.get("start_s", 0)):
        s, e = float(a.get("start_s", 0)), float(a.get("end_s", 0))
        if e > start_s and s < end_s and a.get("label"):
            steps.append(f"{max(s, start_s) - start_s:.1f}-{min(e, end_s) - start_s:.1f} s: {a['label']}")
    return "; ".join(steps)


def create_experiment(project: Project, name: str, preset: str, *, frame_size: int = 224, seed: int = 0,
                      practice_items: int = 3, progress: Callable[[str], None] = lambda _: None) -> CreateReport:
    """Build experiment ``name`` of ``preset`` (``ego-flight``) from the project's real, ready videos.

    Steps: create the conditions; cut clips per length class (``presets.WINDOW_S``); keep the last
    ``practice_items`` medium clips for practice items (baseline condition) so they never appear as
    trials; for every condition and every clip of its class make an item: sample ``n_frames``
    times evenly over the clip (segment centres), reuse or write each frame, draw the shown order
    from the item's seed with hint positions pinned. Raises ValueError for an unknown preset or an
    existing name, MediaError if ffmpeg cannot read a frame (nothing is kept then).
    """
    specs = PRESETS.get(preset)
    if specs is None:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    if Experiment.objects.filter(project=project, name=name).exists():
        raise ValueError(f"experiment {name!r} already exists in {project.slug}")
    videos = list(Video.objects.filter(project=project, status=Video.Status.READY, source=Video.Source.REAL).order_by("id"))
    written: list[str] = []
    try:
        with transaction.atomic():
            experiment = Experiment.objects.create(project=project, name=name, preset=preset, seed=seed,
                                                   frame_size=frame_size, practice_items=practice_items)
            report = CreateReport(experiment)
            conditions = [Condition.objects.create(
                experiment=experiment, number=s.number, label=s.label, n_frames=s.n_frames, clip_length=s.clip_length,
                annotation=s.annotation, hints=list(s.hints), baseline=s.baseline) for s in specs]
            clips: dict[str, list[Clip]] = {}
            for length_class in WINDOW_S:
                clips[length_class] = [
                    Clip.objects.create(experiment=experiment, video=v, start_s=a, end_s=b, length_class=length_class,
                                        brief=str((v.annotations or {}).get("brief") or (v.annotations or {}).get("description") or ""),
                                        comprehensive=_comprehensive(v.annotations or {}, a, b))
                    for v in videos for a, b in _windows(v.duration_s or 0.0, length_class)
                ]
            practice_clips = clips["medium"][-practice_items:] if practice_items and len(clips["medium"]) > practice_items else []
            trial_clips = {k: [c for c in v if c not in practice_clips] for k, v in clips.items()}
            too_short = {k: sum(1 for v in videos if not _windows(v.duration_s or 0.0, k)) for k in WINDOW_S}
            frame_cache: dict[tuple[int, float], Element] = {}
            for cond in conditions:
                made = 0
                for index, clip in enumerate(trial_clips[cond.clip_length]):
                    _make_item(experiment, cond, clip, index, practice=False, cache=frame_cache, written=written)
                    made += 1
                report.items[cond.number] = made
                report.skipped[cond.number] = too_short[cond.clip_length]
                progress(f"  condition {cond.number} ({cond.label}): {made} items, {too_short[cond.clip_length]} videos too short")
            baseline = next(c for c in conditions if c.baseline)
            start = len(trial_clips["medium"])
            for j, clip in enumerate(practice_clips):
                _make_item(experiment, baseline, clip, start + j, practice=True, cache=frame_cache, written=written)
            report.practice = len(practice_clips)
            report.frames_written = len(written)
    except BaseException:
        for name_ in written:  # the transaction rolled back: drop the files it wrote
            default_storage.delete(name_)
        raise
    return report


def _make_item(experiment, cond: Condition, clip: Clip, index: int, *, practice: bool, cache: dict, written: list) -> Item:
    times = ffmpeg.sample_times(clip.start_s, clip.end_s, cond.n_frames)
    elements = [_frame(clip.video, t, experiment.frame_size, cache, written) for t in times]
    seed = item_seed(experiment.seed, cond.number, index)
    order = ordering.shown_order(len(elements), seed, cond.hints)
    text = {"none": "", "brief": clip.brief, "comprehensive": clip.comprehensive or clip.brief}[cond.annotation]
    return Item.objects.create(condition=cond, clip=clip, index=index, practice=practice, seed=seed,
                               truth=[e.pk for e in elements], shown=[elements[i].pk for i in order],
                               hints=list(cond.hints), annotation=text)


def _frame(video: Video, t_s: float, size: int, cache: dict, written: list) -> Element:
    key = (video.pk, t_s)
    if key in cache:
        return cache[key]
    element = Element.objects.filter(kind=Element.Kind.FRAME, video=video, t_s=t_s, size=size).first()
    if element is None:
        with local_copy(video.rendition.name or video.original.name) as src:
            data = ffmpeg.run(ffmpeg.square_frame_args(src, t_s, size=size), timeout_s=60, what=f"frame at {t_s:.3f} s")
        if not data:
            raise ffmpeg.MediaError(f"{video.filename}: no frame at {t_s:.3f} s")
        name = default_storage.save(f"frames/{video.sha256[:16]}/{size}/{t_s:09.3f}.jpg", ContentFile(data))
        written.append(name)
        element = Element.objects.create(kind=Element.Kind.FRAME, video=video, t_s=t_s, size=size, image=name)
    cache[key] = element
    return element


# ------------------------------------------------------------------------------ items and models

def export_items(experiment: Experiment) -> Iterator[dict]:
    """One object per scored item (practice items left out), for ``ordering_items``: ``item_id``,
    ``condition`` (its variables), ``shown`` and ``truth`` (element ids), ``hints`` (1-based)."""
    for item in Item.objects.filter(condition__experiment=experiment, practice=False).select_related("condition").order_by("condition__number", "index"):
        yield {"item_id": item.pk, "condition": item.condition.variables(), "shown": item.shown, "truth": item.truth,
               "hints": item.hints}


@dataclass
class ImportReport:
    """``imported`` lines stored (new or replacing the model's earlier prediction for the item);
    ``errors`` as (line number, message) for lines skipped."""

    imported: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)


def import_predictions(experiment: Experiment, lines: Iterable[str]) -> ImportReport:
    """Store model predictions from JSONL lines of ``model``, ``item_id``, ``predicted`` (element ids
    in predicted order). A bad line (not JSON, missing keys, an item of another experiment, a
    predicted order that is not the item's elements) is reported with its 1-based number and
    skipped; the others are stored, unscored, in one transaction."""
    report = ImportReport()
    items = {i.pk: i for i in Item.objects.filter(condition__experiment=experiment, practice=False)}
    rows: dict[tuple[str, int], list] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not JSON: {exc}") from None
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            model, item_id, predicted = data.get("model"), data.get("item_id"), data.get("predicted")
            if not isinstance(model, str) or not model.strip():
                raise ValueError('"model" must be a non-empty string')
            if not isinstance(item_id, int) or item_id not in items:
                raise ValueError(f"item_id {item_id!r} is not an item of {experiment.name}")
            if not isinstance(predicted, list):
                raise ValueError('"predicted" must be a list of element ids')
            ordering.check_ordering(predicted, items[item_id].truth)
        except (ValueError, ordering.OrderingError) as exc:
            report.errors.append((number, str(exc)))
            continue
        rows[(model.strip(), item_id)] = predicted
    with transaction.atomic():
        for (model, item_id), predicted in rows.items():
            Prediction.objects.update_or_create(
                experiment=experiment, model=model, item_id=item_id,
                defaults={"predicted": predicted, "scored_at": None, **{m: None for m in ordering.METRICS}})
            report.imported += 1
    return report


def score_pending(experiment_id: int) -> int:
    """Score every answered trial and every prediction of the experiment not scored yet; returns
    how many were scored. Idempotent: scored rows are skipped."""
    now = timezone.now()
    n = 0
    for model, answer_field, filters in ((Trial, "response", {"participant__experiment_id": experiment_id, "response__isnull": False}),
                                         (Prediction, "predicted", {"experiment_id": experiment_id})):
        rows = list(model.objects.filter(scored_at__isnull=True, **filters).select_related("item"))
        for row in rows:
            scores = ordering.score(getattr(row, answer_field), row.item.truth, row.item.hints)
            for metric, value in scores.as_dict().items():
                setattr(row, metric, value)
            row.scored_at = now
        model.objects.bulk_update(rows, [*ordering.METRICS, "scored_at"], batch_size=2000)
        n += len(rows)
    return n
