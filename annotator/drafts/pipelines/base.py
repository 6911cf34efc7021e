"""What a multi-stage pipeline is, and what it gets to work with.

A pipeline (``PipelineDef``) chooses the videos of a run (one ``DraftJob`` each) and, per video,
does its stages through ``JobContext.call`` and returns a ``Result``: the drafts to save and,
optionally, a ``commit`` function that writes anything else (flags on existing QA pairs, dropped
items). The runner saves a result in one transaction per video, so a video's items are written
whole or not at all; a stage that fails raises ``StageFailed`` and the video writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from annotator.core import registry
from annotator.drafts import registry as pipelines_registry
from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.templates import DraftSpec
from annotator.errors import Invalid
from annotator.inference import engine
from annotator.inference.frames import FRAME_MAX_SIDE, frame_key, sample_frames
from annotator.inference.runs import CancelFlag
from annotator.media.models import Video


@dataclass
class Result:
    """What one video's job produced. ``specs`` become drafts, QA pairs and units (a spec's
    ``flag`` makes its QA pair a model flag with that reason, served first). ``commit(job)`` runs
    after them in the same transaction. ``summary`` is stored on the job (counts by name)."""

    specs: list[DraftSpec] = field(default_factory=list)
    commit: Callable[[DraftJob], None] | None = None
    summary: dict = field(default_factory=dict)


class JobContext:
    """One video's job as a pipeline sees it: the run, the job, its video, the endpoint of each
    stage, and helpers to sample frames and call stages (recording the stage being worked on)."""

    def __init__(
        self,
        run: DraftRun,
        job: DraftJob,
        endpoints: dict[str, engine.Endpoint],
        cancelled: Callable[[], bool] | None = None,
    ):
        self.run, self.job, self.video, self.endpoints = run, job, job.video, endpoints
        self.params = run.params or {}
        # Whether the run was cancelled: the run engine's flag, shared by the slice's threads (read
        # from the database at most once a second); a context made alone reads its own.
        self.cancelled = cancelled or CancelFlag(DraftRun, run.pk)
        self._frames: dict[str, list[bytes]] = {}

    def call(self, stage: str, inp: engine.StageInput) -> dict:
        """Call ``stage`` on its endpoint; returns the validated answer. Raises StageFailed or
        RunCancelled (see ``engine.call_stage``)."""
        if self.job.stage != stage:
            self.job.stage = stage
            DraftJob.objects.filter(pk=self.job.pk).update(stage=stage)
        return engine.call_stage(
            stage,
            self.endpoints[stage],
            inp,
            project_id=self.run.project_id,
            job=self.job,
            use_cache=self.params.get("cache", True),
            cancelled=self.cancelled,
        )

    def frames(
        self, video: Video, times_s: list[float], *, max_side: int = FRAME_MAX_SIDE
    ) -> tuple[str, Callable[[], list[bytes]]]:
        """(image key, loader) for frames of ``video`` at ``times_s`` (seconds): the key names them
        by content (``frame_key``) for the cache; the loader samples them (``sample_frames``) once
        per job (stages of one clip share them)."""
        key = frame_key(video, times_s, max_side)

        def load() -> list[bytes]:
            if key not in self._frames:
                self._frames = {key: sample_frames(video, times_s, max_side)}  # keep one clip's
            return self._frames[key]

        return key, load


class PipelineDef:
    """A pipeline: ``name`` (stored on its runs, at most 20 characters), the model ``stages`` it
    calls (each needs a server), its ``label``, its ``position`` among the pipelines (the start
    form's order and the stages' order), whether the start form offers it (``in_form``), the run's ``prompt_version`` when it is not made of its stages', the
    QA type a run gets when none is named (``default_qa_type``), and whether ``clean_params``
    creates a missing QA type (``creates_qa_type``: ``runs.start`` then refuses a missing one to a
    person, so that only admins define QA types)."""

    name: str = ""
    stages: tuple[str, ...] = ()
    label: str = ""
    position: int = 100
    in_form: bool = True
    prompt_version: str = ""
    default_qa_type: str = ""
    creates_qa_type: bool = False

    def actor(self, run: DraftRun) -> str:
        """Who the run's drafts are by, on their revisions: pipeline/models/run-id."""
        models = "+".join(sorted({s["model"] for s in run.servers.values()})) or "no-model"
        return f"{run.pipeline}/{models}/run-{run.pk}"[:200]

    def clean_params(self, project, params: dict) -> dict:
        """Check and normalise the run's parameters; raise Invalid with a plain message."""
        return params

    def select(self, run: DraftRun) -> tuple[list[Video], dict[str, int]]:
        """The videos to make jobs for, and counts of videos left out by reason. Default: the
        project's ready videos."""
        videos, skipped = [], {}
        for video in Video.objects.filter(project=run.project).order_by("id"):
            if video.status == Video.Status.READY:
                videos.append(video)
            else:
                why = "failed" if video.status == Video.Status.FAILED else "still processing"
                skipped[why] = skipped.get(why, 0) + 1
        return videos, skipped

    def work(self, ctx: JobContext) -> Result:
        raise NotImplementedError


PIPELINES: dict[str, PipelineDef] = pipelines_registry.PIPELINES


def register(pipeline: PipelineDef) -> PipelineDef:
    """Add ``pipeline`` to ``PIPELINES`` (kept in ``position`` order, then by name); returns it.
    Raises ValueError for a name longer than ``DraftRun.pipeline`` holds, or taken by another."""
    if not pipeline.name or len(pipeline.name) > 20:
        raise ValueError(f"a pipeline name has 1 to 20 characters: {pipeline.name!r}")
    if pipeline.name in PIPELINES and type(PIPELINES[pipeline.name]) is not type(pipeline):
        raise ValueError(f"two pipelines are named {pipeline.name!r}")
    registry.add(PIPELINES, pipeline.name, pipeline)
    return pipeline


def stage_names() -> tuple[str, ...]:
    """Every model stage registered with the engine, those of the pipelines first in pipeline order,
    then the others (the judge) by name: the order in which pages list a run's stages."""
    names = [s for p in PIPELINES.values() for s in p.stages]
    names = list(dict.fromkeys(names))
    return tuple(names + sorted(set(engine.STAGES) - set(names)))


def require(condition: bool, message: str, field_name: str = "params") -> None:
    """Raise Invalid(message) unless ``condition``: for ``clean_params``."""
    if not condition:
        raise Invalid(message, errors={field_name: message})
