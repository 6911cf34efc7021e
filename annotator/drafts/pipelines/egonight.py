"""EgoNight's day-augmented auto QA generation (seed 000 Sec. 3.2 and App. A.2), per QA type.

For each clip of a QA type (its clip policy: ``LLM_WINDOWS`` windows of 3 s for static types,
the whole video for temporal ones; ``annotator.drafts.llm.clips_for``):

1. ``caption``: caption the *night* clip from frames sampled by ffmpeg, focused on the QA type.
2. ``questions``: candidate questions of that type from the caption and the same night frames.
3. ``answer``: answer them. For *paired* types of an aligned day-night pair the answer stage looks
   at the aligned *day* clip (night time = day time + the pair's offset); otherwise, and for
   unpaired types, at the night clip.

Jobs (one per video): each night video drafts its unpaired types, plus its paired types when it
has no aligned day video; each day video of a day-night pair drafts the paired types, so they
land on the pair's unit (the same question asked of both videos). Unpaired types are drafted on
night videos only (seed 000 Table 8). Day videos without a night pair are skipped.

Parameters: ``qa_type`` (only this type), ``frames`` (frames per clip, 1-32, default
``LLM_FRAMES``), ``questions`` (candidates per clip, 1-10, default 3), ``cache`` (bool).
"""

from __future__ import annotations

from django.conf import settings

from annotator.adapters import ffmpeg
from annotator.drafts.llm import clips_for
from annotator.drafts.pipelines.base import JobContext, PipelineDef, Result, register, require
from annotator.drafts.templates import DraftSpec
from annotator.inference import engine
from annotator.media.models import Video, VideoGroupMember
from annotator.qa.models import QAType
from annotator.qa.services import apply_preset

MAX_QUESTIONS = 10
MAX_CHARS = 2000


def _obj(**props) -> dict:
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


def _check_questions(out: dict, ctx: dict) -> None:
    questions = [q.strip() for q in out["questions"]]
    if not questions or not all(questions):
        raise engine.MalformedModelOutput("questions must be a non-empty list of non-empty texts")
    if len(questions) > ctx.get("max_questions", MAX_QUESTIONS):
        raise engine.MalformedModelOutput(
            f"at most {ctx.get('max_questions', MAX_QUESTIONS)} questions were asked for, got {len(questions)}"
        )
    if any(len(q) > MAX_CHARS for q in questions):
        raise engine.MalformedModelOutput(f"a question is longer than {MAX_CHARS} characters")


def _check_answers(out: dict, ctx: dict) -> None:
    answers = out["answers"]
    if len(answers) != ctx["n_questions"]:
        raise engine.MalformedModelOutput(
            f"{ctx['n_questions']} questions need {ctx['n_questions']} answers, got {len(answers)}"
        )
    if not all(a.strip() for a in answers) or any(len(a) > MAX_CHARS for a in answers):
        raise engine.MalformedModelOutput(f"every answer must be a non-empty text of at most {MAX_CHARS} characters")


CAPTION = engine.register(
    engine.Stage(
        name="caption",
        prompt_version="egonight-caption-v1",
        system=(
            "You caption egocentric night-time video clips for building a video question-answering benchmark. "
            "Describe in detail what the frames show, focusing on what matters for the given QA type "
            "(e.g. object attributes for object recognition, visible text and logos for text recognition, "
            "light sources for lighting questions). Describe only what is visible. Reply in JSON."
        ),
        schema=_obj(caption={"type": "string"}),
    )
)
QUESTIONS = engine.register(
    engine.Stage(
        name="questions",
        prompt_version="egonight-questions-v1",
        system=(
            "You write candidate questions of one QA type about an egocentric night-time video clip, from its "
            "caption and frames. Vary phrasing and perspective; every question must be answerable from the clip. "
            "Actions refer to the person who recorded the video. Reply in JSON."
        ),
        schema=_obj(questions={"type": "array", "items": {"type": "string"}}),
        check=_check_questions,
    )
)
ANSWER = engine.register(
    engine.Stage(
        name="answer",
        prompt_version="egonight-answer-v1",
        system=(
            "You answer questions about an egocentric video clip from its frames. Answers are short, specific "
            "and checkable from the frames. Give exactly one answer per question, in the order asked. Reply in JSON."
        ),
        schema=_obj(answers={"type": "array", "items": {"type": "string"}}),
        check=_check_answers,
    )
)


def _times_text(times_s: list[float]) -> str:
    return ", ".join(f"{t:.2f} s" for t in times_s)


