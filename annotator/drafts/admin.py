from django.contrib import admin

from annotator.drafts.models import DraftJob, DraftRun, ModelCall, ModelServer
from annotator.readonly_admin import ReadOnlyAdmin


@admin.register(ModelServer)
class ModelServerAdmin(admin.ModelAdmin):
    """Servers are configuration: editable here as with the model_server command (no key is stored)."""

    list_display = ["id", "project", "name", "model", "base_url", "key_env", "concurrency",
                    "price_prompt_per_mtok", "price_completion_per_mtok"]
    list_filter = ["project"]


@admin.register(DraftRun)
class DraftRunAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "pipeline", "status", "model", "prompt_version", "qa_type", "created_at"]
    list_filter = ["pipeline", "status"]
    readonly_fields = [f.name for f in DraftRun._meta.fields]


@admin.register(DraftJob)
class DraftJobAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "video", "status", "stage", "attempts", "n_drafts", "error"]
    list_filter = ["status"]
    readonly_fields = [f.name for f in DraftJob._meta.fields]


@admin.register(ModelCall)
class ModelCallAdmin(ReadOnlyAdmin):
    list_display = ["id", "job", "stage", "attempt", "model", "latency_ms", "prompt_tokens", "completion_tokens",
                    "cost_usd", "cached_from", "error"]
    list_filter = ["stage"]
