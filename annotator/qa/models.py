"""QA types, work units and their queue items, QA pairs, append-only revisions, verdicts.

A work unit is the content an annotator verifies: one video (or a day-night pair of videos) over a
time range, with its QA pairs. The queue serves *queue items*, one per pass over a unit: the first
pass, an overlap pass (another annotator verifying the same unit blind, for agreement) or a
double-check. A QA pair starts as a machine draft (``origin=machine``, ``status=draft``) or is
added by a person (``origin=human``); a first pass or a double-check sets its ``status`` and
``provenance`` (SPEC part 3; EgoNight's operations, seed 000 Sec. 3.2: keep, modify, delete, add).
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from annotator.media.models import Video, VideoGroup
from annotator.projects.models import Project


class QAType(models.Model):
    """A kind of question within a project, with its clip policy.

    ``clip_policy`` is ``window`` (fixed windows of ``window_s`` seconds, as EgoNight uses 3 s for
    static and spatial types) or ``whole`` (the whole video, for temporal types) or ``given``
    (the range comes with each item, e.g. an annotated action's start and end). ``paired`` types
    ask one question of both videos of a day-night pair (EgoNight seed 000 Sec. 3.2, Table 8).
    """

    class ClipPolicy(models.TextChoices):
        WINDOW = "window", "fixed window"
        WHOLE = "whole", "whole video"
        GIVEN = "given", "range given per item"

    class SetKind(models.TextChoices):
        VIDEO = "", "one video (or a day-night pair, when paired)"
        EGO_EXO = "ego_exo", "an ego-exo set (EgoExoBench)"
        LIFE_LOG = "life_log", "a life log (X-LeBench)"

    class AnswerKind(models.TextChoices):
        TEXT = "text", "text (open, or multiple choice when options are given)"
        INTERVAL = "interval", "a time interval (temporal localisation)"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="qa_types")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    paired = models.BooleanField(default=False, help_text="Asked of a day-night pair (EgoNight).")
    clip_policy = models.CharField(max_length=10, choices=ClipPolicy.choices, default=ClipPolicy.WHOLE)
    window_s = models.FloatField(null=True, blank=True)
    guidelines = models.TextField(blank=True, help_text="Markdown shown with units of this type.")
    set_kind = models.CharField(
        max_length=20,
        choices=SetKind.choices,
        blank=True,
        default="",
        help_text="Asked of one video (blank), of an ego-exo set, or of a life log (its unit's group).",
    )
    answer_kind = models.CharField(
        max_length=10,
        choices=AnswerKind.choices,
        default=AnswerKind.TEXT,
        help_text="interval: the answer is answer_start_s..answer_end_s (X-LeBench temporal localisation, "
        "seed 002 App. C.1).",
    )

    class Meta:
        ordering = ["project", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="qatype_unique_slug"),
            # NULL must fail too: a CHECK passes when its condition is NULL, so ``window_s > 0`` alone
            # let a window type without a length through.
            models.CheckConstraint(
                condition=~models.Q(clip_policy="window") | models.Q(window_s__isnull=False, window_s__gt=0),
                name="qatype_window_has_length",
            ),
        ]

    def __str__(self) -> str:
        return self.slug


class WorkUnit(models.Model):
    """A video range (``start_s`` to ``end_s``, seconds) with its QA pairs; for paired QA types the
    unit carries the day-night ``group`` and shows both videos (``video`` is the day one)."""

    class Purpose(models.TextChoices):
        REAL = "real", "real"
        GOLD = "gold", "gold check"
        QUALIFICATION = "qualification", "qualification"
        EXAMPLE = "example", "tutorial example"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="units")
    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="units")
    group = models.ForeignKey(VideoGroup, null=True, blank=True, on_delete=models.CASCADE, related_name="units")
    start_s = models.FloatField()
    end_s = models.FloatField()
    purpose = models.CharField(
        max_length=20,
        choices=Purpose.choices,
        default=Purpose.REAL,
        help_text="real: part of the benchmark; gold, qualification, example: copies made for checking and "
        "teaching annotators (issue 20), never exported or scored as benchmark items.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"unit {self.pk}"


class QueueItem(models.Model):
    """One pass over a unit waiting in the project's queue, leased to one annotator at a time.

    ``kind``: ``first_pass`` (decisions apply to the QA pairs), ``overlap`` (another annotator
    verifies the same drafts blind; decisions are kept as verdicts only, for agreement),
    ``double_check`` (a second pass over the verified items that may change them again; never
    served to ``exclude_user``, the first-pass annotator), ``rework`` (a unit sent back to its annotator
    by a reviewer, or reopened by them; issue 20) or ``qualification`` (a unit of the qualification
    set, served while the annotator qualifies). An item with ``assigned_to`` is served to that person
    only, before anything else. An item is *claimable* when open and its lease is empty or lapsed.
    Claims go through ``annotator.qa.queue``; nothing else sets a lease. Lower ``priority`` is served first (model-flagged units get -10).
    """

    class Kind(models.TextChoices):
        FIRST_PASS = "first_pass", "first pass"
        OVERLAP = "overlap", "overlap"
        DOUBLE_CHECK = "double_check", "double-check"
        REWORK = "rework", "rework"
        QUALIFICATION = "qualification", "qualification"

    class Status(models.TextChoices):
        OPEN = "open", "open"
        DONE = "done", "done"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="queue_items")
    unit = models.ForeignKey(WorkUnit, on_delete=models.CASCADE, related_name="queue_items")
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.FIRST_PASS)
    seq = models.PositiveSmallIntegerField(default=0, help_text="Index among items of the same kind on the unit.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    priority = models.IntegerField(default=0)
    exclude_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Never served to this person (the first-pass annotator of a double-check).",
    )
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Served to this person only, before their other items (rework, an admin's assignment).",
    )
    leased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    completed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    completed_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the current holder took the item; bounds the time they may report."
    )
    time_spent_ms = models.BigIntegerField(null=True, blank=True, help_text="Reported by the page, in ms.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # Serves the claim: open items of a project in serving order, nothing else scanned.
            models.Index(
                fields=["project", "priority", "id"], condition=models.Q(status="open"), name="queueitem_open_order"
            ),
            models.Index(fields=["unit", "completed_by"], name="queueitem_unit_done_by"),
            # Serves the claim's first look: the open items assigned to the person.
            models.Index(
                fields=["assigned_to", "priority", "id"],
                condition=models.Q(status="open", assigned_to__isnull=False),
                name="queueitem_open_assigned",
            ),
            # The units list for admins (issue 20): newest first within a status or a pass, without
            # walking the whole queue to the rows that match.
            models.Index(fields=["project", "status", "id"], name="queueitem_project_status_id"),
            models.Index(fields=["project", "kind", "id"], name="queueitem_project_kind_id"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["unit", "kind", "seq"], name="queueitem_unique_pass"),
            # One person holds at most one open item per project; also finds it (reload, second tab)
            # without scanning the queue.
            models.UniqueConstraint(
                fields=["project", "leased_by"],
                name="queueitem_one_lease_per_person",
                condition=models.Q(status="open", leased_by__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.seq} of unit {self.unit_id} ({self.status})"


class QAPair(models.Model):
    """A question-answer pair about a clip (``clip_start_s`` to ``clip_end_s``, seconds of the unit's
    video; for a paired unit the same range applies to both videos, shifted by the group offset).

    ``options``/``answer_index`` are set for multiple-choice items (``options[answer_index]`` is
    the answer) and null for open-ended ones. ``version`` increases with every change and is the
    optimistic lock: a change that names an older version is refused as a conflict.
    ``flag_reason`` is a model's reason to look at the item first (VUDG review labels, seed 004
    Sec. 3.2), with the model named in ``flag_source`` and the person who set it in ``flag_user``.
    A QA pair with revisions cannot be deleted (``Revision.qa_pair`` protects it).
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
        INCONSISTENT = "inconsistent", "inconsistent across day and night"
        WRONG = "wrong", "wrong and unfixable"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="qa_pairs")
    unit = models.ForeignKey(WorkUnit, on_delete=models.CASCADE, related_name="qa_pairs")
    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="qa_pairs")
    qa_type = models.ForeignKey(QAType, on_delete=models.PROTECT, related_name="qa_pairs")
    # By name: drafts writes QA and sits above qa (issue 23), so qa imports nothing of it.
    draft = models.ForeignKey("drafts.Draft", null=True, blank=True, on_delete=models.PROTECT, related_name="qa_pairs")
    origin = models.CharField(max_length=10, choices=Origin.choices)
    question = models.TextField()
    answer = models.TextField()
    options = models.JSONField(null=True, blank=True)
    answer_index = models.IntegerField(null=True, blank=True)
    clip_start_s = models.FloatField()
    clip_end_s = models.FloatField()
    answer_start_s = models.FloatField(
        null=True,
        blank=True,
        help_text="Interval answers: start, seconds in the unit's time base (virtual for life logs).",
    )
    answer_end_s = models.FloatField(null=True, blank=True, help_text="Interval answers: end, seconds.")
    videos = models.JSONField(
        default=list,
        blank=True,
        help_text="Labelled videos the item shows, in order: [{label: 'Video 1', video_id, role, start_s, end_s}] "
        "(EgoExoBench seed 001 Fig. 2: query, reference and candidate videos). Options naming "
        "'Video k' refer to these labels.",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    provenance = models.CharField(max_length=20, choices=Provenance.choices, blank=True)
    delete_reason = models.CharField(max_length=20, choices=DeleteReason.choices, blank=True)
    flag_reason = models.TextField(blank=True)
    flag_source = models.CharField(max_length=200, blank=True)
    flag_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The person who set the flag, when a person did (``flag_source`` names the model).",
    )
    version = models.IntegerField(default=1)
    verified_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["project", "status", "id"], name="qa_project_status"),
            # The units list's "flagged" filter (issue 20): the few flagged pairs, by unit.
            models.Index(fields=["unit"], condition=~models.Q(flag_reason=""), name="qapair_flagged_unit"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(clip_end_s__gt=models.F("clip_start_s")), name="qa_clip_nonempty"
            ),
            models.CheckConstraint(
                condition=(models.Q(answer_start_s__isnull=True) & models.Q(answer_end_s__isnull=True))
                | models.Q(answer_end_s__gt=models.F("answer_start_s")),
                name="qa_answer_interval_nonempty",
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
        """The editable content, as stored in revisions and verdicts."""
        return {
            "question": self.question,
            "answer": self.answer,
            "options": self.options,
            "answer_index": self.answer_index,
            "answer_start_s": self.answer_start_s,
            "answer_end_s": self.answer_end_s,
            "status": self.status,
            "delete_reason": self.delete_reason,
        }


class Revision(models.Model):
    """An append-only record of one change to a QA pair: who (person or model), what, when, how long.

    Rows are never updated or deleted: ``save`` refuses an update, and a database trigger (migration
    ``qa.0002``) refuses UPDATE and DELETE from any client, the Django admin and a SQL shell included.
    ``version`` is the QA pair's version after the change.
    """

    class Action(models.TextChoices):
        DRAFT = "draft", "machine draft"
        KEEP = "keep", "kept"
        MODIFY = "modify", "modified"
        DELETE = "delete", "deleted"
        ADD = "add", "added"
        EDIT = "edit", "edited outside the queue"
        FLAG = "flag", "flagged by a model"
        REVIEW = "review", "reviewed"  # issue 20: content unchanged; after["review"] has the decision and comment

    qa_pair = models.ForeignKey(QAPair, on_delete=models.PROTECT, related_name="revisions")
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor_model = models.CharField(max_length=200, blank=True, help_text="Pipeline/model for machine revisions.")
    action = models.CharField(max_length=10, choices=Action.choices)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField()
    version = models.IntegerField(default=1)
    time_spent_ms = models.BigIntegerField(null=True, blank=True, help_text="Time on this item, ms, from the page.")
    submission = models.ForeignKey(
        "Submission", null=True, blank=True, on_delete=models.PROTECT, related_name="revisions"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValidationError("revisions are append-only")
        super().save(*args, **kwargs)


class Submission(models.Model):
    """A queue item's submit, keyed by the client's idempotency key so a retry replays ``response``."""

    idempotency_key = models.CharField(max_length=100, unique=True)
    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="submissions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)


class Verdict(models.Model):
    """One annotator's decision on one QA pair in one pass (first pass, overlap or double-check).

    Kept for every pass, so overlap passes (which do not change the QA pair) can be compared later
    (agreement) and progress counts kept/modified/deleted/added per person and QA type. ``after``
    is the content the annotator proposed (for keep, the content they saw). Times in ms.
    """

    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="verdicts")
    qa_pair = models.ForeignKey(
        QAPair,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="verdicts",
        help_text="Null for a QA pair proposed in an overlap pass (kept in ``after`` only).",
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    action = models.CharField(max_length=10, choices=[(a, a) for a in ("keep", "modify", "delete", "add")])
    after = models.JSONField()
    reason = models.CharField(max_length=20, blank=True)
    time_spent_ms = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["item", "qa_pair"], name="verdict_unique_per_pass")]


class Skip(models.Model):
    """An annotator passed on a queue item, with a reason; the item is never served to them again."""

    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="skips")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "user"], name="skip_unique_per_person")]
        indexes = [models.Index(fields=["user", "item"], name="skip_user_item")]


class Autosave(models.Model):
    """The in-progress state of one person's work on one queue item, saved as they type so it
    survives a reload or a crash. ``state`` is the page's own JSON; ``client_saved_at_ms`` is the
    browser's clock (ms since the epoch) when it was taken, so the newer of this and the browser's
    offline copy wins.

    ``time_spent_ms`` is the time the person had spent on the item when it was saved (bounded by
    the server), so it survives a reload and stays credited to them if their lease lapses and
    someone else finishes the item. A row whose person did not complete the item is their kept work:
    carried over to the next holder of a first pass or double-check, shown to admins on the unit's
    history, never deleted by someone else's submit."""

    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="autosaves")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    state = models.JSONField()
    client_saved_at_ms = models.BigIntegerField()
    time_spent_ms = models.BigIntegerField(default=0, help_text="Time on the item when saved, ms (server-bounded).")
    claimed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Start of the claim under which this was first saved: a person who loses the item and claims it "
        "again later may report time since then.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "user"], name="autosave_unique_per_person")]
