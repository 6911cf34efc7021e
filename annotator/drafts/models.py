"""Machine drafts: runs of a pipeline, one job per video, and the QA drafts they wrote.

Every model call a run makes is a ``annotator.inference.models.ModelCall`` (``DraftJob.calls``):
its prompt version, model, the request it sent (frame timestamps, not pixels), the raw output,
token counts, latency and error (SPEC part 2).
A draft is immutable: it is the machine's original, which verification never overwrites.
"""

from django.db import models

from annotator.drafts.registry import PIPELINES
from annotator.media.models import Video
from annotator.projects.models import Project


def pipeline_choices() -> list[tuple[str, str]]:
    """(name, label) of every drafting pipeline, in the registry's order (``drafts.registry``; one
    module per pipeline in ``drafts.pipelines``, found without a list). A callable, so a new pipeline
    needs no migration."""
    return [(p.name, p.label) for p in PIPELINES.values()]


class DraftRun(models.Model):
    """One launch of a pipeline over some of a project's videos.

    ``servers`` maps each stage to the snapshot of the server it calls (``ModelServer.snapshot``),
    so a run keeps its configuration even if the server is edited later.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed (some videos)"
        CANCELLED = "cancelled", "cancelled"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="draft_runs")
    pipeline = models.CharField(max_length=20, choices=pipeline_choices)
    model = models.CharField(max_length=200, blank=True, help_text="Model name; blank for templates.")
    prompt_version = models.CharField(max_length=300, help_text="Per stage for multi-stage runs: stage:version, ...")
    qa_type = models.CharField(max_length=64, blank=True, help_text="For llm runs: the QA type asked for.")
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    servers = models.JSONField(default=dict, blank=True, help_text="Stage -> server snapshot.")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"run {self.pk} {self.pipeline} on {self.project}"


class DraftJob(models.Model):
    """One video's share of a run: its progress, attempts and last error."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    run = models.ForeignKey(DraftRun, on_delete=models.CASCADE, related_name="jobs")
    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="draft_jobs")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    attempts = models.IntegerField(default=0)
    error = models.TextField(blank=True)
    n_drafts = models.IntegerField(default=0)
    stage = models.CharField(max_length=40, blank=True, help_text="The stage running now, or the one that failed.")
    summary = models.JSONField(default=dict, blank=True, help_text="Pipeline counts, e.g. flagged or dropped items.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "video"], name="draftjob_unique_video")]


class Draft(models.Model):
    """A QA pair as a machine wrote it. Clip bounds in seconds of the video."""

    job = models.ForeignKey(DraftJob, on_delete=models.CASCADE, related_name="drafts")
    qa_type = models.CharField(max_length=64)
    question = models.TextField()
    answer = models.TextField()
    options = models.JSONField(null=True, blank=True)
    answer_index = models.IntegerField(null=True, blank=True)
    clip_start_s = models.FloatField()
    clip_end_s = models.FloatField()
    source_key = models.CharField(
        max_length=100,
        blank=True,
        help_text="What produced it within the job (template name and index); unique per job.",
    )
    params = models.JSONField(default=dict, blank=True, help_text="E.g. the recorded option-shuffle seed.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "source_key"], name="draft_unique_source_key")]
