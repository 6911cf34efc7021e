"""QA types, work units, QA pairs, their append-only revisions, and idempotent submissions.

A work unit is what the queue serves: one video (or clip of it) with its QA pairs. A QA pair
starts as a machine draft (``origin=machine``, ``status=draft``) or is added by a person
(``origin=human``); verification sets its ``status`` and ``provenance`` (SPEC part 3, the three
operations of EgoNight, seed 000 Sec. 3.2: keep, modify, delete, plus add).
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from annotator.drafts.models import Draft
from annotator.media.models import Video
from annotator.projects.models import Project


class QAType(models.Model):
    """A kind of question within a project, with its clip policy.

    ``clip_policy`` is ``window`` (fixed windows of ``window_s`` seconds, as EgoNight uses 3 s for
    static and spatial types) or ``whole`` (the whole video, for temporal types) or ``given``
    (the range comes with each item, e.g. an annotated action's start and end).
    """

    class ClipPolicy(models.TextChoices):
        WINDOW = "window", "fixed window"
        WHOLE = "whole", "whole video"
        GIVEN = "given", "range given per item"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="qa_types")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    paired = models.BooleanField(default=False, help_text="Asked of a day-night pair (EgoNight).")
    clip_policy = models.CharField(max_length=10, choices=ClipPolicy.choices, default=ClipPolicy.WHOLE)
    window_s = models.FloatField(null=True, blank=True)
    guidelines = models.TextField(blank=True)

    class Meta:
        ordering = ["project", "slug"]
        constraints = [models.UniqueConstraint(fields=["project", "slug"], name="qatype_unique_slug")]

    def __str__(self) -> str:
        return self.slug


class WorkUnit(models.Model):
    """One unit of queue work: a video range with its QA pairs, leased to one annotator at a time.

    A unit is *claimable* when it is open and its lease is empty or lapsed. Claims go through
    ``annotator.qa.queue`` (``SELECT ... FOR UPDATE SKIP LOCKED``); nothing else sets a lease.
    """

    class Status(models.TextChoices):
        OPEN = "open", "open"
        DONE = "done", "done"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="units")
    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="units")
    start_s = models.FloatField()
    end_s = models.FloatField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    priority = models.IntegerField(default=0, help_text="Lower is served first.")
    leased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    completed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    completed_at = models.DateTimeField(null=True, blank=True)
    time_spent_ms = models.IntegerField(null=True, blank=True, help_text="Reported by the page, in ms.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # Serves the claim: open units of a project in serving order, nothing else scanned.
            models.Index(
                fields=["project", "priority", "id"],
                condition=models.Q(status="open"),
                name="unit_open_serving_order",
            ),
        ]

    def __str__(self) -> str:
        return f"unit {self.pk} ({self.status})"


class QAPair(models.Model):
    """A question-answer pair about a clip (``clip_start_s`` to ``clip_end_s``, seconds).

    ``options``/``answer_index`` are set for multiple-choice items (``options[answer_index]`` is
    the answer) and null for open-ended ones. ``version`` increases with every change.
    """

    class Origin(models.TextChoices):
        MACHINE = "machine", "machine"
        HUMAN = "human", "human"

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        VERIFIED = "verified", "verified"
        DELETED = "deleted", "deleted"

    class Provenance(models.TextChoices):
        MACHINE_KEPT = "machine_kept", "machine, kept"
        MACHINE_MODIFIED = "machine_modified", "machine, modified"
        HUMAN_ADDED = "human_added", "human, added"

    class DeleteReason(models.TextChoices):
        MEANINGLESS = "meaningless", "meaningless"
        VAGUE = "vague", "vague"
        DUPLICATE = "duplicate", "duplicate"
        INCONSISTENT = "inconsistent", "inconsistent (e.g. across day and night)"
        WRONG = "wrong", "wrong and unfixable"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="qa_pairs")
    unit = models.ForeignKey(WorkUnit, on_delete=models.CASCADE, related_name="qa_pairs")
    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="qa_pairs")
    qa_type = models.ForeignKey(QAType, on_delete=models.PROTECT, related_name="qa_pairs")
    draft = models.OneToOneField(Draft, null=True, blank=True, on_delete=models.PROTECT, related_name="qa_pair")
    origin = models.CharField(max_length=10, choices=Origin.choices)
    question = models.TextField()
    answer = models.TextField()
    options = models.JSONField(null=True, blank=True)
    answer_index = models.IntegerField(null=True, blank=True)
    clip_start_s = models.FloatField()
    clip_end_s = models.FloatField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    provenance = models.CharField(max_length=20, choices=Provenance.choices, blank=True)
    delete_reason = models.CharField(max_length=20, choices=DeleteReason.choices, blank=True)
    version = models.IntegerField(default=1)
    verified_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["project", "status", "id"], name="qa_project_status")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(clip_end_s__gt=models.F("clip_start_s")), name="qa_clip_nonempty"
            ),
            models.CheckConstraint(
                condition=(models.Q(options__isnull=True) & models.Q(answer_index__isnull=True))
                | (models.Q(options__isnull=False) & models.Q(answer_index__gte=0)),
                name="qa_options_with_index",
            ),
        ]

    def __str__(self) -> str:
        return f"QA {self.pk}: {self.question[:40]}"

    def snapshot(self) -> dict:
        """The editable content, as stored in revisions."""
        return {
            "question": self.question,
            "answer": self.answer,
            "options": self.options,
            "answer_index": self.answer_index,
            "status": self.status,
            "delete_reason": self.delete_reason,
        }


class Revision(models.Model):
    """An append-only record of one change to a QA pair: who (person or model), what, when, how long.

    Rows are never updated or deleted by the application; ``save`` refuses an update.
    """

    class Action(models.TextChoices):
        DRAFT = "draft", "machine draft"
        KEEP = "keep", "kept"
        MODIFY = "modify", "modified"
        DELETE = "delete", "deleted"
        ADD = "add", "added"

    qa_pair = models.ForeignKey(QAPair, on_delete=models.CASCADE, related_name="revisions")
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor_model = models.CharField(max_length=200, blank=True, help_text="Pipeline/model for machine revisions.")
    action = models.CharField(max_length=10, choices=Action.choices)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField()
    time_spent_ms = models.IntegerField(null=True, blank=True, help_text="Time on this item, ms, from the page.")
    submission = models.ForeignKey("Submission", null=True, blank=True, on_delete=models.PROTECT, related_name="revisions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValidationError("revisions are append-only")
        super().save(*args, **kwargs)


class Submission(models.Model):
    """A unit's submit, keyed by the client's idempotency key so a retry replays ``response``."""

    idempotency_key = models.CharField(max_length=100, unique=True)
    unit = models.ForeignKey(WorkUnit, on_delete=models.CASCADE, related_name="submissions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
