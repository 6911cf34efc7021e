"""Onboarding, qualification and gold checks (issue 20, sections 1 and 2).

- ``Policy``: per project, the gold rate, the threshold (share of decisions that must agree with the
  known ones), the tries a person has to qualify, the pause window K and whether the real queue is
  gated by qualification; plus the tutorial's Markdown.
- ``Source``: a verified real unit chosen as gold, qualification or tutorial example, with
  ``Known`` decisions per machine QA pair (keep, modify, delete with reason), taken from the
  verified outcome, and the content the first pass was shown.
- ``Copy``: a new ``qa.WorkUnit`` (purpose gold, qualification or example) made from a source: new
  QA pairs with the drafted content, ids from the same sequences as real units. Gold copies are
  made ahead of the claim that serves them (``claims.premake``), for one person.
- ``Attempt``: one try at the qualification set; ``Result``: one scored copy (gold or
  qualification); ``Standing``: a person's state in a project, read on every claim (claims counted,
  qualified, paused); ``Pause``: a person held back after their gold accuracy fell below the
  threshold, until an admin lifts it.
"""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from annotator.projects.models import Project
from annotator.qa.models import QAPair, QueueItem, WorkUnit

GOLD_RATE_MAX = 0.5
TRIES_MAX = 20
WINDOW_MAX = 200


class Policy(models.Model):
    """A project's onboarding and gold policy. A project without a row has the defaults
    (``services.policy_of``)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="gold_policy")
    gold_rate = models.FloatField(default=0.05, help_text="Share of claims that serve a gold copy (0 to 0.5).")
    threshold = models.FloatField(
        default=0.8,
        help_text="Share of decisions that must agree with the known ones: to qualify, and over the "
        "last K gold units to stay unpaused (0 to 1).",
    )
    tries = models.PositiveSmallIntegerField(default=3, help_text="Tries a person has at the qualification set.")
    window = models.PositiveSmallIntegerField(default=10, help_text="K: gold units over which accuracy is judged.")
    qualification_required = models.BooleanField(
        default=False, help_text="Annotators get real units only once they passed the qualification set."
    )
    seed = models.IntegerField(default=0, help_text="Seed of the gold draws and of the choice of verified units.")
    tutorial = models.TextField(blank=True, help_text="Markdown of the project's tutorial page.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(gold_rate__gte=0, gold_rate__lte=GOLD_RATE_MAX), name="gold_policy_rate_bounds"
            ),
            models.CheckConstraint(
                condition=models.Q(threshold__gte=0, threshold__lte=1), name="gold_policy_threshold_0_1"
            ),
            models.CheckConstraint(condition=models.Q(tries__gte=1, tries__lte=TRIES_MAX), name="gold_policy_tries"),
            models.CheckConstraint(
                condition=models.Q(window__gte=1, window__lte=WINDOW_MAX), name="gold_policy_window"
            ),
        ]

    def __str__(self) -> str:
        return f"gold policy of {self.project_id}"


class Source(models.Model):
    """A verified real unit (``unit``) chosen as gold, qualification or tutorial example. ``footage``
    holds the source footage ids (``media.Video`` ids, renditions mapped to what they derive from)
    of every video the unit shows, so a gold copy is never served to someone who saw any of them."""

    class Role(models.TextChoices):
        GOLD = "gold", "gold check"
        QUALIFICATION = "qualification", "qualification"
        EXAMPLE = "example", "tutorial example"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_sources")
    unit = models.ForeignKey(WorkUnit, on_delete=models.CASCADE, related_name="gold_sources")
    role = models.CharField(max_length=20, choices=Role.choices)
    footage = ArrayField(models.BigIntegerField(), default=list)
    active = models.BooleanField(default=True)
    position = models.IntegerField(default=0, help_text="Order within its role (qualification set, tutorial).")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["role", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["unit"], name="gold_source_one_role_per_unit")]
        indexes = [models.Index(fields=["project", "role", "active"], name="gold_source_role")]

    def __str__(self) -> str:
        return f"{self.role} source from unit {self.unit_id}"


class Known(models.Model):
    """The known decision on one machine QA pair of a source: ``keep``, ``modify`` or ``delete`` with
    ``reason`` (a ``QAPair.DeleteReason``). ``shown`` is the content and version the first pass was
    shown (``qa.selectors.drafted_states``: ``question``, ``answer``, ``options``, ``answer_index``,
    ``answer_start_s``, ``answer_end_s``, ``version``); ``expected`` the verified content (for modify,
    what it became). ``explanation`` is the tutorial's note for examples."""

    class Action(models.TextChoices):
        KEEP = "keep", "keep"
        MODIFY = "modify", "modify"
        DELETE = "delete", "delete"

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="known")
    qa_pair = models.ForeignKey(QAPair, on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=10, choices=Action.choices)
    reason = models.CharField(max_length=20, blank=True)
    shown = models.JSONField()
    expected = models.JSONField()
    explanation = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["source", "qa_pair"], name="gold_known_once_per_pair")]