class EgoNight(PipelineDef):
    name = "egonight"
    label = "EgoNight day-augmented (caption, questions, answer)"
    position = 30
    stages = ("caption", "questions", "answer")

    def clean_params(self, project, params: dict) -> dict:
        frames = params.get("frames", settings.LLM_FRAMES)
        n_questions = params.get("questions", 3)
        require(isinstance(frames, int) and 1 <= frames <= 32, "frames must be a whole number from 1 to 32")
        require(
            isinstance(n_questions, int) and 1 <= n_questions <= MAX_QUESTIONS,
            f"questions must be a whole number from 1 to {MAX_QUESTIONS}",
        )
        had_types = QAType.objects.filter(project=project).exists()
        if not had_types:
            apply_preset(project, "egonight")  # EgoNight's 12 types, the pipeline's own taxonomy
        wanted = params.get("qa_type", "")
        if wanted:
            require(
                QAType.objects.filter(project=project, slug=wanted).exists(),
                f"project {project.slug} has no QA type {wanted!r}",
                "qa_type",
            )
        return {**params, "frames": frames, "questions": n_questions, "preset_applied": not had_types}

    def _types(self, run) -> list[QAType]:
        qs = QAType.objects.filter(project=run.project).order_by("slug")
        if run.params.get("qa_type"):
            qs = qs.filter(slug=run.params["qa_type"])
        return list(qs)

    def select(self, run):
        types = self._types(run)
        has_paired, has_unpaired = any(t.paired for t in types), any(not t.paired for t in types)
        day_members = set(
            VideoGroupMember.objects.filter(group__project=run.project, role="day").values_list("video_id", flat=True)
        )
        night_with_day = set(
            VideoGroupMember.objects.filter(group__project=run.project, role="night").values_list("video_id", flat=True)
        )
        videos, skipped = [], {}

        def skip(why):
            skipped[why] = skipped.get(why, 0) + 1

        for video in Video.objects.filter(project=run.project).order_by("id"):
            if video.status != Video.Status.READY:
                skip("failed" if video.status == Video.Status.FAILED else "still processing")
            elif video.pk in day_members:
                videos.append(video) if has_paired else skip("day video, no paired QA type chosen")
            elif video.illumination == Video.Illumination.NIGHT:
                wants = has_unpaired or (has_paired and video.pk not in night_with_day)
                videos.append(video) if wants else skip("night video, its paired types are drafted on its day pair")
            else:
                skip("not a night video or the day video of a pair")
        return videos, skipped

    def work(self, ctx: JobContext) -> Result:
        video = ctx.video
        member = (
            VideoGroupMember.objects.filter(video=video, role="day", group__kind="day_night")
            .select_related("group")
            .first()
        )
        night, offset_s, end_s = video, 0.0, video.duration_s
        if member is not None:  # a day video: paired types, questions from the aligned night clip
            night_member = member.group.members.select_related("video").get(role="night")
            night, offset_s = night_member.video, night_member.offset_s
            end_s = min(video.duration_s, night.duration_s - offset_s)
            types = [t for t in self._types(ctx.run) if t.paired]
        else:
            aligned = VideoGroupMember.objects.filter(video=video, role="night").exists()
            types = [t for t in self._types(ctx.run) if not (t.paired and aligned)]
        n_frames, n_questions = ctx.params["frames"], ctx.params["questions"]
        specs, summary = [], {"clips": 0, "questions": 0}
        for qa_type in types:
            for k, (start, end) in enumerate(
                clips_for(qa_type.clip_policy, qa_type.window_s, end_s, settings.LLM_WINDOWS)
            ):
                times = ffmpeg.sample_times(start, end, n_frames)  # seconds of the job's video
                night_times = [round(t + offset_s, 3) for t in times]
                night_key, night_frames = ctx.frames(night, night_times)
                focus = f"QA type: {qa_type.name}. {qa_type.description}".strip()
                where = f"The {len(times)} night frames that follow were taken at {_times_text(night_times)}."
                caption = ctx.call(
                    "caption",
                    engine.StageInput(
                        text=f"{focus}\n{where}\nCaption the clip.",
                        image_key=night_key,
                        images=night_frames,
                        record={"video": night.sha256, "frame_times_s": night_times, "qa_type": qa_type.slug},
                    ),
                )["caption"].strip()
                questions = ctx.call(
                    "questions",
                    engine.StageInput(
                        text=f"{focus}\nCaption: {caption}\n{where}\nWrite up to {n_questions} questions of this type.",
                        image_key=night_key,
                        images=night_frames,
                        context={"max_questions": n_questions},
                        record={"video": night.sha256, "frame_times_s": night_times, "qa_type": qa_type.slug},
                    ),
                )["questions"]
                questions = [q.strip() for q in questions]
                from_day = member is not None and qa_type.paired
                source, source_times = (video, times) if from_day else (night, night_times)
                key, frames = ctx.frames(source, source_times)
                listed = "\n".join(f"{i + 1}. {q}" for i, q in enumerate(questions))
                answers = ctx.call(
                    "answer",
                    engine.StageInput(
                        text=(
                            f"{focus}\nThe {len(source_times)} {'daytime' if from_day else 'night'} frames that follow were "
                            f"taken at {_times_text(source_times)}.\nQuestions:\n{listed}"
                        ),
                        image_key=key,
                        images=frames,
                        context={"n_questions": len(questions)},
                        record={
                            "video": source.sha256,
                            "frame_times_s": source_times,
                            "qa_type": qa_type.slug,
                            "answered_from": "day" if from_day else "night",
                        },
                    ),
                )["answers"]
                summary["clips"] += 1
                summary["questions"] += len(questions)
                specs += [
                    DraftSpec(
                        qa_type.slug,
                        q,
                        a.strip(),
                        start,
                        end,
                        source_key=f"{qa_type.slug}-{k}-{i}",
                        params={
                            "caption": caption,
                            "answered_from": "day" if from_day else "night",
                            "night_offset_s": offset_s,
                        },
                    )
                    for i, (q, a) in enumerate(zip(questions, answers))
                ]
        return Result(specs=specs, summary=summary)


register(EgoNight())
