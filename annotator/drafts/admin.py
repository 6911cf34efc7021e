from django.contrib import admin

from annotator.drafts.models import DraftJob, DraftRun, ModelCall


@admin.register(DraftRun)
class DraftRunAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "pipeline", "model", "prompt_version", "qa_type", "created_at"]


@admin.register(DraftJob)
class DraftJobAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "video", "status", "attempts", "n_drafts", "error"]
    list_filter = ["status"]


@admin.register(ModelCall)
class ModelCallAdmin(admin.ModelAdmin):
    list_display = ["id", "job", "attempt", "model", "latency_ms", "prompt_tokens", "completion_tokens", "error"]
    readonly_fields = [f.name for f in ModelCall._meta.fields]