class Attempt(models.Model):
    """One person's try at the qualification set: their copies, then (``finished_at``) the share of
    decisions that agreed (``score`` = ``agreed`` / ``decisions``) against ``threshold``."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="qualification_attempts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    number = models.PositiveSmallIntegerField()
    threshold = models.FloatField()
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    decisions = models.PositiveIntegerField(default=0)
    agreed = models.PositiveIntegerField(default=0)
    score = models.FloatField(null=True, blank=True)
    passed = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["project", "user", "number"], name="gold_attempt_number")]


class Copy(models.Model):
    """A unit made from ``source`` (``unit``, purpose gold, qualification or example), for ``user``
    (gold and qualification) in ``attempt`` (qualification). ``pairs`` maps each copy QA pair id (as
    a string) to its ``Known`` id."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="copies")
    unit = models.OneToOneField(WorkUnit, on_delete=models.CASCADE, related_name="gold_copy")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    attempt = models.ForeignKey(Attempt, null=True, blank=True, on_delete=models.CASCADE, related_name="copies")
    pairs = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["user", "source"], name="gold_copy_user_source")]
        # A person's gold copies (no attempt): one per source, so premake and a claim made at the same
        # moment cannot both copy it for them (they would see the same unit twice).
        constraints = [
            models.UniqueConstraint(
                fields=["user", "source"],
                name="gold_copy_once_per_person",
                condition=models.Q(attempt__isnull=True, user__isnull=False),
            )
        ]


class Result(models.Model):
    """One scored copy: the person's decisions against the known ones. ``details`` lists per QA pair
    ``{"qa_id", "known": [action, reason], "given": [action, reason], "agreed"}``."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_results")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    copy = models.OneToOneField(Copy, on_delete=models.CASCADE, related_name="result")
    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=20, choices=Source.Role.choices)
    attempt = models.ForeignKey(Attempt, null=True, blank=True, on_delete=models.CASCADE, related_name="results")
    decisions = models.PositiveIntegerField()
    agreed = models.PositiveIntegerField()
    details = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["project", "user", "role", "id"], name="gold_result_person")]


class Standing(models.Model):
    """A person's onboarding state in a project, read by every claim in one statement: new claims
    counted (``claims``, the gold draw's counter), when they qualified, whether they are paused and
    from which claim the pause holds them (``pause_from``: ``rules.pause_delay`` more claims are
    served first), tries an admin granted beyond the policy's, and since when gold results count for
    the pause window (an admin's lift starts it afresh)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    claims = models.BigIntegerField(default=0)
    qualified_at = models.DateTimeField(null=True, blank=True)
    paused = models.BooleanField(default=False)
    pause_from = models.BigIntegerField(
        null=True, blank=True, help_text="The claim count from which an open pause refuses claims (none: at once)."
    )
    extra_tries = models.PositiveSmallIntegerField(default=0)
    window_from = models.BigIntegerField(default=0, help_text="Gold results with a larger id count for the window.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="gold_standing_once")]


class Pause(models.Model):
    """A person held back from the queue: their gold accuracy over the last ``window`` gold units
    (``accuracy``) fell below ``threshold``. Open until an admin lifts it (``lifted_by``, ``note``)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_pauses")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.TextField()
    accuracy = models.FloatField()
    window = models.PositiveSmallIntegerField()
    threshold = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_at = models.DateTimeField(null=True, blank=True)
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user"], condition=models.Q(lifted_at__isnull=True), name="gold_pause_one_open"
            )
        ]
