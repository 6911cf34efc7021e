from django.contrib import admin

from annotator.core.models import Job
from annotator.readonly_admin import ReadOnlyAdmin


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    """Jobs are written by services and workers only: read-only here."""

    list_display = ["key", "status", "deliveries", "sends", "sent_at", "started_at", "finished_at", "error"]
    list_filter = ["status", "task"]
    search_fields = ["key"]
