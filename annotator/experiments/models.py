"""Human-baseline frame ordering (EGO-FLIGHT, seed 003 Sec. 3.2-3.5, App. A, D, E).

An *experiment* (what researchers name and script) holds *conditions* (the paper's nine
"experiments", App. E Table 8: number of frames, clip length, annotation level, hints). Each
condition has *items*: the frames (or texts) of one clip, their true order, and the order they are
shown in, drawn once from a recorded seed and reused for every person and every model (App. A).
Participants take assigned items as timed *trials*; model runs import *predictions* for the same
items. Both are scored by workers into the same columns.
"""

from django.conf import settings
from django.db import models

from annotator.media.models import Video
from annotator.projects.models import Project


class Experiment(models.Model):
    """A named set of conditions with its assignment and exclusion rules.

    ``exclusion``: ``min_median_rt_s`` (flag a participant whose median response time over scored
    trials is below this many seconds, or null), ``min_practice_correct`` (flag one who got fewer
    practice items exactly right, or null). Flagged participants are kept, with their reasons.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="experiments")
    name = models.SlugField(max_length=100)
    preset = models.CharField(max_length=50, blank=True)
    seed = models.IntegerField(default=0, help_text="Seed of every item's shuffle (with the item's index).")
    frame_size = models.PositiveIntegerField(default=224, help_text="Frames are resized to this many pixels square.")
    questions_per_participant = models.PositiveIntegerField(default=102)
    conditions_per_participant = models.PositiveIntegerField(default=2)
    practice_items = models.PositiveIntegerField(default=3)
    instructions = models.TextField(blank=True, help_text="Markdown shown before the practice items.")
    exclusion = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="experiment_unique_name")]

    def __str__(self) -> str:
        return self.name


class Condition(models.Model):
    """One combination of the experimental variables (a row of EGO-FLIGHT App. E Table 8)."""

    class ClipLength(models.TextChoices):
        SHORT = "short", "short (5-10 s)"
        MEDIUM = "medium", "medium (10-25 s)"
        LONG = "long", "long (over 25 s)"

    class Annotation(models.TextChoices):
        NONE = "none", "none"
        BRIEF = "brief", "brief"
        COMPREHENSIVE = "comprehensive", "comprehensive"

    class ItemKind(models.TextChoices):
        FRAMES = "frames", "frames"
        TEXTS = "texts", "texts"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="conditions")
    number = models.PositiveSmallIntegerField()
    label = models.CharField(max_length=100)
    n_frames = models.PositiveSmallIntegerField()
    clip_length = models.CharField(max_length=10, choices=ClipLength.choices)
    annotation = models.CharField(max_length=20, choices=Annotation.choices)
    hints = models.JSONField(default=list, blank=True, help_text="1-based positions pinned at their true place.")
    item_kind = models.CharField(max_length=10, choices=ItemKind.choices, default=ItemKind.FRAMES)
    baseline = models.BooleanField(default=False)

    class Meta:
        ordering = ["experiment", "number"]
        constraints = [models.UniqueConstraint(fields=["experiment", "number"], name="condition_unique_number")]

    def __str__(self) -> str:
        return f"{self.number}. {self.label}"

    def variables(self) -> dict:
        """The condition as an object of its variables (item exports and score tables)."""
        return {"number": self.number, "label": self.label, "n_frames": self.n_frames, "clip_length": self.clip_length,
                "annotation": self.annotation, "hints": list(self.hints), "item_kind": self.item_kind}


class Clip(models.Model):
    """A time range of a video used by items (seconds), with its annotations at two levels. The
    same clip may appear in several conditions; a participant never gets it twice."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="clips")
    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="+")
    start_s = models.FloatField()
    end_s = models.FloatField()
    length_class = models.CharField(max_length=10, choices=Condition.ClipLength.choices)
    brief = models.TextField(blank=True)
    comprehensive = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["experiment", "video", "start_s", "end_s"], name="clip_unique_range")]


