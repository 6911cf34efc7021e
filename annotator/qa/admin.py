from django.contrib import admin

from annotator.qa.models import QAPair, QAType, Revision, WorkUnit


@admin.register(QAType)
class QATypeAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "project", "paired", "clip_policy", "window_s"]
    list_filter = ["project", "paired"]


@admin.register(WorkUnit)
class WorkUnitAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "video", "status", "leased_by", "lease_expires_at", "completed_by"]
    list_filter = ["project", "status"]
    raw_id_fields = ["video", "leased_by", "completed_by"]


class RevisionInline(admin.TabularInline):
    model = Revision
    extra = 0
    can_delete = False
    readonly_fields = ["action", "actor_user", "actor_model", "before", "after", "time_spent_ms", "created_at"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(QAPair)
class QAPairAdmin(admin.ModelAdmin):
    list_display = ["id", "qa_type", "question", "status", "provenance", "video"]
    list_filter = ["project", "status", "provenance", "qa_type"]
    search_fields = ["question", "answer"]
    raw_id_fields = ["unit", "video", "draft"]
    inlines = [RevisionInline]
