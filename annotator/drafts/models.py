"""Machine drafts: runs of a pipeline, each model call they made, and the QA drafts they wrote.

Everything a pipeline sees and says is stored (SPEC part 2): its prompt version, model, the
request it sent (frame timestamps, not pixels), the raw output, token counts, latency and error.
A draft is immutable: it is the machine's original, which verification never overwrites.
"""

from django.db import models

from annotator.media.models import Video
from annotator.projects.models import Project


class Pipeline(models.TextChoices):
    TEMPLATES = "templates", "annotation-derived templates"
    LLM = "llm", "OpenAI-compatible model"


class DraftRun(models.Model):
    """One launch of a pipeline over some of a project's videos."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="draft_runs")
    pipeline = models.CharField(max_length=20, choices=Pipeline.choices)
    model = models.CharField(max_length=200, blank=True, help_text="Model name; blank for templates.")
    prompt_version = models.CharField(max_length=50)
    qa_type = models.CharField(max_length=64, blank=True, help_text="For llm runs: the QA type asked for.")
    params = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"run {self.pk} {self.pipeline} on {self.project}"


class DraftJob(models.Model):
    """One video's share of a run: its progress, attempts and last error."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    run = models.ForeignKey(DraftRun, on_delete=models.CASCADE, related_name="jobs")
    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="draft_jobs")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    attempts = models.IntegerField(default=0)
    error = models.TextField(blank=True)
    n_drafts = models.IntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "video"], name="draftjob_unique_video")]


class ModelCall(models.Model):
    """One request to a model server, successful or not (malformed output, timeout, refusal)."""

    job = models.ForeignKey(DraftJob, on_delete=models.CASCADE, related_name="calls")
    attempt = models.IntegerField()
    model = models.CharField(max_length=200)
    request = models.JSONField(help_text="Prompt text and frame timestamps (images are not stored).")
    raw_output = models.TextField(blank=True)
    prompt_tokens = models.IntegerField(null=True, blank=True)
    completion_tokens = models.IntegerField(null=True, blank=True)
    latency_ms = models.IntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]


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
        max_length=100, blank=True,
        help_text="What produced it within the job (template name and index); unique per job.",
    )
    params = models.JSONField(default=dict, blank=True, help_text="E.g. the recorded option-shuffle seed.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "source_key"], name="draft_unique_source_key"),
        ]
