"""Machine drafts: runs of a pipeline, each model call they made, and the QA drafts they wrote.

Everything a pipeline sees and says is stored (SPEC part 2): its prompt version, model, the
request it sent (frame timestamps, not pixels), the raw output, token counts, latency and error.
A draft is immutable: it is the machine's original, which verification never overwrites.
"""

from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from annotator.media.models import Video
from annotator.projects.models import Project


class Pipeline(models.TextChoices):
    TEMPLATES = "templates", "annotation-derived templates"
    LLM = "llm", "OpenAI-compatible model, one prompt"
    EGONIGHT = "egonight", "EgoNight day-augmented (caption, questions, answer)"
    VUDG = "vudg", "VUDG multi-expert cascade (open QA, distractors, review)"
    EGOEXOBENCH_CHECKS = "egoexobench_checks", "EgoExoBench checks (consistency, text-only, hard negatives)"
    IMPORT = "import", "import QA pairs or predictions from JSONL"


# A key variable's name must end in _API_KEY (OPENAI_API_KEY, VLLM_API_KEY, LLM_API_KEY...), so a
# server cannot be pointed at the worker's other secrets (DJANGO_SECRET_KEY, AWS_SECRET_ACCESS_KEY...)
# and have them sent as its bearer token.
KEY_ENV_PATTERN = r"^[A-Z][A-Z0-9_]*_API_KEY$"
KEY_ENV_RULE = "an environment variable name in capitals ending in _API_KEY, e.g. OPENAI_API_KEY"


def no_credentials_in_url(url: str) -> None:
    """Refuse a base URL with a user name or password in it (it is shown to reviewers and stored
    on every run): the key belongs in the key variable."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        raise ValidationError("put credentials in the key variable (--key-env), not in the URL")


class ModelServer(models.Model):
    """A named OpenAI-compatible endpoint of a project (OpenAI, vLLM, llama.cpp server, Ollama).

    The key is never stored: ``key_env`` names the environment variable of the worker that holds
    it (a name ending in ``_API_KEY``); with none named, a placeholder key is sent (local servers
    need none). ``concurrency`` bounds the requests in flight to this server across all workers.
    Prices are US dollars per million tokens, used for each call's estimated cost.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="model_servers")
    name = models.SlugField(max_length=64)
    base_url = models.URLField(max_length=500, validators=[no_credentials_in_url])
    model = models.CharField(max_length=200)
    key_env = models.CharField(max_length=100, blank=True, help_text="Environment variable holding the API key.",
                               validators=[RegexValidator(KEY_ENV_PATTERN, KEY_ENV_RULE)])
    concurrency = models.PositiveIntegerField(default=4, validators=[MinValueValidator(1), MaxValueValidator(256)])
    price_prompt_per_mtok = models.FloatField(default=0.0, help_text="USD per million prompt tokens.",
                                              validators=[MinValueValidator(0.0), MaxValueValidator(10_000.0)])
    price_completion_per_mtok = models.FloatField(default=0.0, help_text="USD per million completion tokens.",
                                                  validators=[MinValueValidator(0.0), MaxValueValidator(10_000.0)])
    timeout_s = models.FloatField(default=120.0, help_text="Seconds to wait for one reply.",
                                  validators=[MinValueValidator(1.0), MaxValueValidator(3600.0)])
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="modelserver_unique_name")]
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.model} at {self.base_url})"

    def snapshot(self) -> dict:
        """The configuration a run stores per stage (never the key itself)."""
        return {"server": self.name, "server_id": self.pk, "base_url": self.base_url, "model": self.model,
                "key_env": self.key_env, "concurrency": self.concurrency, "timeout_s": self.timeout_s,
                "price_prompt_per_mtok": self.price_prompt_per_mtok,
                "price_completion_per_mtok": self.price_completion_per_mtok}


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
    pipeline = models.CharField(max_length=20, choices=Pipeline.choices)
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


class ModelCall(models.Model):
    """One request to a model server, successful or not (malformed output, timeout, refusal, 429).

    A cache hit is a row too (``cached_from`` the call whose output it reused, cost 0, no tokens),
    so a run's calls per stage and its cost can be read from this table alone.
    """

    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="model_calls")
    job = models.ForeignKey(DraftJob, null=True, blank=True, on_delete=models.CASCADE, related_name="calls")
    server = models.ForeignKey(ModelServer, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls")
    stage = models.CharField(max_length=40, blank=True)
    prompt_version = models.CharField(max_length=50, blank=True)
    attempt = models.IntegerField()
    model = models.CharField(max_length=200)
    request = models.JSONField(help_text="The stage's input: prompt text and frame timestamps (images are not stored).")
    raw_output = models.TextField(blank=True)
    output = models.JSONField(null=True, blank=True, help_text="The validated answer (null when it failed).")
    cache_key = models.CharField(max_length=64, blank=True, db_index=True)
    cached_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    cost_usd = models.FloatField(null=True, blank=True, help_text="Estimated from tokens and the server's prices.")
    retry_after_s = models.FloatField(null=True, blank=True)
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
