"""View-only Django admin for the records that make up the audit trail.

QA pairs, revisions, verdicts, submissions, autosaves, queue items and skips, and an experiment's
items, participants, trials and model predictions change only through the services
the pages and the API use (they write revisions, bump versions, check leases). An admin form would
bypass all of that, so for these models the Django admin may look but not add, change or delete,
whoever is logged in (superusers included).
"""

from django.contrib import admin


class _NoWrites:
    """No add, change or delete permission, for anyone (a POST to those forms is a 403)."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyAdmin(_NoWrites, admin.ModelAdmin):
    """A ModelAdmin that only shows."""


class ReadOnlyInline(_NoWrites, admin.TabularInline):
    """An inline that only shows its rows."""

    extra = 0
    can_delete = False
