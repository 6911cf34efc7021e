"""Evaluations: start, execute, cancel.

``start`` is the one entry point (the ``evaluate`` command, the leaderboard page and the API call
it). It writes the evaluation and one prediction row per verified QA pair and video asked of, then
queues the job ``evaluation.run`` on commit. The job (``execute``) works the queued predictions on
as many threads as the two servers allow (the larger concurrency, at most
``DRAFT_RUN_MAX_THREADS``; every request also holds one of its server's slots in Redis), for up to
``DRAFT_RUN_SLICE_S`` seconds, then queues itself again if items remain. Per item, in its thread:

1. claim the row (``queued``/``running`` -> ``running``, a conditional update: a redelivered job
   never works an item twice at once... unless its first delivery died, which is what ``running``
   being claimable is for);
2. sample ``n_frames`` frames evenly over the clip (ffmpeg) and ask the model (free text); an item
   of several videos (an ego-exo set, labelled videos) gets an even share from each, labelled;
3. multiple choice: extract the option letter and score it exactly; open: ask the judge;
4. save the item whole, with its ModelCall ids and their cost; a failure (the model's, the
   judge's, the video's) is saved on the item with its reason and the run goes on.

Unchanged inputs are answered from the engine's content-hash cache, so evaluating the same model
again (or after a crash) costs nothing for what was answered before.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import re
from collections.abc import Callable

from django.db import transaction
from django.db.models import Sum
from django.db.models.functions import Coalesce

from annotator import jobs
from annotator.adapters import ffmpeg
from annotator.errors import Invalid
from annotator.evaluation import prompts
from annotator.evaluation.metrics import extract_choice, letter
from annotator.evaluation.models import FRAMES_MAX, FRAMES_MIN, Ablation, Evaluation, Prediction, Rubric
from annotator.inference import engine
from annotator.inference import runs as inference_runs
from annotator.inference.frames import FRAME_MAX_SIDE, frame_key, sample_frames
from annotator.inference.models import ModelCall, ModelServer
from annotator.media import lifelogs
from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.media.selectors import ordered_members
from annotator.projects.models import Project
from annotator.qa.models import QAPair, QAType
from annotator.scoring.localisation import MAX_INTERVALS, TIOU_THRESHOLD, IntervalParseError, parse_intervals, tiou

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ItemSource:
    """How the predictions of one ``Prediction.Role`` not built here are asked, read and kept
    (``study``: a study's items, ``evaluation.study_items``, which registers itself with
    ``register_source``; this module imports none of them):

    - ``ask(evaluation, p) -> (stage, input)``: the stage and the model's input;
    - ``read(p) -> response``: the reply in the source's stored form (None when unreadable);
    - ``record(evaluation)``: called when any evaluation settles (the source skips what is not its).
    """

    ask: Callable
    read: Callable
    record: Callable


SOURCES: dict[str, ItemSource] = {}


def register_source(role: str, source: ItemSource) -> ItemSource:
    """Make ``source`` answer the predictions of ``role``. Returns it."""
    SOURCES[role] = source
    return source


ACTIVE = (Prediction.Status.QUEUED, Prediction.Status.RUNNING)


# ----------------------------------------------------------------------------- starting


def server_of(project: Project, name: str, what: str) -> ModelServer:
    """The project's model server ``name``. Raises Invalid listing the known ones (``what``: the
    field named in the error)."""
    server = ModelServer.objects.filter(project=project, name=name).first()
    if server is None:
        known = (
            ", ".join(ModelServer.objects.filter(project=project).values_list("name", flat=True))
            or "none yet: add one with the model_server command"
        )
        raise Invalid(f"project {project.slug} has no model server {name!r} (known: {known})", errors={what: "unknown"})
    return server


SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")


def check(project: Project, *, server: str, model: str, n_frames, qa_type: str, judge_server: str, rubric: str) -> None:
    """Refuse, with Invalid naming the field, what ``start`` cannot run: no server, names that are
    not slugs, a model name that cannot be stored, frames outside 1-64, an unknown rubric or QA type."""
    if not server:
        raise Invalid("name the model server of the model to evaluate (--server NAME)", errors={"server": "required"})
    for field, value in (("server", server), ("judge_server", judge_server), ("qa_type", qa_type)):
        if value and not SLUG.fullmatch(value):
            raise Invalid(f"{field} is a name of at most 64 letters, digits, - and _", errors={field: "not a name"})
    if "\x00" in model or any(0xD800 <= ord(c) <= 0xDFFF for c in model):
        raise Invalid("a model name cannot hold NUL characters or lone surrogates", errors={"model": "not storable"})
    if isinstance(n_frames, bool) or not isinstance(n_frames, int) or not FRAMES_MIN <= n_frames <= FRAMES_MAX:
        raise Invalid(
            f"frames must be a whole number from {FRAMES_MIN} to {FRAMES_MAX}", errors={"frames": "out of bounds"}
        )
    if rubric not in Rubric.values:
        raise Invalid(f"rubric must be one of {', '.join(Rubric.values)}", errors={"rubric": "unknown"})
    if len(model) > 200:
        raise Invalid("a model name is at most 200 characters", errors={"model": "too long"})
    if qa_type and not QAType.objects.filter(project=project, slug=qa_type).exists():
        raise Invalid(f"project {project.slug} has no QA type {qa_type!r}", errors={"qa_type": "unknown"})


def _kind(pair: QAPair) -> str:
    if pair.qa_type.answer_kind == QAType.AnswerKind.INTERVAL and pair.answer_start_s is not None:
        return Prediction.Kind.INTERVAL
    return Prediction.Kind.MCQ if pair.options else Prediction.Kind.OPEN


def _life_log_item(evaluation: Evaluation, pair: QAPair) -> Prediction:
    """The one prediction of a pair of a life-log unit: asked of the whole log in virtual time
    (``video`` is its first part; clip, truth and answers in virtual seconds)."""
    first = min(pair.unit.group.members.all(), key=lambda m: (m.role != VideoGroupMember.Role.PART, m.position))
    return _whole_item(evaluation, pair, Prediction.Role.LIFE_LOG, first.video)


def _whole_item(evaluation: Evaluation, pair: QAPair, role: str, video: Video) -> Prediction:
    """The one prediction of ``pair`` asked once of all its videos (a life log, an ego-exo set,
    labelled videos), ``video`` standing for them; clip and truth as the pair has them."""
    return Prediction(
        evaluation=evaluation,
        qa_pair=pair,
        video=video,
        role=role,
        kind=_kind(pair),
        qa_type=pair.qa_type.slug,
        illumination=video.illumination or "unknown",
        source=video.source or "unknown",
        provenance=pair.provenance,
        question=pair.question,
        truth=pair.answer,
        options=pair.options,
        answer_index=pair.answer_index,
        clip_start_s=pair.clip_start_s,
        clip_end_s=pair.clip_end_s,
        truth_start_s=pair.answer_start_s,
        truth_end_s=pair.answer_end_s,
    )


def _items(evaluation: Evaluation, pairs) -> list[Prediction]:
    """Prediction rows for ``pairs``: one on the pair's video, or, for a pair of a day-night unit,
    one on the day clip and one on the night clip (night time = day time + the offset), or, for a
    pair of a life-log unit, one on the log in virtual time (``_life_log_item``). A pair with
    labelled videos (``QAPair.videos``, options that are videos) is one ``videos`` item over them,
    a pair of an ego-exo unit one ``ego_exo`` item over every view of the set (``_ask_videos``). A
    pair of an interval QA type with its answer interval is an ``interval`` item (scored by tIoU)."""
    out = []
    for pair in pairs:
        if pair.videos:
            out.append(_whole_item(evaluation, pair, Prediction.Role.VIDEOS, pair.video))
            continue
        if pair.unit.group_id is not None and pair.unit.group.kind == VideoGroup.Kind.LIFE_LOG:
            out.append(_life_log_item(evaluation, pair))
            continue
        if pair.unit.group_id is not None and pair.unit.group.kind == VideoGroup.Kind.EGO_EXO:
            ego = ordered_members(pair.unit.group.members.all())[0]
            out.append(_whole_item(evaluation, pair, Prediction.Role.EGO_EXO, ego.video))
            continue
        if pair.unit.group_id is not None:
            members = {m.role: m for m in pair.unit.group.members.all()}
            day = members.get(VideoGroupMember.Role.DAY)
            targets = [
                (role, m.video, m.offset_s - (day.offset_s if day else 0.0))
                for role, m in sorted(members.items())
                if role in (Prediction.Role.DAY, Prediction.Role.NIGHT)
            ]
        else:
            targets = [(Prediction.Role.SINGLE, pair.video, 0.0)]
        for role, video, shift in targets:
            end = pair.clip_end_s + shift
            if video.duration_s:
                end = min(end, video.duration_s)
            out.append(
                Prediction(
                    evaluation=evaluation,
                    qa_pair=pair,
                    video=video,
                    role=role,
                    kind=_kind(pair),
                    truth_start_s=pair.answer_start_s,
                    truth_end_s=pair.answer_end_s,
                    qa_type=pair.qa_type.slug,
                    illumination=video.illumination or (role if role != "single" else "unknown"),
                    source=video.source or "unknown",
                    provenance=pair.provenance,
                    question=pair.question,
                    truth=pair.answer,
                    options=pair.options,
                    answer_index=pair.answer_index,
                    clip_start_s=pair.clip_start_s + shift,
                    clip_end_s=end,
                )
            )
    return out


def start(
    project: Project,
    *,
    server: str,
    model: str = "",
    n_frames: int = 8,
    qa_type: str = "",
    judge_server: str = "",
    rubric: str = Rubric.EGONIGHT,
    use_cache: bool = True,
    ablation: str = "",
    user=None,
) -> Evaluation:
    """Start evaluating ``model`` (default: the server's) on ``server`` over the project's verified
    QA pairs (of ``qa_type`` only, when given), open answers judged by the model of ``judge_server``
    (default: ``server``'s own model) with ``rubric``; ``n_frames`` frames per clip (1 to 64);
    ``ablation`` one of ``Ablation`` (recorded, its own column in reports). Queues the work on
    commit; returns the evaluation. Raises Invalid naming what to fix (an unknown server, QA type
    or ablation, frames out of bounds, no verified QA pair)."""
    check(
        project,
        server=server,
        model=model,
        n_frames=n_frames,
        qa_type=qa_type,
        judge_server=judge_server,
        rubric=rubric,
    )
    if ablation not in Ablation.values:
        raise Invalid(
            f"ablation must be one of {', '.join(v for v in Ablation.values if v)}", errors={"ablation": "unknown"}
        )
    evaluated = server_of(project, server, "server")
    judge = server_of(project, judge_server, "judge_server") if judge_server else evaluated
    endpoint = {**evaluated.snapshot(), "model": model or evaluated.model}
    pairs = QAPair.objects.filter(project=project, status=QAPair.Status.VERIFIED, unit__purpose="real")  # no copies
    if qa_type:
        pairs = pairs.filter(qa_type__slug=qa_type)
    pairs = (
        pairs.select_related("qa_type", "video", "unit").prefetch_related("unit__group__members__video").order_by("id")
    )
    with transaction.atomic():
        evaluation = Evaluation(
            project=project,
            server=evaluated,
            judge_server=judge,
            model=endpoint["model"],
            judge_model=judge.model,
            endpoint=endpoint,
            judge_endpoint=judge.snapshot(),
            n_frames=n_frames,
            qa_type=qa_type,
            rubric=rubric,
            use_cache=use_cache,
            ablation=ablation,
            prompt_version=prompts.prompt_version(rubric),
            created_by=user,
        )
        evaluation.save()
        items = _items(evaluation, pairs)
        if not items:
            what = f" of QA type {qa_type}" if qa_type else ""
            raise Invalid(
                f"project {project.slug} has no verified QA pair{what} to evaluate on yet",
                errors={"qa_type" if qa_type else "project": "no verified QA"},
            )
        Prediction.objects.bulk_create(items, batch_size=2000)
        jobs.enqueue("evaluation.run", evaluation.pk)
    return evaluation


# ----------------------------------------------------------------------------- executing


def _call(
    stage: engine.Stage,
    endpoint: engine.Endpoint,
    inp: engine.StageInput,
    evaluation: Evaluation,
    cancelled,
    calls: list[int],
) -> tuple[dict, int | None]:
    """``engine.call_stage``, adding the ids of the calls it stored for this item (every attempt, or
    the cache hit; found by the cache key and the item's id in the stored request) to ``calls``;
    returns (output, id of the call that answered). Two items asking the same thing at once each
    get only their own calls."""
    key = engine.cache_key(stage, endpoint, inp)
    try:
        output = engine.call_stage(
            stage, endpoint, inp, project_id=evaluation.project_id, use_cache=evaluation.use_cache, cancelled=cancelled
        )
    finally:
        rows = list(
            ModelCall.objects.filter(
                project_id=evaluation.project_id, cache_key=key, request__prediction=inp.record["prediction"]
            )
            .order_by("id")
            .values_list("id", "error")
        )
        calls.extend(i for i, _ in rows if i not in calls)
    answered = [i for i, error in rows if not error]
    return output, (answered[-1] if answered else None)


def _frames(video: Video, times_s: list[float]):
    """(cache key, loader) of the frames, as the drafting pipelines sample them."""
    return frame_key(video, times_s, FRAME_MAX_SIDE), lambda: sample_frames(video, times_s, FRAME_MAX_SIDE)


def _usable(video: Video | None) -> Video:
    if video is None:
        raise Invalid("the video of this QA pair is gone")
    if video.status != Video.Status.READY:
        raise Invalid(f"video {video.filename} is not ready ({video.status}); frames cannot be sampled")
    if not (video.rendition.name or video.original.name):
        raise Invalid(f"video {video.filename} has no stored file; frames cannot be sampled")
    return video


def recorded_times(parts: list[lifelogs.Part], start_s: float, end_s: float, n: int) -> list[tuple[int, float]]:
    """``n`` moments spread evenly over the recorded seconds of virtual ``start_s``..``end_s``
    (gaps have no frames, so they take none), as (index into parts, local seconds), in time order:
    the middles of n equal shares of the recorded time. Empty when nothing is recorded there."""
    segments = [(i, max(start_s, p.offset_s), min(end_s, p.end_s)) for i, p in enumerate(parts)]
    segments = [(i, a, b) for i, a, b in segments if b > a]
    total = sum(b - a for _, a, b in segments)
    out: list[tuple[int, float]] = []
    if total <= 0 or n < 1:
        return out
    for j in range(n):
        x = (j + 0.5) * total / n
        for i, a, b in segments:
            if x < b - a or (i, a, b) == segments[-1]:
                out.append((i, round(a + min(x, b - a) - parts[i].offset_s, 3)))
                break
            x -= b - a
    return out


def _n_frames(evaluation: Evaluation, n: int | None = None) -> int:
    """Frames per input: ``n`` (default the evaluation's ``n_frames``), 1 under ``one_frame``."""
    return 1 if evaluation.ablation == Ablation.ONE_FRAME else (n or evaluation.n_frames)


def shuffled_order(n: int, rng: random.Random) -> list[int]:
    """A permutation of ``range(n)`` drawn from ``rng`` that is never the identity when ``n >= 2``:
    a "shuffled" video whose frames came out in their own order would test nothing (VUDG's
    static-bias check, seed 004). Draws again until the order moves (expected draws n!/(n!-1), at
    most 2); ``n`` of 0 or 1 gives ``range(n)``."""
    order = list(range(n))
    while n >= 2 and order == sorted(order):
        rng.shuffle(order)
    return order


def _ablated(evaluation: Evaluation, p: Prediction, inp: engine.StageInput) -> engine.StageInput:
    """``inp`` under the evaluation's ablation: ``text_only`` sends no image (EgoExoBench's
    text-only check, seed 001 Sec. 3.2); ``shuffled_frames`` sends each video's frames in an order
    drawn from a seed recorded on the call (``random.Random(f"{evaluation}:{prediction}")``; VUDG's
    static-bias check, seed 004), never in their own order (``shuffled_order``), the labels still
    before their video's frames."""
    if evaluation.ablation == Ablation.TEXT_ONLY:
        return dataclasses.replace(
            inp, image_key="", images=None, captions={}, record={**inp.record, "ablation": "text_only"}
        )
    if evaluation.ablation != Ablation.SHUFFLED_FRAMES or inp.images is None:
        return inp
    seed = f"{evaluation.pk}:{p.pk}"
    load = inp.images
    starts = sorted(set(inp.captions) | {0})

    def shuffled() -> list[bytes]:
        frames = load()
        rng, out = random.Random(seed), []
        for i, a in enumerate(starts):
            block = frames[a : starts[i + 1] if i + 1 < len(starts) else len(frames)]
            out += [block[j] for j in shuffled_order(len(block), rng)]
        return out

    return dataclasses.replace(
        inp,
        image_key=f"{inp.image_key}|shuffled:{seed}",
        images=shuffled,
        record={**inp.record, "ablation": "shuffled_frames", "shuffle_seed": seed},
    )


def _life_log_input(
    evaluation: Evaluation,
    p: Prediction,
    group: VideoGroup,
    parts: list[lifelogs.Part],
    start_s: float,
    end_s: float,
    n_frames: int,
    *,
    question: str,
    options,
    interval: bool,
    text: str | None,
    record: dict,
) -> engine.StageInput:
    """``n_frames`` frames over the recorded time of virtual ``start_s``..``end_s`` of life log
    ``group`` (``parts``: its parts, or the segments a stimulus shows), each with its wall-clock
    time, in X-LeBench's time-stamped context (seed 002 Fig. 5); ``text`` replaces that prompt."""
    picked = recorded_times(parts, start_s, end_s, n_frames)
    if not picked:
        raise Invalid(f"nothing of the life log {group.name} is recorded in {start_s:g}-{end_s:g} s")
    videos = {v.pk: v for v in Video.objects.filter(pk__in={parts[i].video_id for i, _ in picked})}
    by_part: dict[int, list[float]] = {}
    for i, local in picked:
        by_part.setdefault(i, []).append(local)
    for i in by_part:
        _usable(videos.get(parts[i].video_id))
    p.frame_times = [parts[i].offset_s + local for i, local in picked]
    start = lifelogs.log_start(group)
    stamps = [lifelogs.clock(start, t) for t in p.frame_times]
    keys = "|".join(frame_key(videos[parts[i].video_id], times, FRAME_MAX_SIDE) for i, times in by_part.items())

    def load() -> list[bytes]:
        frames: list[bytes] = []
        for i, times in by_part.items():
            frames += sample_frames(videos[parts[i].video_id], times, FRAME_MAX_SIDE)
        return frames

    records = [(lifelogs.clock(start, parts[i].offset_s), lifelogs.clock(start, parts[i].end_s)) for i in by_part]
    if text is None:
        text = prompts.ask_life_log(
            question, stamps=stamps, records=records, options=options, interval=interval, k=MAX_INTERVALS
        )
    return engine.StageInput(text=text, image_key=keys, images=load, record={**record, "frame_times_s": p.frame_times})


def _ask_life_log(evaluation: Evaluation, p: Prediction) -> engine.StageInput:
    """A life-log item's input: ``n_frames`` frames over the log's recorded time in the clip, each
    with its wall-clock time, in X-LeBench's time-stamped context (seed 002 Fig. 5)."""
    group = p.qa_pair.unit.group if p.qa_pair_id and p.qa_pair else None
    if group is None:
        raise Invalid("the life log of this QA pair is gone")
    return _life_log_input(
        evaluation,
        p,
        group,
        lifelogs.parts_of(group),
        p.clip_start_s,
        p.clip_end_s,
        _n_frames(evaluation),
        question=p.question,
        options=p.options,
        interval=p.kind == Prediction.Kind.INTERVAL,
        text=None,
        record={"evaluation": evaluation.pk, "prediction": p.pk, "qa_pair": p.qa_pair_id, "video": p.video_id},
    )


@dataclasses.dataclass(frozen=True)
class View:
    """One video of a multi-video item: its ``label`` in the prompt, its id, and the range of it
    shown (seconds of that video)."""

    label: str
    video_id: int | None
    start_s: float
    end_s: float


def frames_per_video(n_frames: int, n_videos: int) -> int:
    """Frames sampled from each video of a multi-video item: the evaluation's ``n_frames`` split
    evenly, ``n_frames // n_videos`` (every video the same number, as EgoExoBench samples the same
    8 frames uniformly from each video, seed 001 App. B.1), at least 1 (so more videos than frames
    send one frame each, over the budget). A remainder of ``n_frames % n_videos`` is not sent."""
    return max(1, n_frames // max(1, n_videos))


def views_of(p: Prediction) -> list[View]:
    """The videos of a multi-video item in prompt order, from the one stimulus builder
    (``annotator.qa.stimulus.of_pair``, which a study item's page plays too): ``videos``, the
    pair's labelled videos as they are; ``ego_exo``, ego then exo 1..N, each over the pair's clip in
    its own time (member time = ego time + offset_s), clamped to its footage. Raises Invalid when
    the pair or set is gone."""
    from annotator.qa import stimulus

    pair = p.qa_pair if p.qa_pair_id else None
    if pair is None:
        raise Invalid("the QA pair of this item is gone")
    if p.role == Prediction.Role.EGO_EXO and pair.unit.group_id is None:
        raise Invalid("the ego-exo set of this QA pair is gone")
    return [View(m.label, m.video_id, m.start_s, m.end_s) for m in stimulus.of_pair(pair).media]


def _videos_input(
    evaluation: Evaluation,
    p: Prediction,
    views: list[View],
    n_frames: int,
    *,
    question: str,
    options,
    interval: bool,
    ego_exo: bool,
    text: str | None,
    record: dict,
) -> engine.StageInput:
    """Several videos' input (EgoExoBench seed 001 Sec. 4.1, App. B.1): ``frames_per_video``
    frames sampled evenly over each view's range, sent video after video, each video's frames
    introduced by its label (``StageInput.captions``); the question, the labels in order and the
    lettered options in the text (``prompts.ask_videos``; ``text`` replaces it). An interval item
    also gets the first video's frame times. Raises Invalid naming the video that cannot give frames."""
    if not views:
        raise Invalid("this item names no video")
    per = frames_per_video(n_frames, len(views))
    videos = {v.pk: v for v in Video.objects.filter(pk__in={view.video_id for view in views})}
    sent, captions, keys, loaders = [], {}, [], []
    for view in views:
        try:
            video = _usable(videos.get(view.video_id))
            times = ffmpeg.sample_times(view.start_s, view.end_s, per)
        except Invalid as exc:
            raise Invalid(f"{view.label}: {exc}") from None
        except ValueError:
            raise Invalid(
                f"{view.label}: the range {view.start_s:g}-{view.end_s:g} s of {video.filename} is empty"
            ) from None
        captions[len(sent) * per] = f"{view.label}:"
        key, load = _frames(video, times)
        keys.append(f"{view.label}={key}")
        loaders.append(load)
        sent.append({"label": view.label, "video": video.pk, "frame_times_s": times})
    p.frame_times = [t for s in sent for t in s["frame_times_s"]]
    if text is None:
        text = prompts.ask_videos(
            question, labels=[v.label for v in views], per_video=per, options=options, ego_exo=ego_exo
        )
        if interval:
            text += "\n" + prompts.interval_format(sent[0]["frame_times_s"], k=MAX_INTERVALS)
    return engine.StageInput(
        text=text,
        image_key="|".join(keys),
        captions=captions,
        images=lambda: [f for load in loaders for f in load()],
        record={**record, "frame_times_s": p.frame_times, "videos": sent},
    )


def _single_input(
    evaluation: Evaluation,
    p: Prediction,
    video: Video | None,
    start_s: float,
    end_s: float,
    n_frames: int,
    *,
    question: str,
    options,
    interval: bool,
    text: str | None,
    record: dict,
) -> engine.StageInput:
    """One video's input: ``n_frames`` frames sampled evenly over ``start_s``..``end_s`` with
    EgoNight's prompt (seed 000 App. A.5.1; ``text`` replaces it). Raises Invalid when the video
    cannot give frames."""
    video = _usable(video)
    try:
        times = ffmpeg.sample_times(start_s, end_s, n_frames)
    except ValueError:
        raise Invalid(f"the clip {start_s:g}-{end_s:g} s of {video.filename} is empty") from None
    p.frame_times = times
    key, load = _frames(video, times)
    if text is None:
        text = prompts.ask(question, n_frames=len(times), clip_s=end_s - start_s, fps=video.fps, options=options)
        if interval:
            text += "\n" + prompts.interval_format(times, k=MAX_INTERVALS)
    return engine.StageInput(
        text=text, image_key=key, images=load, record={**record, "video": video.pk, "frame_times_s": times}
    )


def stimulus_input(
    evaluation: Evaluation, p: Prediction, stim, *, n_frames: int, text: str | None = None, record: dict
) -> engine.StageInput:
    """A model's input for a stimulus (``annotator.qa.stimulus.Stimulus``: what a study item's page
    shows, issue 18): one video as a single clip, views or labelled videos as several videos
    labelled in order, a life log in virtual time with wall-clock stamps; ``p``'s question and
    options (shown order) in the prompt unless ``text`` replaces it; ``n_frames`` frames in all.
    The ablation is applied. Raises Invalid when a medium cannot give frames."""
    n = _n_frames(evaluation, n_frames)
    common = {"question": p.question, "options": p.options, "text": text, "record": record}
    if not stim.media:
        raise Invalid("this item shows no video")
    if stim.layout == "life_log":
        m = stim.media[0]
        group = VideoGroup.objects.filter(pk=m.group_id).first()
        if group is None:
            raise Invalid("the life log of this item is gone")
        parts = [lifelogs.Part(i, s.video_id, s.virtual_start_s - s.start_s, s.end_s) for i, s in enumerate(m.segments)]
        inp = _life_log_input(evaluation, p, group, parts, m.start_s, m.end_s, n, interval=False, **common)
    elif len(stim.media) == 1 and stim.layout == "single":
        m = stim.media[0]
        inp = _single_input(
            evaluation, p, Video.objects.filter(pk=m.video_id).first(), m.start_s, m.end_s, n, interval=False, **common
        )
    else:
        views = [View(m.label, m.video_id, m.start_s, m.end_s) for m in stim.media]
        inp = _videos_input(
            evaluation, p, views, n, interval=False, ego_exo=bool(views) and views[0].label == "ego", **common
        )
    return _ablated(evaluation, p, inp)


MULTI_VIDEO = (Prediction.Role.EGO_EXO, Prediction.Role.VIDEOS)


def _record(evaluation: Evaluation, p: Prediction) -> dict:
    return {"evaluation": evaluation.pk, "prediction": p.pk, "qa_pair": p.qa_pair_id, "video": p.video_id}


def _ask(evaluation: Evaluation, p: Prediction) -> engine.StageInput:
    """The evaluated model's input for ``p``: its question (and options) with frames sampled evenly
    over its clip (over a life log's recorded time, ``_ask_life_log``; over each of several videos,
    ``_videos_input``), under the evaluation's ablation. Raises Invalid when the video cannot give
    frames."""
    interval = p.kind == Prediction.Kind.INTERVAL
    common = {
        "question": p.question,
        "options": p.options,
        "interval": interval,
        "text": None,
        "record": _record(evaluation, p),
    }
    if p.role == Prediction.Role.LIFE_LOG:
        inp = _ask_life_log(evaluation, p)
    elif p.role in MULTI_VIDEO:
        inp = _videos_input(
            evaluation, p, views_of(p), _n_frames(evaluation), ego_exo=p.role == Prediction.Role.EGO_EXO, **common
        )
    else:
        if p.video is None:
            raise Invalid("the video of this QA pair is gone")
        inp = _single_input(evaluation, p, p.video, p.clip_start_s, p.clip_end_s, _n_frames(evaluation), **common)
    return _ablated(evaluation, p, inp)


def _score(evaluation: Evaluation, p: Prediction, endpoints, cancelled, calls: list[int]) -> None:
    """Ask, then score ``p`` in place (raises StageFailed, RunCancelled or Invalid). The answer is
    saved before the judge is asked, so a judge that fails leaves the answer on the item."""
    p.stage = "predict"
    Prediction.objects.filter(pk=p.pk).update(stage="predict")
    source = SOURCES.get(p.role)
    if source is not None:
        stage, inp = source.ask(evaluation, p)
    else:
        stage, inp = (prompts.PREDICT_VIDEOS if p.role in MULTI_VIDEO else prompts.PREDICT), _ask(evaluation, p)
    out, p.predict_call_id = _call(stage, endpoints["predict"], inp, evaluation, cancelled, calls)
    p.prediction = out["text"]
    if source is not None:
        p.response = source.read(p)
        if p.kind != Prediction.Kind.OPEN or p.response is None:
            return
    if p.kind == Prediction.Kind.INTERVAL:
        _score_interval(p)
        return
    if p.kind == Prediction.Kind.MCQ:
        index = extract_choice(p.prediction, p.options or [])
        p.choice_index = index
        p.choice_letter = letter(index) if index is not None else ""
        p.correct = index is not None and index == p.answer_index
        return
    p.stage = "judge"
    Prediction.objects.filter(pk=p.pk).update(
        stage="judge", prediction=p.prediction, predict_call_id=p.predict_call_id, frame_times=p.frame_times
    )
    stage = prompts.judge_stage(evaluation.rubric, p.qa_type)
    inp = engine.StageInput(
        text=prompts.judge_text(evaluation.rubric, question=p.question, answer=p.truth, prediction=p.prediction),
        record={"evaluation": evaluation.pk, "prediction": p.pk, "qa_pair": p.qa_pair_id},
    )
    out, p.judge_call_id = _call(stage, endpoints["judge"], inp, evaluation, cancelled, calls)
    p.judge_output = out
    for field, value in prompts.read_judgement(evaluation.rubric, out).items():
        setattr(p, field, value)


def _score_interval(p: Prediction) -> None:
    """Read the answer's intervals (best first, at most 5) and score each by tIoU with the truth;
    ``correct`` when one reaches tIoU 0.3 (recall@5, seed 002 App. C.1). An answer naming no
    interval is wrong, its reason in ``judge_reason``."""
    start = None
    if p.role == Prediction.Role.LIFE_LOG and p.qa_pair_id and p.qa_pair and p.qa_pair.unit.group_id:
        start = lifelogs.log_start(p.qa_pair.unit.group)
    truth = (p.truth_start_s, p.truth_end_s)
    try:
        found = parse_intervals(p.prediction, start, limit=MAX_INTERVALS)
        p.judge_reason = ""
    except IntervalParseError as exc:
        found = []
        p.judge_reason = f"unparseable answer: {exc}"
    p.intervals = [[round(a, 3), round(b, 3)] for a, b in found]
    p.tious = [round(tiou((a, b), truth), 6) for a, b in found]
    p.correct = any(t >= TIOU_THRESHOLD for t in p.tious)


SAVED = [
    "status",
    "stage",
    "error",
    "prediction",
    "choice_letter",
    "choice_index",
    "correct",
    "judge_pred",
    "judge_score",
    "judge_accuracy",
    "judge_relevance",
    "judge_reason",
    "judge_output",
    "predict_call",
    "judge_call",
    "call_ids",
    "cost_usd",
    "frame_times",
    "intervals",
    "tious",
    "response",
    "updated_at",
]


class Evaluations(inference_runs.RunEngine):
    """Evaluations (and study evaluations) on the one run engine (``annotator.inference.runs``):
    the items are the evaluation's predictions, each asked, scored and saved whole in its thread;
    a finished study evaluation's answers become its model participant's trials."""

    run_model, item_model, item_run = Evaluation, Prediction, "evaluation"
    task, noun, thread_prefix, threads_per_slot = "evaluation.run", "evaluation", "eval", 1

    def endpoints(self, evaluation: Evaluation) -> dict[str, engine.Endpoint]:
        return endpoints_of(evaluation)

    def work(self, evaluation: Evaluation, endpoints: dict, prediction_id: int, cancelled) -> str:
        """Ask and score one item, then save it whole with its calls' ids and cost; a failure (the
        model's, the judge's, the video's, or a defect) is saved on the item with its reason."""
        p = Prediction.objects.select_related("video", "qa_pair__unit__group", "study_item__condition__study").get(
            pk=prediction_id
        )
        calls: list[int] = list(p.call_ids or [])
        try:
            _score(evaluation, p, endpoints, cancelled, calls)
            p.status, p.stage, p.error = Prediction.Status.DONE, "", ""
        except engine.RunCancelled:
            p.status = Prediction.Status.CANCELLED
        except engine.StageFailed as exc:
            p.status, p.error = Prediction.Status.FAILED, exc.reason
        except Invalid as exc:  # the item's own input cannot be used (no video, an empty clip)
            p.status, p.error = Prediction.Status.FAILED, str(exc)
        except Exception as exc:  # a defect fails this item alone, with its reason and its calls kept
            log.exception("evaluation %s item %s", evaluation.pk, prediction_id)
            p.status, p.error = Prediction.Status.FAILED, f"{type(exc).__name__}: {exc}"
        p.call_ids = calls
        p.cost_usd = ModelCall.objects.filter(pk__in=calls).aggregate(c=Coalesce(Sum("cost_usd"), 0.0))["c"]
        p.save(update_fields=SAVED)
        return p.status

    def finishing(self, evaluation: Evaluation) -> None:
        for source in SOURCES.values():
            source.record(evaluation)  # a study's items: the answers become the model participant's trials

    def not_cancellable(self, evaluation: Evaluation) -> str:
        return f"evaluation {evaluation.pk} is {evaluation.status}; only a queued or running one can be cancelled"


ENGINE = Evaluations()


def endpoints_of(evaluation: Evaluation) -> dict[str, engine.Endpoint]:
    """The evaluated model's endpoint (``predict``) and the judge's (``judge``), from the snapshots."""
    model = engine.Endpoint.from_snapshot(evaluation.endpoint)
    return {
        "predict": dataclasses.replace(model, model=evaluation.model),
        "judge": engine.Endpoint.from_snapshot(evaluation.judge_endpoint),
    }


def execute(evaluation_id: int) -> str:
    """Work the queued items of evaluation ``evaluation_id`` for up to ``DRAFT_RUN_SLICE_S``
    seconds on threads; then queue the evaluation again if items remain, else settle its status.
    Returns "done", "failed", "cancelled", "continued" or "gone" (``inference.runs.RunEngine``)."""
    return ENGINE.execute(evaluation_id)


def settle(evaluation_id: int) -> str:
    """After a slice: a cancelled evaluation stays cancelled (its open items become cancelled);
    items left open queue it again ("continued"); else done, or failed if any item failed."""
    return ENGINE.settle(evaluation_id)


def mark_failed(evaluation_id: int, reason: str) -> None:
    """The job gave up (a worker died on it every time): fail the evaluation and its open items."""
    ENGINE.mark_failed(evaluation_id, reason)


def cancel(evaluation: Evaluation) -> Evaluation:
    """Cancel a queued or running evaluation: items not started are cancelled at once, items in
    flight stop before their next model call. Raises Conflict for a finished one."""
    return ENGINE.cancel(evaluation)
