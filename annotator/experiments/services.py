"""Writes for ordering experiments: build one from a preset, import model predictions, score.

Building (``create_experiment``) cuts clips from the project's real, ready videos per length class,
samples each condition's frames evenly over a clip with ffmpeg at exact timestamps (resized to the
experiment's square size, stored once per video, time and size), and records each item's shuffle
seed and shown order. Scoring fills the metric columns of trials and predictions from
``annotator.scoring.ordering``; it runs in a Celery worker (``experiments.tasks.score_ordering``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from annotator import jobs
from annotator.adapters import ffmpeg
from annotator.errors import Conflict, Forbidden, Invalid
from annotator.experiments import selectors
from annotator.experiments.models import Clip, Condition, Element, Experiment, Item, Participant, Prediction, Trial
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
                annotation=s.annotation, hints=list(s.hints), baseline=s.baseline, item_kind=s.item_kind) for s in specs]
            if all(c.item_kind == Condition.ItemKind.TEXTS for c in conditions):
                _make_text_items(experiment, conditions, videos, report, progress)
                return report
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
            baseline = next(c for c in conditions if c.baseline)
            plan = [(cond, clip, index, False) for cond in conditions for index, clip in enumerate(trial_clips[cond.clip_length])]
            start_index = len(trial_clips["medium"])
            plan += [(baseline, clip, start_index + j, True) for j, clip in enumerate(practice_clips)]
            frames = _extract_frames(experiment, {(clip.video, t) for cond, clip, _, _ in plan
                                                  for t in ffmpeg.sample_times(clip.start_s, clip.end_s, cond.n_frames)},
                                     written, progress)
            for cond in conditions:
                made = [p for p in plan if p[0] is cond and not p[3]]
                for _, clip, index, practice in made:
                    _make_item(experiment, cond, clip, index, practice=practice, frames=frames)
                report.items[cond.number] = len(made)
                report.skipped[cond.number] = too_short[cond.clip_length]
                progress(f"  condition {cond.number} ({cond.label}): {len(made)} items, {too_short[cond.clip_length]} videos too short")
            for _, clip, index, practice in (p for p in plan if p[3]):
                _make_item(experiment, baseline, clip, index, practice=True, frames=frames)
            report.practice = len(practice_clips)
            report.frames_written = len(written)
    except BaseException:
        for name_ in written:  # the transaction rolled back: drop the files it wrote
            default_storage.delete(name_)
        raise
    return report


def _make_text_items(experiment, conditions, videos, report: CreateReport, progress) -> None:
    """Text-ordering items (X-LeBench summary ordering, seed 002 App. C.4): for each video with at
    least n annotated actions, n of them spread evenly over its timeline (in start order), as texts
    to put back in order. Videos with fewer actions are skipped and counted."""
    for cond in conditions:
        made = skipped = 0
        for video in videos:
            actions = sorted((a for a in (video.annotations or {}).get("actions") or []
                              if isinstance(a, dict) and str(a.get("label") or "").strip()), key=lambda a: float(a.get("start_s", 0)))
            if len(actions) < cond.n_frames:
                skipped += 1
                continue
            step = len(actions) / cond.n_frames
            chosen = [actions[int(i * step)] for i in range(cond.n_frames)]
            duration = video.duration_s or 0.0
            length_class = "short" if duration < 10 else "medium" if duration <= 25 else "long"
            clip, _ = Clip.objects.get_or_create(experiment=experiment, video=video, start_s=0.0, end_s=duration,
                                                 defaults={"length_class": length_class})
            elements = [Element.objects.create(kind=Element.Kind.TEXT, text=str(a["label"]).strip()) for a in chosen]
            seed = item_seed(experiment.seed, cond.number, made)
            order = ordering.shown_order(len(elements), seed, cond.hints)
            Item.objects.create(condition=cond, clip=clip, index=made, seed=seed, truth=[e.pk for e in elements],
                                shown=[elements[i].pk for i in order], hints=list(cond.hints))
            made += 1
        report.items[cond.number] = made
        report.skipped[cond.number] = skipped
        progress(f"  condition {cond.number} ({cond.label}): {made} items, {skipped} videos with too few actions")


def _make_item(experiment, cond: Condition, clip: Clip, index: int, *, practice: bool, frames: dict) -> Item:
    elements = [frames[(clip.video.pk, t)] for t in ffmpeg.sample_times(clip.start_s, clip.end_s, cond.n_frames)]
    seed = item_seed(experiment.seed, cond.number, index)
    order = ordering.shown_order(len(elements), seed, cond.hints)
    text = {"none": "", "brief": clip.brief, "comprehensive": clip.comprehensive or clip.brief}[cond.annotation]
    return Item.objects.create(condition=cond, clip=clip, index=index, practice=practice, seed=seed,
                               truth=[e.pk for e in elements], shown=[elements[i].pk for i in order],
                               hints=list(cond.hints), annotation=text)


def _extract_frames(experiment, wanted: set, written: list, progress) -> dict[tuple[int, float], Element]:
    """Frame elements for every (video, time) in ``wanted``: existing ones are reused (same video,
    time and size), the others are cut by ffmpeg in parallel (one process per CPU; each is a separate
    ffmpeg process, so threads do not contend), then stored and recorded here, in the caller's
    transaction. Raises MediaError if a frame cannot be read."""
    import os
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import ExitStack

    size = experiment.frame_size
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
            data = ffmpeg.run(ffmpeg.square_frame_args(sources[video.pk], t, size=size), timeout_s=60, what=f"frame at {t:.3f} s")
            if not data:
                raise ffmpeg.MediaError(f"{video.filename}: no frame at {t:.3f} s")
            return data

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for i, ((video, t), data) in enumerate(zip(todo, pool.map(cut, todo)), start=1):
                name = store_frame(data, written)
                out[(video.pk, t)] = Element.objects.create(kind=Element.Kind.FRAME, video=video, t_s=t, size=size, image=name)
                if i % 50 == 0 or i == len(todo):
                    progress(f"  frames: {i}/{len(todo)}")
    return out


def frame_name(data: bytes) -> str:
    """The storage name of a frame image: ``frames/<SHA-256 of the JPEG bytes>.jpg``. Participants
    see this name in the image URL, so it carries no time, no order, no video: a name made of the
    video's hash and the frame's timestamp (as before issue 7) let a script sort the frames."""
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
    return saved


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
    skipped; the others are stored, unscored, in one transaction (one statement per 2,000 lines)."""
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
    # INSERT ... ON CONFLICT in batches, in one transaction: a model's new prediction for an item
    # replaces its old one, unscored again.
    with transaction.atomic():
        Prediction.objects.bulk_create(
            [Prediction(experiment=experiment, model=model, item_id=item_id, predicted=predicted)
             for (model, item_id), predicted in rows.items()],
            update_conflicts=True, unique_fields=["model", "item"],
            update_fields=["experiment", "predicted", "scored_at", *ordering.METRICS], batch_size=2000)
    report.imported = len(rows)
    return report


