from django.contrib import admin

from annotator.experiments.models import Condition, Experiment, Item, Participant, Prediction, Trial
from annotator.readonly_admin import ReadOnlyAdmin


class ConditionInline(admin.TabularInline):
    model = Condition
    extra = 0


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "preset", "questions_per_participant", "conditions_per_participant", "created_at"]
    inlines = [ConditionInline]


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ["id", "condition", "index", "practice", "seed"]
    list_filter = ["condition__experiment", "practice"]
    raw_id_fields = ["clip"]


@admin.register(Participant)
class ParticipantAdmin(ReadOnlyAdmin):
    list_display = ["user", "experiment", "stage", "excluded", "started_at", "finished_at"]
    list_filter = ["experiment", "stage", "excluded"]


@admin.register(Trial)
class TrialAdmin(ReadOnlyAdmin):
    """Answers and their times are what a study reports: shown, never edited here."""

    list_display = ["participant", "item", "position", "practice", "client_rt_ms", "kendall_tau_b", "answered_at"]
    raw_id_fields = ["participant", "item"]


@admin.register(Prediction)
class PredictionAdmin(ReadOnlyAdmin):
    list_display = ["model", "item", "kendall_tau_b", "exact_match", "created_at"]
    list_filter = ["experiment", "model"]
    raw_id_fields = ["item"]
