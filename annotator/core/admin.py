from django.contrib import admin

from annotator.core.models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    """Jobs are written by services and workers only: read-only here."""

    list_display = ["key", "status", "deliveries", "sends", "sent_at", "started_at", "finished_at", "error"]
    list_filter = ["status", "task"]
    search_fields = ["key"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
