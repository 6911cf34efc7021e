from django.contrib import admin

from annotator.qa.models import QAPair, QAType, QueueItem, Revision, Skip, WorkUnit


@admin.register(QAType)
class QATypeAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "project", "paired", "clip_policy", "window_s"]
    list_filter = ["project", "paired"]


@admin.register(WorkUnit)
class WorkUnitAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "video", "group", "start_s", "end_s"]
    list_filter = ["project"]
    raw_id_fields = ["video", "group"]


@admin.register(QueueItem)
class QueueItemAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "unit", "kind", "status", "priority", "leased_by", "lease_expires_at", "completed_by"]
    list_filter = ["project", "kind", "status"]
    raw_id_fields = ["unit", "leased_by", "completed_by", "exclude_user"]


@admin.register(Skip)
class SkipAdmin(admin.ModelAdmin):
    list_display = ["item", "user", "reason", "created_at"]
    raw_id_fields = ["item", "user"]


class RevisionInline(admin.TabularInline):
    model = Revision
    extra = 0
    can_delete = False
    readonly_fields = ["action", "actor_user", "actor_model", "version", "before", "after", "time_spent_ms", "created_at"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(QAPair)
class QAPairAdmin(admin.ModelAdmin):
    list_display = ["id", "qa_type", "question", "status", "provenance", "video"]
    list_filter = ["project", "status", "provenance", "qa_type"]
    search_fields = ["question", "answer"]
    raw_id_fields = ["unit", "video", "draft"]
    inlines = [RevisionInline]
