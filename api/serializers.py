"""Input and output serializers. Inputs validate shape; services validate meaning."""

from rest_framework import serializers

from annotator.media.models import Video


class DecisionIn(serializers.Serializer):
    qa_id = serializers.IntegerField()
    action = serializers.ChoiceField(choices=["keep", "modify", "delete"])
    question = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    answer = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    options = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False, allow_null=True)
    answer_index = serializers.IntegerField(required=False, allow_null=True)
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    time_spent_ms = serializers.IntegerField(required=False, allow_null=True, min_value=0)


class AdditionIn(serializers.Serializer):
    qa_type = serializers.CharField()
    question = serializers.CharField(allow_blank=True, trim_whitespace=False)
    answer = serializers.CharField(allow_blank=True, trim_whitespace=False)
    clip_start_s = serializers.FloatField(required=False, allow_null=True)
    clip_end_s = serializers.FloatField(required=False, allow_null=True)
    time_spent_ms = serializers.IntegerField(required=False, allow_null=True, min_value=0)


class SubmitIn(serializers.Serializer):
    idempotency_key = serializers.CharField(max_length=100)
    decisions = DecisionIn(many=True)
    added = AdditionIn(many=True, required=False, default=list)
    time_spent_ms = serializers.IntegerField(required=False, allow_null=True, min_value=0)


class SubmitOut(serializers.Serializer):
    unit_id = serializers.IntegerField()
    status = serializers.CharField()
    counts = serializers.DictField(child=serializers.IntegerField())
    replayed = serializers.BooleanField()


class ClipOut(serializers.Serializer):
    start_s = serializers.FloatField()
    end_s = serializers.FloatField()


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


class UnitVideoOut(serializers.Serializer):
    id = serializers.IntegerField()
    filename = serializers.CharField()
    duration_s = serializers.FloatField()
    fps = serializers.FloatField()
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    illumination = serializers.CharField(allow_null=True)
    url = serializers.CharField(allow_null=True)
    poster_url = serializers.CharField(allow_null=True)


class UnitOut(serializers.Serializer):
    """A work unit as served to its annotator (shape of ``qa.selectors.unit_payload``)."""

    id = serializers.IntegerField()
    project = serializers.CharField()
    start_s = serializers.FloatField()
    end_s = serializers.FloatField()
    lease_expires_at = serializers.DateTimeField(allow_null=True)
    video = UnitVideoOut()
    qa_pairs = UnitQAOut(many=True)
    qa_types = serializers.ListField(child=serializers.DictField())
    delete_reasons = serializers.ListField(child=serializers.DictField())


class VideoOut(serializers.ModelSerializer):
    class Meta:
        model = Video
        fields = ["id", "filename", "sha256", "status", "error", "duration_s", "fps", "frame_count", "width",
                  "height", "video_codec", "audio_codec", "source", "illumination", "difficulty", "domain",
                  "scenario", "view", "created_at"]
