from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from annotator.qa.models import Autosave, QAPair, QAType, QueueItem, Revision, Skip, Submission, Verdict, WorkUnit
from annotator.readonly_admin import ReadOnlyAdmin, ReadOnlyInline


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
class QueueItemAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "project",
        "unit",
        "kind",
        "status",
        "priority",
        "leased_by",
        "lease_expires_at",
        "completed_by",
    ]
    list_filter = ["project", "kind", "status"]
    raw_id_fields = ["unit", "leased_by", "completed_by", "exclude_user"]


@admin.register(Skip)
class SkipAdmin(ReadOnlyAdmin):
    list_display = ["item", "user", "reason", "created_at"]
    raw_id_fields = ["item", "user"]


class RevisionInline(ReadOnlyInline):
    model = Revision
    fields = readonly_fields = [
        "action",
        "actor_user",
        "actor_model",
        "version",
        "before",
        "after",
        "time_spent_ms",
        "created_at",
    ]


@admin.register(QAPair)
class QAPairAdmin(ReadOnlyAdmin):
    """QA pairs are shown here, and edited on their own page (``qa-detail``), which goes through
    ``annotator.qa.services`` and so writes a revision and bumps the version."""

    list_display = ["id", "qa_type", "question", "status", "provenance", "video", "version", "page"]
    list_filter = ["project", "status", "provenance", "qa_type"]
    list_select_related = ["project", "qa_type", "video"]
    search_fields = ["question", "answer"]
    raw_id_fields = ["unit", "video", "draft"]
    readonly_fields = ["page"]
    inlines = [RevisionInline]

    def view_on_site(self, obj):
        return _pair_url(obj)

    @admin.display(description="Edit on its page")
    def page(self, obj):
        return format_html('<a href="{}">/projects/{}/qa/{}/</a>', _pair_url(obj), obj.project.slug, obj.pk)


def _pair_url(pair: QAPair) -> str:
    return reverse("qa-detail", args=[pair.project.slug, pair.pk])


@admin.register(Revision)
class RevisionAdmin(ReadOnlyAdmin):
    list_display = ["id", "qa_pair", "action", "actor_user", "actor_model", "version", "time_spent_ms", "created_at"]
    list_filter = ["action"]
    list_select_related = ["qa_pair", "actor_user"]


@admin.register(Verdict)
class VerdictAdmin(ReadOnlyAdmin):
    list_display = ["id", "item", "qa_pair", "user", "action", "reason", "time_spent_ms", "created_at"]
    list_filter = ["action"]
    list_select_related = ["item", "qa_pair", "user"]


@admin.register(Submission)
class SubmissionAdmin(ReadOnlyAdmin):
    list_display = ["id", "item", "user", "idempotency_key", "created_at"]
    list_select_related = ["item", "user"]


@admin.register(Autosave)
class AutosaveAdmin(ReadOnlyAdmin):
    list_display = ["id", "item", "user", "time_spent_ms", "client_saved_at_ms", "updated_at"]
    list_select_related = ["item", "user"]
