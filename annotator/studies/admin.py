from django.contrib import admin

from annotator.readonly_admin import ReadOnlyAdmin
from annotator.studies.models import Condition, Item, Participant, Prediction, Study, Trial


class ConditionInline(admin.TabularInline):
    model = Condition
    extra = 0


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "kind", "preset", "questions_per_participant", "independent", "created_at"]
    list_filter = ["kind"]
    inlines = [ConditionInline]


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ["id", "condition", "index", "role", "group", "subtask", "seed"]
    list_filter = ["condition__study", "role", "group"]
    raw_id_fields = ["qa_pair", "footage"]


@admin.register(Participant)
class ParticipantAdmin(ReadOnlyAdmin):
    list_display = ["user", "study", "stage", "excluded", "started_at", "finished_at"]
    list_filter = ["study", "stage", "excluded"]


@admin.register(Trial)
class TrialAdmin(ReadOnlyAdmin):
    """Answers and their times are what a study reports: shown, never edited here."""

    list_display = ["participant", "item", "position", "practice", "timed_out", "client_rt_ms", "answered_at"]
    raw_id_fields = ["participant", "item"]


@admin.register(Prediction)
class PredictionAdmin(ReadOnlyAdmin):
    list_display = ["model", "item", "scored_at", "created_at"]
    list_filter = ["study", "model"]
    raw_id_fields = ["item"]
