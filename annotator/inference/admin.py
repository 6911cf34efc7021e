from django.contrib import admin

from annotator.inference.models import ModelCall, ModelServer
from annotator.readonly_admin import ReadOnlyAdmin


@admin.register(ModelServer)
class ModelServerAdmin(admin.ModelAdmin):
    """Servers are configuration: editable here as with the model_server command (no key is stored)."""

    list_display = [
        "id",
        "project",
        "name",
        "model",
        "base_url",
        "key_env",
        "concurrency",
        "price_prompt_per_mtok",
        "price_completion_per_mtok",
    ]
    list_filter = ["project"]


@admin.register(ModelCall)
class ModelCallAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "job",
        "stage",
        "attempt",
        "model",
        "latency_ms",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "cached_from",
        "error",
    ]
    list_filter = ["stage"]
