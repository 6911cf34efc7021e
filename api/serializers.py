"""Input and output serializers. Inputs validate shape; services validate meaning."""

from rest_framework import serializers

from annotator.media.models import Video
from annotator.qa.models import QAType


class DecisionIn(serializers.Serializer):
    qa_id = serializers.IntegerField()
    action = serializers.ChoiceField(choices=["keep", "modify", "delete"])
    question = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    answer = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    options = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False, allow_null=True)
    answer_index = serializers.IntegerField(required=False, allow_null=True)
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    version = serializers.IntegerField(required=False, allow_null=True, help_text="The QA pair version you saw.")
    time_spent_ms = serializers.IntegerField(required=False, allow_null=True, min_value=0)


class AdditionIn(serializers.Serializer):
    qa_type = serializers.CharField()
    question = serializers.CharField(allow_blank=True, trim_whitespace=False)
    answer = serializers.CharField(allow_blank=True, trim_whitespace=False)
    clip_start_s = serializers.FloatField(required=False, allow_null=True)
    clip_end_s = serializers.FloatField(required=False, allow_null=True)
    options = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False, allow_null=True)
    answer_index = serializers.IntegerField(required=False, allow_null=True)
    time_spent_ms = serializers.IntegerField(required=False, allow_null=True, min_value=0)


class SubmitIn(serializers.Serializer):
    idempotency_key = serializers.CharField(max_length=100)
    decisions = DecisionIn(many=True)
    added = AdditionIn(many=True, required=False, default=list)
    time_spent_ms = serializers.IntegerField(required=False, allow_null=True, min_value=0)


class SubmitOut(serializers.Serializer):
    unit_id = serializers.IntegerField()
    item_id = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    counts = serializers.DictField(child=serializers.IntegerField())
    replayed = serializers.BooleanField()


class ClipOut(serializers.Serializer):
    start_s = serializers.FloatField()
    end_s = serializers.FloatField()


class FlagOut(serializers.Serializer):
    reason = serializers.CharField()
    source = serializers.CharField()


class UnitQAOut(serializers.Serializer):
    id = serializers.IntegerField()
    qa_type = serializers.CharField()
    qa_type_name = serializers.CharField()
    origin = serializers.CharField()
    question = serializers.CharField()
    answer = serializers.CharField()
    options = serializers.ListField(child=serializers.CharField(), allow_null=True)
    answer_index = serializers.IntegerField(allow_null=True)
    clip = ClipOut()
    version = serializers.IntegerField()
    flag = FlagOut(allow_null=True)


class UnitVideoOut(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.ChoiceField(choices=["single", "day", "night"])
    filename = serializers.CharField()
    duration_s = serializers.FloatField()
    fps = serializers.FloatField()
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    illumination = serializers.CharField(allow_null=True)
    difficulty = serializers.CharField(allow_null=True)
    offset_s = serializers.FloatField()
    url = serializers.CharField(allow_null=True)
    poster_url = serializers.CharField(allow_null=True)


class QueueOut(serializers.Serializer):
    item_id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["first_pass", "overlap", "double_check"])
    lease_expires_at = serializers.DateTimeField()
    heartbeat_s = serializers.IntegerField()


class AutosaveOut(serializers.Serializer):
    state = serializers.JSONField()
    client_saved_at_ms = serializers.IntegerField()
    time_spent_ms = serializers.IntegerField(help_text="Time on the unit when saved, ms (bounded by the server).")


class CarriedOut(AutosaveOut):
    """Work of an earlier holder whose lease lapsed, carried over on a first pass or double-check."""

    username = serializers.CharField()
    saved_at = serializers.DateTimeField()


class UnitOut(serializers.Serializer):
    """A work unit as served to its annotator (shape of ``qa.selectors.unit_payload``)."""

    id = serializers.IntegerField()
    project = serializers.CharField()
    start_s = serializers.FloatField()
    end_s = serializers.FloatField()
    paired = serializers.BooleanField()
    queue = QueueOut()
    video = UnitVideoOut()
    videos = UnitVideoOut(many=True)
    qa_pairs = UnitQAOut(many=True)
    delete_reasons = serializers.ListField(child=serializers.DictField())
    autosave = AutosaveOut(allow_null=True)
    carried = CarriedOut(allow_null=True)


class HeartbeatOut(serializers.Serializer):
    lease_expires_at = serializers.DateTimeField()


class SkipIn(serializers.Serializer):
    reason = serializers.CharField(max_length=500)


class AutosaveIn(serializers.Serializer):
    state = serializers.JSONField()
    client_saved_at_ms = serializers.IntegerField(min_value=0)
    time_spent_ms = serializers.IntegerField(required=False, default=0, min_value=0,
                                             help_text="Time spent on the unit so far, ms (bounded by the server).")


class QAEditIn(serializers.Serializer):
    version = serializers.IntegerField()
    question = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    answer = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    options = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False, allow_null=True)
    answer_index = serializers.IntegerField(required=False, allow_null=True)


class QAFlagIn(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
    source = serializers.CharField(max_length=200, help_text="The model that raised the flag.")


class QAPairOut(serializers.Serializer):
    id = serializers.IntegerField()
    qa_type = serializers.CharField(source="qa_type.slug")
    status = serializers.CharField()
    provenance = serializers.CharField()
    question = serializers.CharField()
    answer = serializers.CharField()
    options = serializers.ListField(child=serializers.CharField(), allow_null=True)
    answer_index = serializers.IntegerField(allow_null=True)
    version = serializers.IntegerField()
    flag_reason = serializers.CharField()
    flag_source = serializers.CharField()


class QATypeIO(serializers.ModelSerializer):
    class Meta:
        model = QAType
        fields = ["slug", "name", "description", "paired", "clip_policy", "window_s", "guidelines"]


class PolicyIO(serializers.Serializer):
    double_check_share = serializers.FloatField(min_value=0, max_value=1, required=False)
    overlap_share = serializers.FloatField(min_value=0, max_value=1, required=False)
    overlap_k = serializers.IntegerField(min_value=2, required=False)


class VideoOut(serializers.ModelSerializer):
    class Meta:
        model = Video
        fields = ["id", "filename", "sha256", "status", "error", "duration_s", "fps", "frame_count", "width",
                  "height", "video_codec", "audio_codec", "source", "illumination", "difficulty", "domain",
                  "scenario", "view", "created_at"]