SCORE_BATCH = 500


def score_pending(experiment_id: int, *, batch_size: int = SCORE_BATCH) -> int:
    """Score every answered trial and every prediction of the experiment not scored yet; returns
    how many rows this call scored. Safe to run many at once (a worker per answer, a command):

    1. In a transaction, claim up to ``batch_size`` unscored rows with ``SELECT ... FOR UPDATE OF
       <row> SKIP LOCKED``: rows another scorer holds are skipped, not waited for, and a row that
       another scorer scored and committed since this statement's snapshot is re-checked by
       PostgreSQL and no longer matches ``scored_at IS NULL``.
    2. Score the claimed rows (``annotator.scoring.ordering``) and write them in the same
       transaction, which releases the claim on commit.
    3. Repeat until no unclaimed, unscored row is left.

    So no row is scored twice and the counts of concurrent calls add up to the rows there were.
    """
    n = 0
    for model, answer_field, filters in ((Trial, "response", {"participant__experiment_id": experiment_id, "response__isnull": False}),
                                         (Prediction, "predicted", {"experiment_id": experiment_id})):
        while True:
            with transaction.atomic():
                rows = list(model.objects.select_for_update(skip_locked=True, of=("self",))
                            .filter(scored_at__isnull=True, **filters).select_related("item").order_by("pk")[:batch_size])
                if not rows:
                    break
                now = timezone.now()
                for row in rows:
                    scores = ordering.score(getattr(row, answer_field), row.item.truth, row.item.hints)
                    for metric, value in scores.as_dict().items():
                        setattr(row, metric, value)
                    row.scored_at = now
                model.objects.bulk_update(rows, [*ordering.METRICS, "scored_at"], batch_size=2000)
                n += len(rows)
    return n


# ------------------------------------------------------------------------------ taking part

NOT_A_PARTICIPANT = ("You cannot take part in this study: your role ({role}) lets you see or export its true orders, "
                     "so your answers would not be a fair human baseline. Take part with an annotator account.")


def require_participant_role(user, project: Project) -> None:
    """Only annotators take part (issue 7, B): anyone who can export a study's truth (superusers,
    and the project's admins, reviewers and researchers) is refused with Forbidden, in plain words.
    Non-members are the caller's concern (they get 404 before this)."""
    from annotator.projects.access import role_in
    from annotator.projects.models import Role

    role = role_in(user, project)
    if user.is_superuser:
        raise Forbidden(NOT_A_PARTICIPANT.format(role="superuser"))
    if role != Role.ANNOTATOR:
        raise Forbidden(NOT_A_PARTICIPANT.format(role=role or "none"))

