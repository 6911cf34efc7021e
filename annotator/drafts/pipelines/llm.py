"""The ``llm`` pipeline: one prompt per clip to an OpenAI-compatible model, for QA pairs of one QA type.

An ordinary pipeline of the run engine with one stage, ``llm``, on the run's server (``--server``).
For each clip of the QA type (its clip policy: ``LLM_WINDOWS`` windows of ``window_s`` seconds for a
window policy, else the whole video; ``annotator.drafts.llm.clips_for``) it samples ``frames``
frames evenly with ffmpeg and asks for up to ``PAIRS`` QA pairs as JSON in the reply's text (no
``response_format``: servers without structured outputs work too). ``annotator.drafts.llm.check_reply``
is the stage's check, so a reply that is not the JSON asked for is recorded and retried by the
engine like any stage's; after ``LLM_MAX_ATTEMPTS`` the video fails and writes nothing.

Parameters: ``qa_type`` (default ``open_ended``; the command may create it, a person starting a
run from the page or the API must name one the project has), ``frames`` (per clip, 1-32, default
``LLM_FRAMES``), ``cache`` (bool). Prompt version ``llm-qa-v1``; the drafts' revisions are by
``llm/<model>/llm-qa-v1``, as before this became a pipeline.
"""

from __future__ import annotations

from django.conf import settings

from annotator.adapters import ffmpeg
from annotator.drafts import llm as llm_format
from annotator.drafts.models import DraftRun
from annotator.drafts.pipelines.base import JobContext, PipelineDef, Result, register, require
from annotator.drafts.templates import DraftSpec
from annotator.inference import engine
from annotator.qa import services as qa_services

PAIRS = 5  # QA pairs asked for per clip (at most ``llm_format.MAX_PAIRS`` are accepted)

STAGE = engine.register(
    engine.Stage(
        name="llm",
        prompt_version=llm_format.PROMPT_VERSION,
        system=llm_format.SYSTEM_PROMPT,
        schema=None,
        check=llm_format.check_reply,
    )
)


class Llm(PipelineDef):
    name = "llm"
    label = "OpenAI-compatible model, one prompt"
    position = 20
    stages = ("llm",)
    prompt_version = llm_format.PROMPT_VERSION
    default_qa_type = "open_ended"
    creates_qa_type = True

    def actor(self, run: DraftRun) -> str:
        return f"llm/{run.model}/{llm_format.PROMPT_VERSION}"[:200]

    def clean_params(self, project, params: dict) -> dict:
        """``qa_type`` is created if the project lacks it (``runs.start`` lets only the command
        do that); ``frames`` defaults to ``LLM_FRAMES``. Raises Invalid for frames outside 1-32."""
        frames = params.get("frames", settings.LLM_FRAMES)
        require(
            isinstance(frames, int) and not isinstance(frames, bool) and 1 <= frames <= 32,
            "frames must be a whole number from 1 to 32",
            "frames",
        )
        qa_services.ensure_qa_type(project, params["qa_type"])
        return {**params, "frames": frames}

    def work(self, ctx: JobContext) -> Result:
        video, run = ctx.video, ctx.run
        qa_type = qa_services.ensure_qa_type(run.project, run.qa_type)
        specs, summary = [], {"clips": 0}
        for k, clip in enumerate(
            llm_format.clips_for(qa_type.clip_policy, qa_type.window_s, video.duration_s, settings.LLM_WINDOWS)
        ):
            times = ffmpeg.sample_times(clip[0], clip[1], ctx.params["frames"])  # seconds of the video
            key, frames = ctx.frames(video, times)
            text = llm_format.user_text(
                qa_type.name, qa_type.guidelines, times, video.duration_s, n_pairs=PAIRS, clip=clip
            )
            reply = ctx.call(
                "llm",
                engine.StageInput(
                    text=text,
                    image_key=key,
                    images=frames,
                    record={
                        "video": video.sha256,
                        "frame_times_s": times,
                        "clip_s": list(clip),
                        "qa_type": qa_type.slug,
                    },
                ),
            )
            summary["clips"] += 1
            specs += [
                DraftSpec(qa_type.slug, q, a, clip[0], clip[1], source_key=f"{qa_type.slug}-{k}-{i}")
                for i, (q, a) in enumerate(llm_format.parse_answer(reply["text"]))
            ]
        return Result(specs=specs, summary=summary)


register(Llm())
