"""The ``templates`` pipeline: annotation-derived QA (EgoExoBench seed 001 Sec. 3.2), no model.

An ordinary pipeline of the run engine with no stages: it drafts each ready video that has
annotations and no template drafts yet (so running it again adds nothing), with the pure
templates of ``annotator.drafts.templates``; the object distractors come from the project's other
videos, shuffled with a seed from the video's content hash (the same video gives the same order).
"""

from __future__ import annotations

from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.pipelines.base import JobContext, PipelineDef, Result, register
from annotator.drafts.templates import COUNT_WINDOW_S, TEMPLATE_QA_TYPES, build_template_drafts
from annotator.media.models import Video
from annotator.qa import services as qa_services

PROMPT_VERSION = "templates-v1"


class Templates(PipelineDef):
    name = "templates"
    stages = ()
    label = "annotation-derived templates"
    position = 10
    prompt_version = PROMPT_VERSION

    def actor(self, run: DraftRun) -> str:
        return f"templates/{PROMPT_VERSION}"

    def select(self, run: DraftRun) -> tuple[list[Video], dict[str, int]]:
        """Ready videos with annotations that no templates run has drafted; the others counted as
        failed, still processing, already drafted or no annotations."""
        already = set(
            DraftJob.objects.filter(
                run__project=run.project, run__pipeline="templates", status=DraftJob.Status.DONE
            ).values_list("video_id", flat=True)
        )
        skipped = {"failed": 0, "still processing": 0, "already drafted": 0, "no annotations": 0}
        chosen = []
        for video in Video.objects.filter(project=run.project):
            if video.status == Video.Status.FAILED:
                skipped["failed"] += 1
            elif video.status == Video.Status.PROCESSING:
                skipped["still processing"] += 1
            elif video.pk in already:
                skipped["already drafted"] += 1
            elif not video.annotations:
                skipped["no annotations"] += 1
            else:
                chosen.append(video)
        return chosen, {k: v for k, v in skipped.items() if v}

    def work(self, ctx: JobContext) -> Result:
        video, project = ctx.video, ctx.run.project
        pool = []
        for other in Video.objects.filter(project=project).exclude(pk=video.pk).values_list("annotations", flat=True):
            pool.extend(o for o in (other or {}).get("objects", []) if isinstance(o, str))
        # The seed is derived from the content hash, so re-drafting the same video gives the same shuffle.
        seed = int(video.sha256[:8], 16)
        specs = build_template_drafts(video.annotations, video.duration_s, distractor_pool=pool, seed=seed)
        for slug in {s.qa_type for s in specs}:
            name, policy = TEMPLATE_QA_TYPES[slug]
            qa_services.ensure_qa_type(
                project, slug, name=name, clip_policy=policy, window_s=COUNT_WINDOW_S if policy == "window" else None
            )
        return Result(specs=specs)


register(Templates())