class Element(models.Model):
    """One thing to order: a frame of a video at ``t_s`` seconds resized to ``size`` px square,
    stored once and shared by every item that uses it, or a short text."""

    class Kind(models.TextChoices):
        FRAME = "frame", "frame"
        TEXT = "text", "text"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    video = models.ForeignKey(Video, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    t_s = models.FloatField(null=True, blank=True)
    size = models.PositiveIntegerField(null=True, blank=True)
    image = models.FileField(max_length=500, blank=True)
    text = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["video", "t_s", "size"], name="element_unique_frame",
                                               condition=models.Q(kind="frame"))]


class Item(models.Model):
    """One ordering question: ``truth`` is the element ids in true order, ``shown`` the same ids in
    the order shown (drawn from ``seed``), ``hints`` the pinned 1-based positions. Practice items
    give feedback and are not scored in results."""

    condition = models.ForeignKey(Condition, on_delete=models.CASCADE, related_name="items")
    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="items")
    index = models.PositiveIntegerField()
    practice = models.BooleanField(default=False)
    truth = models.JSONField()
    shown = models.JSONField()
    hints = models.JSONField(default=list, blank=True)
    seed = models.BigIntegerField()
    annotation = models.TextField(blank=True)

    class Meta:
        ordering = ["condition", "index"]
        constraints = [models.UniqueConstraint(fields=["condition", "index"], name="item_unique_index")]


class ScoreFields(models.Model):
    """The per-response metrics (``annotator.scoring.ordering``), filled by a worker."""

    kendall_tau_b = models.FloatField(null=True, blank=True)
    pairwise_accuracy = models.FloatField(null=True, blank=True)
    mean_abs_distance = models.FloatField(null=True, blank=True)
    lcs_ratio = models.FloatField(null=True, blank=True)
    edit_distance = models.FloatField(null=True, blank=True)
    exact_match = models.FloatField(null=True, blank=True)
    scored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class Participant(models.Model):
    """A person taking an experiment: their conditions, stage, and exclusion flag with reasons."""

    class Stage(models.TextChoices):
        INSTRUCTIONS = "instructions", "instructions"
        PRACTICE = "practice", "practice"
        TRIALS = "trials", "trials"
        DONE = "done", "done"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="participants")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conditions = models.ManyToManyField(Condition, related_name="participants")
    stage = models.CharField(max_length=20, choices=Stage.choices, default=Stage.INSTRUCTIONS)
    excluded = models.BooleanField(default=False)
    exclusion_reasons = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["experiment", "user"], name="participant_unique_user")]


class Trial(ScoreFields):
    """One item assigned to one participant, at ``position`` in their sequence, and their answer.

    Times: ``served_at`` (first sent to the page), ``shown_at`` (first reported visible by the page:
    every element decoded and painted) and ``answered_at`` are the server's; the server's response
    time is ``answered_at - shown_at``, so time spent before the trial was on screen (reading the
    previous practice item's feedback, loading images) never counts. ``client_rt_ms`` is the page's
    high-resolution time from the moment every element was visible to the answer; the server refuses
    one longer than its own elapsed time since ``shown_at`` plus ``ORDERING_RT_SLACK_MS``.
    """

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="trials")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="trials")
    position = models.PositiveIntegerField()
    practice = models.BooleanField(default=False)
    response = models.JSONField(null=True, blank=True)
    client_rt_ms = models.FloatField(null=True, blank=True)
    served_at = models.DateTimeField(null=True, blank=True)
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    idempotency_key = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["participant", "practice", "position"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "item"], name="trial_unique_item"),
            models.UniqueConstraint(fields=["participant", "practice", "position"], name="trial_unique_position"),
        ]


class Prediction(ScoreFields):
    """A model's predicted order for an item, imported from JSONL and scored like a trial."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="predictions")
    model = models.CharField(max_length=200)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="predictions")
    predicted = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "item"], name="prediction_unique_model_item")]
