"""What the QA pages and the API accept for a QA type, the queue policy and the export's filters.

DRF serializers, so the QA types page (``qa.views``) and the API (``api.views``) refuse the same
input with the same words: every string has a length limit, every number its bounds.
"""

from __future__ import annotations

from rest_framework import serializers

from annotator.core.validators import FILTER_MAX, MARKDOWN_MAX, TEXT_MAX
from annotator.errors import Invalid
from annotator.qa.models import QAType
from annotator.qa.services import MAX_OVERLAP_K

# A QA type's window: positive, at most an hour (EgoNight's windows are 3 s).
WINDOW_S_MAX = 3600.0
OVERLAP_K_MAX = MAX_OVERLAP_K


class QATypeIO(serializers.ModelSerializer):
    """A QA type. On input: a slug new to the project (``context["project"]``), and a window length
    when the clip policy is ``window``."""

    class Meta:
        model = QAType
        fields = [
            "slug",
            "name",
            "description",
            "paired",
            "clip_policy",
            "window_s",
            "guidelines",
            "set_kind",
            "answer_kind",
        ]
        extra_kwargs = {
            "description": {"max_length": TEXT_MAX},
            "guidelines": {"max_length": MARKDOWN_MAX},
            "window_s": {"min_value": 0.001, "max_value": WINDOW_S_MAX},
        }

    def validate_slug(self, value):
        project = self.context.get("project")
        if project is not None and QAType.objects.filter(project=project, slug=value).exists():
            raise serializers.ValidationError("this project already has a QA type with this slug")
        return value

    def validate(self, attrs):
        if attrs.get("clip_policy") == QAType.ClipPolicy.WINDOW and not attrs.get("window_s"):
            raise serializers.ValidationError({"window_s": "a window clip policy needs window_s > 0"})
        if attrs.get("paired") and attrs.get("set_kind"):
            raise serializers.ValidationError(
                {"set_kind": "a QA type is asked of a day-night pair (paired) or of a set, not both"}
            )
        return attrs


class PolicyIO(serializers.Serializer):
    double_check_share = serializers.FloatField(min_value=0, max_value=1, required=False)
    overlap_share = serializers.FloatField(min_value=0, max_value=1, required=False)
    overlap_k = serializers.IntegerField(min_value=2, max_value=OVERLAP_K_MAX, required=False)


class ExportFilterIn(serializers.Serializer):
    """Filters of the JSONL export (query parameters); an empty value means no filter."""

    qa_type = serializers.CharField(max_length=FILTER_MAX, required=False, allow_blank=True)
    provenance = serializers.CharField(max_length=FILTER_MAX, required=False, allow_blank=True)
    source = serializers.CharField(max_length=FILTER_MAX, required=False, allow_blank=True)
    illumination = serializers.CharField(max_length=FILTER_MAX, required=False, allow_blank=True)


def export_filters(params) -> dict[str, str | None]:
    """The export's filters from query ``params`` (``ExportFilterIn``; an empty value is no filter),
    for ``qa.exports.Filters``. Raises Invalid (too long, a NUL character) with ``{field: message}``."""
    data = ExportFilterIn(data={k: params.get(k, "") for k in ExportFilterIn().fields})
    if not data.is_valid():
        # The fields are flat: one field's messages joined by a space, as ``api.exceptions.flatten`` does.
        errors = {field: " ".join(map(str, problems)) for field, problems in data.errors.items()}
        raise Invalid("the export filters have errors", errors=errors)
    return {k: v or None for k, v in data.validated_data.items()}
