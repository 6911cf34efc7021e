from django.contrib import admin

from annotator.drafts.models import DraftJob, DraftRun


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
