"""Model servers and model calls: the endpoints a project's runs call, and every request made.

Drafting runs, evaluations and study evaluations all call models through ``annotator.inference``;
every request (or cache hit) is a ``ModelCall`` row. A call made for a drafting job points to it
(``job``, a reference by name: this app imports nothing of drafts); other calls name what they
were for in their stored ``request`` (e.g. ``{"evaluation": id, "prediction": id}``).

These two models lived in ``annotator.drafts`` until issue 18; their rows were kept (migration
``inference.0001`` moves the state, ``inference.0002`` renames the tables).
"""

from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from annotator.projects.models import Project

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
    key_env = models.CharField(
        max_length=100,
        blank=True,
        help_text="Environment variable holding the API key.",
        validators=[RegexValidator(KEY_ENV_PATTERN, KEY_ENV_RULE)],
    )
    concurrency = models.PositiveIntegerField(default=4, validators=[MinValueValidator(1), MaxValueValidator(256)])
    price_prompt_per_mtok = models.FloatField(
        default=0.0,
        help_text="USD per million prompt tokens.",
        validators=[MinValueValidator(0.0), MaxValueValidator(10_000.0)],
    )
    price_completion_per_mtok = models.FloatField(
        default=0.0,
        help_text="USD per million completion tokens.",
        validators=[MinValueValidator(0.0), MaxValueValidator(10_000.0)],
    )
    timeout_s = models.FloatField(
        default=120.0,
        help_text="Seconds to wait for one reply.",
        validators=[MinValueValidator(1.0), MaxValueValidator(3600.0)],
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="modelserver_unique_name")]
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.model} at {self.base_url})"

    def snapshot(self) -> dict:
        """The configuration a run stores per stage (never the key itself)."""
        return {
            "server": self.name,
            "server_id": self.pk,
            "base_url": self.base_url,
            "model": self.model,
            "key_env": self.key_env,
            "concurrency": self.concurrency,
            "timeout_s": self.timeout_s,
            "price_prompt_per_mtok": self.price_prompt_per_mtok,
            "price_completion_per_mtok": self.price_completion_per_mtok,
        }


class ModelCall(models.Model):
    """One request to a model server, successful or not (malformed output, timeout, refusal, 429).

    A cache hit is a row too (``cached_from`` the call whose output it reused, cost 0, no tokens),
    so a run's calls per stage and its cost can be read from this table alone.
    """

    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="model_calls")
    job = models.ForeignKey("drafts.DraftJob", null=True, blank=True, on_delete=models.CASCADE, related_name="calls")
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