def enroll(experiment: Experiment, user) -> Participant:
    """Make ``user`` a participant (once; a second call returns the same one) and assign their items.

    Assignment (EGO-FLIGHT Sec. 3.5): ``conditions_per_participant`` conditions, those with the
    fewest participants so far first (ties broken by a seeded draw), and ``questions_per_participant``
    scored items split evenly across them, never two items of the same clip (e.g. the 4-frame and
    4-frame-with-hints versions), never a clip of footage they held or completed a verification
    unit of (``selectors.footage_seen_in_queues``), least-used items first; plus the practice items. The order of the
    scored trials is shuffled with a seed derived from the experiment and the participant.

    Raises Forbidden (nothing written) for anyone but the project's annotators
    (``require_participant_role``).
    """
    import random

    from django.db.models import Count

    require_participant_role(user, experiment.project)
    with transaction.atomic():
        Experiment.objects.select_for_update().get(pk=experiment.pk)  # one enrolment at a time per experiment
        existing = Participant.objects.filter(experiment=experiment, user=user).first()
        if existing is not None:
            return existing
        participant = Participant.objects.create(experiment=experiment, user=user)
        rng = random.Random(f"{experiment.seed}:{participant.pk}")
        conditions = list(Condition.objects.filter(experiment=experiment).annotate(n=Count("participants")))
        rng.shuffle(conditions)
        conditions.sort(key=lambda c: c.n)  # stable: the shuffle breaks ties
        chosen = conditions[: experiment.conditions_per_participant]
        participant.conditions.set(chosen)
        per = [experiment.questions_per_participant // len(chosen)] * len(chosen) if chosen else []
        for i in range(experiment.questions_per_participant - sum(per) if chosen else 0):
            per[i] += 1
        used_clips: set[int] = set()
        # Footage the person could download from a verification queue would give its frames' order away.
        seen = selectors.footage_seen_in_queues(user, experiment.project_id)
        picked: list[Item] = []
        for cond, quota in zip(chosen, per):
            candidates = (Item.objects.filter(condition=cond, practice=False).select_related("clip")
                          .annotate(n=Count("trials")).order_by("n", "index"))
            fresh = [item for item in candidates
                     if item.clip_id not in used_clips and item.clip.video_id not in seen][:quota]
            picked += fresh
            used_clips.update(item.clip_id for item in fresh)
        rng.shuffle(picked)
        practice = list(Item.objects.filter(condition__experiment=experiment, practice=True).order_by("index")[: experiment.practice_items])
        Trial.objects.bulk_create(
            [Trial(participant=participant, item=item, position=i, practice=True) for i, item in enumerate(practice)]
            + [Trial(participant=participant, item=item, position=i, practice=False) for i, item in enumerate(picked)])
    return participant


def current_trial(participant) -> Trial | None:
    """The trial the participant is on: the first unanswered practice trial, then the first
    unanswered scored one; None when all are answered. Marks the server's ``served_at`` the first
    time a trial is served (a reload serves the same trial again and keeps the first time)."""
    trial = (Trial.objects.filter(participant=participant, response__isnull=True).select_related("item__condition")
             .order_by("-practice", "position").first())
    if trial is not None and trial.served_at is None:
        trial.served_at = timezone.now()
        Trial.objects.filter(pk=trial.pk, served_at__isnull=True).update(served_at=trial.served_at)
    return trial


def mark_shown(participant, trial_id: int) -> Trial:
    """The page reports that trial ``trial_id`` is on screen (every element decoded and painted):
    stamp the server's ``shown_at`` the first time, so the trial's server time starts here and not
    when it was served (a practice item's feedback is read between the two). Later reports (a
    reload) keep the first time; returns the trial. Raises Conflict for a trial that is not the
    participant's current one (nothing written)."""
    current = current_trial(participant)
    if current is None or current.pk != trial_id:
        raise Conflict("this is not your current trial")
    if current.shown_at is None:
        # Conditional: two reports racing stamp one time, the first.
        Trial.objects.filter(pk=current.pk, shown_at__isnull=True).update(shown_at=timezone.now())
        current.refresh_from_db(fields=["shown_at"])
    return current


def answer_trial(participant, trial_id: int, order: list, client_rt_ms: float, idempotency_key: str) -> Trial:
    """Record the participant's order (element ids) for their current trial.

    Refuses (Conflict) a trial that is not theirs or not the current one, unless it is the
    same answer sent again (same idempotency key), which returns the stored trial unchanged.
    Refuses (Invalid) an order that is not a permutation of the item's elements or moves a hint frame;
    a trial the page never reported shown (``mark_shown``); and a response time (ms) that is not
    positive or is longer than the server's time since ``shown_at`` plus ``ORDERING_RT_SLACK_MS``.
    Whatever it refuses, it writes nothing. On success stores the answer with the server's time,
    moves the participant to the next stage when a stage is finished, applies the exclusion rules
    when the last trial is answered, and queues scoring on commit.
    """
    from django.conf import settings

    with transaction.atomic():
        trial = Trial.objects.select_for_update().select_related("item").filter(pk=trial_id, participant=participant).first()
        if trial is None:
            raise Conflict("not one of your trials")
        if trial.response is not None:
            if idempotency_key and trial.idempotency_key == idempotency_key:
                return trial
            raise Conflict("this trial is already answered")
        current = current_trial(participant)
        if current is None or current.pk != trial.pk:
            raise Conflict("this is not your current trial")
        try:
            ordering.check_ordering(order, trial.item.truth)
        except ordering.OrderingError as exc:
            raise Invalid(str(exc)) from None
        for pos in trial.item.hints:
            if order[pos - 1] != trial.item.truth[pos - 1]:
                raise Invalid(f"the hint frame at position {pos} must stay where it is")
        if not isinstance(client_rt_ms, (int, float)) or not 0 < client_rt_ms < 24 * 3600 * 1000:
            raise Invalid("client_rt_ms must be a positive number of milliseconds", errors={"client_rt_ms": "must be positive"})
        if trial.shown_at is None:
            raise Invalid("the page has not reported this trial as shown yet", errors={"client_rt_ms": "trial not shown yet"})
        now = timezone.now()
        elapsed_ms = (now - trial.shown_at).total_seconds() * 1000
        if client_rt_ms > elapsed_ms + settings.ORDERING_RT_SLACK_MS:
            raise Invalid(f"client_rt_ms {client_rt_ms:.0f} is longer than the {elapsed_ms:.0f} ms the server has seen "
                          "since the trial was shown", errors={"client_rt_ms": "longer than the server's time"})
        trial.response, trial.client_rt_ms = list(order), float(client_rt_ms)
        trial.answered_at, trial.idempotency_key = now, idempotency_key or ""
        trial.save(update_fields=["response", "client_rt_ms", "answered_at", "idempotency_key"])
        participant = Participant.objects.select_for_update().get(pk=participant.pk)
        remaining = Trial.objects.filter(participant=participant, response__isnull=True)
        if not remaining.filter(practice=True).exists():
            participant.stage = Participant.Stage.TRIALS if remaining.exists() else Participant.Stage.DONE
        if participant.stage == Participant.Stage.DONE and participant.finished_at is None:
            participant.finished_at = timezone.now()
            participant.excluded, participant.exclusion_reasons = exclusion_of(participant)
        participant.save()
        experiment_id = participant.experiment_id
        _queue_scoring(experiment_id)  # the job row in this transaction, its message on commit
    return trial


def _queue_scoring(experiment_id: int) -> None:
    """Queue scoring of the experiment: one job row per experiment, so answers arriving while a
    scoring job waits add no message; one arriving while it runs queues it once more."""
    jobs.enqueue("experiments.score", experiment_id)


def exclusion_of(participant) -> tuple[bool, list[str]]:
    """Apply the experiment's exclusion rules (EGO-FLIGHT Sec. 3.5: "unreasonably little time or
    ... clear misunderstanding of the task") to a finished participant: ``min_median_rt_s`` (the
    median client response time of scored trials) and ``min_practice_correct`` (practice items
    exactly right). Returns (excluded, reasons); the data are kept either way."""
    import statistics

    rules = participant.experiment.exclusion or {}
    reasons = []
    trials = list(Trial.objects.filter(participant=participant).select_related("item"))
    rts = [t.client_rt_ms for t in trials if not t.practice and t.client_rt_ms is not None]
    limit = rules.get("min_median_rt_s")
    if limit is not None and rts and statistics.median(rts) / 1000 < float(limit):
        reasons.append(f"median response time {statistics.median(rts) / 1000:.2f} s is under {float(limit):g} s")
    need = rules.get("min_practice_correct")
    if need is not None:
        correct = sum(1 for t in trials if t.practice and t.response == t.item.truth)
        if correct < int(need):
            reasons.append(f"{correct} practice items right, fewer than {int(need)}")
    return bool(reasons), reasons


def start(participant) -> None:
    """Leave the instructions: on to the practice items, or straight to the trials if there are none."""
    if participant.stage == Participant.Stage.INSTRUCTIONS:
        has_practice = Trial.objects.filter(participant=participant, practice=True).exists()
        participant.stage = Participant.Stage.PRACTICE if has_practice else Participant.Stage.TRIALS
        participant.save(update_fields=["stage"])
