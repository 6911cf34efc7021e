"""Videos: originals kept untouched in storage, their probe results and browser renditions."""

from django.db import models

from annotator.core.handles import random_key
from annotator.projects.models import Project


class Video(models.Model):
    """One ingested file of a project, deduplicated by the SHA-256 of its content.

    ``status`` moves processing -> ready (rendition and poster written) or -> failed (``error``
    says why, in words meant for the person who ingested it). Durations are in seconds.
    """

    class Status(models.TextChoices):
        PROCESSING = "processing", "processing"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    class Source(models.TextChoices):
        REAL = "real", "real"
        SYNTHETIC = "synthetic", "synthetic"

    class Illumination(models.TextChoices):
        DAY = "day", "day"
        NIGHT = "night", "night"
        OTHER = "other", "other"

    class Difficulty(models.TextChoices):
        EASY = "easy", "easy"
        MEDIUM = "medium", "medium"
        HARD = "hard", "hard"

    class View(models.TextChoices):
        EGO = "ego", "ego"
        EXO = "exo", "exo"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="videos")
    sha256 = models.CharField(max_length=64)
    filename = models.CharField(max_length=255)
    size_bytes = models.BigIntegerField(default=0)
    original = models.FileField(max_length=500, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PROCESSING)
    error = models.TextField(blank=True)

    # ffprobe results
    container = models.CharField(max_length=100, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    fps = models.FloatField(null=True, blank=True)
    frame_count = models.IntegerField(null=True, blank=True)
    width = models.IntegerField(null=True, blank=True)
    height = models.IntegerField(null=True, blank=True)
    video_codec = models.CharField(max_length=50, blank=True)
    audio_codec = models.CharField(max_length=50, blank=True)
    rotation = models.IntegerField(default=0)

    # Metadata the papers rely on (SPEC part 1); free labels are blank when unknown.
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.REAL)
    illumination = models.CharField(max_length=20, choices=Illumination.choices, blank=True)
    difficulty = models.CharField(max_length=20, choices=Difficulty.choices, blank=True)
    domain = models.CharField(max_length=100, blank=True)
    scenario = models.CharField(max_length=200, blank=True)
    view = models.CharField(max_length=10, choices=View.choices, blank=True)
    annotations = models.JSONField(
        default=dict,
        blank=True,
        help_text="Structured annotations from the manifest: description, objects, actions, counts.",
    )
    extra = models.JSONField(default=dict, blank=True, help_text="Other manifest keys, kept as given.")

    derived_from = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="derivatives",
        help_text="For synthetic videos made from another (e.g. a night rendition of a day clip).",
    )

    media_key = models.CharField(
        max_length=13,
        unique=True,
        default=random_key,
        editable=False,
        help_text="The name of the folders of its rendition, poster, HLS and thumbnails (media.streaming.media_key): "
        "13 random letters, so a media URL says nothing of the video's id or age (issue 20).",
    )
    rendition = models.FileField(max_length=500, blank=True)
    poster = models.FileField(max_length=500, blank=True)
    hls = models.FileField(
        max_length=500,
        blank=True,
        help_text="HLS master playlist, for videos longer than MEDIA_HLS_MIN_DURATION_S (blank for short ones).",
    )
    thumbnails_vtt = models.FileField(
        max_length=500, blank=True, help_text="WebVTT of timeline thumbnails (sprite sheet regions, #xywh)."
    )

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["project", "sha256"], name="video_unique_content_per_project")]

    def __str__(self) -> str:
        return f"{self.filename} ({self.status})"

    def metadata(self) -> dict:
        """The metadata object used by exports: the paper labels plus any extra manifest keys."""
        return {
            **self.extra,
            "difficulty": self.difficulty or None,
            "domain": self.domain or None,
            "scenario": self.scenario or None,
            "view": self.view or None,
        }


class VideoGroup(models.Model):
    """Videos that belong together (SPEC part 1), of three kinds:

    - ``day_night``: the EgoNight pair (seed 000 Sec. 3.1), a ``day`` and a ``night`` member of the
      same route, the night one starting ``offset_s`` seconds later (night time = day time + offset_s).
    - ``ego_exo``: an EgoExoBench multi-view set (seed 001 Sec. 3), one ``ego`` member and N ``exo``
      members (``position`` 1..N), each with its sync offset (member time = ego time + offset_s).
    - ``life_log``: an X-LeBench life log (seed 002 Sec. 3), ``part`` members ordered by
      ``position`` and placed at virtual wall-clock time ``offset_s`` seconds after the log's start
      (``params["start"]``, ISO 8601); gaps between parts are time not recorded.
    """

    class Kind(models.TextChoices):
        DAY_NIGHT = "day_night", "day-night pair"
        EGO_EXO = "ego_exo", "ego-exo set"
        LIFE_LOG = "life_log", "life log"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="video_groups")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    name = models.CharField(max_length=255)
    params = models.JSONField(default=dict, blank=True, help_text="E.g. how a synthetic member was derived.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="videogroup_unique_name")]

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


class VideoGroupMember(models.Model):
    """One video of a group, with its role in it, its ``position`` among members of that role
    (0 for day, night and ego; 1..N for exo views; 0..n-1 for life-log parts) and its time offset in
    seconds (see ``VideoGroup`` for what the offset means per kind)."""

    class Role(models.TextChoices):
        DAY = "day", "day"
        NIGHT = "night", "night"
        EGO = "ego", "ego"
        EXO = "exo", "exo"
        PART = "part", "life-log part"

    group = models.ForeignKey(VideoGroup, on_delete=models.CASCADE, related_name="members")
    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    position = models.PositiveIntegerField(default=0)
    offset_s = models.FloatField(default=0.0)

    class Meta:
        ordering = ["group", "role", "position"]
        constraints = [
            models.UniqueConstraint(fields=["group", "role", "position"], name="groupmember_unique_role_position")
        ]
