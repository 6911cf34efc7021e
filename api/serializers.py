"""Input and output serializers. Inputs validate shape and bounds (every string has a length limit
and no NUL, every number a minimum and a maximum that fits its column, every list a length limit),
so bad input is a 400 and never reaches the database; services validate meaning."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotator.core import handles
from annotator.core.validators import (
    ADDED_MAX,
    BIGINT_MAX,
    CLIENT_MS_MAX,
    DECISIONS_MAX,
    INT_MAX,
    LABEL_MAX,
    OPTIONS_MAX,
    TEXT_MAX,
    TIME_SPENT_MS_MAX,
    StorableJSONField,
)
from annotator.media.models import Video
from annotator.qa.inputs import ExportFilterIn, PolicyIO, QATypeIO  # noqa: F401 (the API's shapes too)


def _id(**kwargs) -> serializers.IntegerField:
    """A row id: a positive bigint."""
    return serializers.IntegerField(min_value=1, max_value=BIGINT_MAX, **kwargs)


def _handle(kind: str, what: str) -> serializers.CharField:
    """A row id as an annotator's page sees it: a handle (``annotator.core.handles``, issue 20)."""
    return serializers.CharField(help_text=f"The {what}'s handle (kind {kind}): 13 letters, never its row id.")


@extend_schema_field(OpenApiTypes.STR)
class HandleField(serializers.Field):
    """An id sent back by an annotator's page: the handle of a row of ``kind``, turned into its row id
    (a raw id, or another kind's handle, is refused as no such row)."""

    def __init__(self, kind: str, what: str, **kwargs):
        self.kind, self.what = kind, what
        super().__init__(help_text=f"The {what}'s handle, as the unit payload gave it.", **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (str, int)) or len(str(data)) > 40:
            raise serializers.ValidationError(f"the {self.what}'s handle, as the unit payload gave it")
        pk = handles.decode(self.kind, str(data))
        if pk is None:
            raise serializers.ValidationError(f"not the handle of a {self.what}: use the one the unit payload gave")
        return pk

    def to_representation(self, value):
        return handles.encode(self.kind, value)


def _version(**kwargs) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=INT_MAX, help_text="The QA pair version you saw.", **kwargs)


def _text(**kwargs) -> serializers.CharField:
    """Question or answer text as typed (DRF's CharField also refuses NUL and lone surrogates)."""
    return serializers.CharField(max_length=TEXT_MAX, trim_whitespace=False, **kwargs)


def _options() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=TEXT_MAX, allow_blank=True),
        max_length=OPTIONS_MAX,
        required=False,
        allow_null=True,
    )


def _answer_index() -> serializers.IntegerField:
    return serializers.IntegerField(min_value=0, max_value=OPTIONS_MAX - 1, required=False, allow_null=True)


def _time_spent() -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=0,
        max_value=TIME_SPENT_MS_MAX,
        required=False,
        allow_null=True,
        help_text="Time spent, ms, as the page measured it (at most one day).",
    )


# Clip bounds in seconds: finite (DRF's FloatField refuses NaN and infinities) and at most a day.
CLIP_S_MAX = 24 * 3600.0


def _seconds(help_text: str) -> serializers.FloatField:
    """An optional time in seconds, finite, from 0 to a day (the service bounds it to the unit)."""
    return serializers.FloatField(
        min_value=0, max_value=CLIP_S_MAX, required=False, allow_null=True, help_text=help_text
    )


class DecisionIn(serializers.Serializer):
    qa_id = HandleField("qa", "QA pair")
    action = serializers.ChoiceField(choices=["keep", "modify", "delete"])
    question = _text(required=False, allow_blank=True)
    answer = _text(required=False, allow_blank=True)
    options = _options()
    answer_index = _answer_index()
    reason = serializers.CharField(
        max_length=20,
        required=False,
        allow_blank=True,
        default="",
        help_text="For a delete: meaningless, vague, duplicate, inconsistent or wrong.",
    )
    version = _version(required=False, allow_null=True)
    time_spent_ms = _time_spent()
    answer_start_s = _seconds(
        "Interval answers (QA types whose answer_kind is interval): start, seconds in the unit's time base."
    )
    answer_end_s = _seconds("Interval answers: end, seconds; after the start, within the unit.")


class AdditionIn(serializers.Serializer):
    # Blank is let through so that the service refuses it in plain words, on the card concerned.
    qa_type = serializers.CharField(
        max_length=64, allow_blank=True, help_text="The slug of one of the project's QA types (required)."
    )
    question = _text(allow_blank=True)
    answer = _text(allow_blank=True)
    clip_start_s = serializers.FloatField(min_value=0, max_value=CLIP_S_MAX, required=False, allow_null=True)
    clip_end_s = serializers.FloatField(min_value=0, max_value=CLIP_S_MAX, required=False, allow_null=True)
    options = _options()
    answer_index = _answer_index()
    time_spent_ms = _time_spent()
    answer_start_s = _seconds(
        "Interval answers (QA types whose answer_kind is interval): start, seconds in the unit's time base."
    )
    answer_end_s = _seconds("Interval answers: end, seconds; after the start, within the unit.")


class SubmitIn(serializers.Serializer):
    idempotency_key = serializers.CharField(max_length=100)
    decisions = serializers.ListField(child=DecisionIn(), max_length=DECISIONS_MAX)
    added = serializers.ListField(child=AdditionIn(), max_length=ADDED_MAX, required=False, default=list)
    time_spent_ms = _time_spent()


class SubmitOut(serializers.Serializer):
    unit_id = _handle("unit", "unit")
    item_id = _handle("item", "queue item")
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


class LabelledVideoOut(serializers.Serializer):
    """A video an item shows under a label (EgoExoBench seed 001 Fig. 2: "Video 1", "Video 2", ...)."""

    label = serializers.CharField()
    video_id = _handle("video", "video")
    role = serializers.ChoiceField(choices=["query", "reference", "candidate"])
    start_s = serializers.FloatField()
    end_s = serializers.FloatField()
    fps = serializers.FloatField(required=False)
    duration_s = serializers.FloatField(required=False)
    url = serializers.CharField(allow_null=True, required=False)
    poster_url = serializers.CharField(allow_null=True, required=False)


class UnitQAOut(serializers.Serializer):
    id = _handle("qa", "QA pair")
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
    answer_kind = serializers.ChoiceField(choices=["text", "interval"])
    answer_start_s = serializers.FloatField(allow_null=True)
    answer_end_s = serializers.FloatField(allow_null=True)
    videos = LabelledVideoOut(many=True, help_text="Items whose options are videos: the labelled videos, in order.")


class UnitVideoOut(serializers.Serializer):
    id = _handle("video", "video")
    role = serializers.ChoiceField(choices=["single", "day", "night", "ego", "exo", "part"])
    label = serializers.CharField(allow_null=True, help_text='What the player shows: "ego", "exo 1", "day", "night".')
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
    item_id = _handle("item", "queue item")
    kind = serializers.ChoiceField(choices=["first_pass", "overlap", "double_check", "rework", "qualification"])
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


class CommentOut(serializers.Serializer):
    qa_id = _handle("qa", "QA pair")
    text = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())


class DeletedPairOut(serializers.Serializer):
    """A QA pair the reworked pass deleted, in the unit payload's QA pair shape plus its status."""

    id = _handle("qa", "QA pair")
    qa_type = serializers.CharField()
    question = serializers.CharField()
    answer = serializers.CharField()
    version = serializers.IntegerField()
    status = serializers.CharField()
    delete_reason = serializers.CharField()


class ReworkOut(serializers.Serializer):
    """The ``review`` part of a rework unit's payload (``annotator.review.selectors.rework_part``)."""

    reopened = serializers.BooleanField(help_text="Reopened by you (no comments), not sent back by a reviewer.")
    decision = serializers.CharField(allow_null=True)
    round = serializers.IntegerField(allow_null=True)
    reviewed_at = serializers.DateTimeField(allow_null=True)
    comments = CommentOut(many=True)
    deleted_pairs = DeletedPairOut(
        many=True, help_text="Pairs your pass deleted: keep restores one; no decision leaves it deleted."
    )


class UnitOut(serializers.Serializer):
    """A work unit as served to its annotator (shape of ``qa.selectors.unit_payload``): every id is a
    handle (``annotator.core.handles``), and the API's unit paths take the unit's."""

    id = _handle("unit", "unit")
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
    review = ReworkOut(
        required=False,
        help_text="Rework units only (queue.kind rework): the reviewer's comments "
        "per QA pair and the pairs your pass deleted (issue 20).",
    )


class HeartbeatOut(serializers.Serializer):
    lease_expires_at = serializers.DateTimeField()


class SkipIn(serializers.Serializer):
    reason = serializers.CharField(max_length=500)


class AutosaveIn(serializers.Serializer):
    state = StorableJSONField(help_text="The page's in-progress work: a JSON object, kept as given.")
    client_saved_at_ms = serializers.IntegerField(
        min_value=0, max_value=CLIENT_MS_MAX, help_text="The page's clock when it saved (ms since the epoch)."
    )
    time_spent_ms = serializers.IntegerField(
        required=False,
        default=0,
        min_value=0,
        max_value=TIME_SPENT_MS_MAX,
        help_text="Time spent on the unit so far, ms (bounded by the server).",
    )

    def validate_state(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("state must be a JSON object")
        return value


class QAEditIn(serializers.Serializer):
    version = _version()
    question = _text(required=False, allow_blank=True)
    answer = _text(required=False, allow_blank=True)
    options = _options()
    answer_index = _answer_index()


class QAFlagIn(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
    source = serializers.CharField(max_length=LABEL_MAX, help_text="The model that raised the flag.")


class VideoFilterIn(serializers.Serializer):
    """Filters of the video list (query parameters); an empty value means no filter."""

    status = serializers.ChoiceField(choices=Video.Status.choices, required=False, allow_blank=True)
    source = serializers.ChoiceField(choices=Video.Source.choices, required=False, allow_blank=True)
    illumination = serializers.ChoiceField(choices=Video.Illumination.choices, required=False, allow_blank=True)


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


class VideoOut(serializers.ModelSerializer):
    """A video with the URLs of its media (``media.urls.media_urls``; absolute when the request is in
    the context): ``rendition`` (MP4), ``poster`` (JPEG), ``hls`` (master playlist, null for videos
    not longer than ``MEDIA_HLS_MIN_DURATION_S``) and ``thumbnails_vtt``; each null until written.
    All go through ``/files/``, which checks access (session or ``Authorization: Token``)."""

    rendition = serializers.SerializerMethodField()
    poster = serializers.SerializerMethodField()
    hls = serializers.SerializerMethodField()
    thumbnails_vtt = serializers.SerializerMethodField()

    class Meta:
        model = Video
        fields = [
            "id",
            "filename",
            "sha256",
            "status",
            "error",
            "duration_s",
            "fps",
            "frame_count",
            "width",
            "height",
            "video_codec",
            "audio_codec",
            "source",
            "illumination",
            "difficulty",
            "domain",
            "scenario",
            "view",
            "created_at",
            "rendition",
            "poster",
            "hls",
            "thumbnails_vtt",
        ]

    def _url(self, name: str) -> str | None:
        from annotator.media.urls import media_url

        url = media_url(name)
        request = self.context.get("request")
        return request.build_absolute_uri(url) if url and request is not None else url

    def get_rendition(self, video) -> str | None:
        return self._url(video.rendition.name)

    def get_poster(self, video) -> str | None:
        return self._url(video.poster.name)

    def get_hls(self, video) -> str | None:
        return self._url(video.hls.name)

    def get_thumbnails_vtt(self, video) -> str | None:
        return self._url(video.thumbnails_vtt.name)
