"""Review with rework (issue 20, section 3): reviews of submitted units, their comments per QA pair,
quality rounds, the summary a round sends to annotators, and each unit's review state.

A unit enters review when a pass that decides its QA pairs is submitted (a first pass, a
double-check or a rework; never an overlap pass, which decides nothing, and only for ``real``
units). A reviewer accepts or rejects it, with a comment and issue tags per QA pair; a rejection
sends the unit back to the annotator of the reviewed pass as a ``rework`` queue item assigned to
them. An annotator may reopen their own submitted unit until it is reviewed. EgoNight ran its team
this way (seed 000 App. A.2.1: a quality check after the first round summarised common issues, and
the annotators reworked their items).
"""

from django.conf import settings
from django.db import models

from annotator.projects.models import Project
from annotator.qa.models import QAPair, QueueItem, WorkUnit


class ReviewRound(models.Model):
    """A quality round: a seeded sample of the project's units awaiting review (or all of them),
    reviewed with a vocabulary of issue tags. When every unit of the round has its review, the round
    closes: ``summary`` counts its tags (with examples) and each annotator gets a ``RoundSummary``.

    ``sample_size`` is None for a round over all units awaiting review. One round per project is
    open at a time (``closed_at`` null)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="review_rounds")
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="None when opened by the command.",
    )
    sample_size = models.PositiveIntegerField(null=True, blank=True, help_text="Units asked for; None: all.")
    pool = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Units awaiting review when it opened, the sample's pool (gold copies "
        "are settled in the same share when it closes: services.settle_gold).",
    )
    seed = models.IntegerField(default=0, help_text="Seed of the sample (random.Random).")
    tags = models.JSONField(
        default=list, blank=True, help_text="The issue tags reviewers choose from in this round (empty: any tag)."
    )
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    summary = models.JSONField(null=True, blank=True, help_text="Written when the round closes (services.close_round).")

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project"], condition=models.Q(closed_at__isnull=True), name="review_one_open_round_per_project"
            )
        ]

    def __str__(self) -> str:
        return f"review round {self.pk} of {self.project_id}"


class Review(models.Model):
    """One reviewer's decision on one submitted pass over a unit (``item``: the first pass,
    double-check or rework whose result was reviewed; ``annotator`` completed it). A reject opened
    ``rework_item``. Keyed by the client's idempotency key, so a retry replays ``response``."""

    class Decision(models.TextChoices):
        ACCEPT = "accept", "accepted"
        REJECT = "reject", "rejected"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="reviews")
    unit = models.ForeignKey(WorkUnit, on_delete=models.CASCADE, related_name="reviews")
    item = models.ForeignKey(
        QueueItem,
        on_delete=models.CASCADE,
        related_name="reviews",
        help_text="The submitted pass this review is about.",
    )
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decision = models.CharField(max_length=10, choices=Decision.choices)
    round = models.ForeignKey(ReviewRound, null=True, blank=True, on_delete=models.SET_NULL, related_name="reviews")
    rework_item = models.ForeignKey(
        QueueItem,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The rework this rejection opened.",
    )
    idempotency_key = models.CharField(max_length=100, unique=True)
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # A pass is reviewed once: two reviewers deciding at the same moment cannot both win.
            models.UniqueConstraint(fields=["item"], name="review_one_per_submitted_pass")
        ]
        indexes = [models.Index(fields=["project", "annotator", "created_at"], name="review_by_annotator")]

    def __str__(self) -> str:
        return f"review {self.pk}: {self.decision} unit {self.unit_id}"


class ReviewComment(models.Model):
    """A reviewer's comment on one QA pair of the reviewed unit, with issue tags (slugs)."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="comments")
    qa_pair = models.ForeignKey(QAPair, on_delete=models.CASCADE, related_name="review_comments")
    text = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["review", "qa_pair"], name="review_one_comment_per_pair")]


class ReviewState(models.Model):
    """Where a unit stands in review, one row per unit that has been submitted (kept by
    ``services.note_submission``, ``review_unit`` and ``reopen_unit``).

    ``submitted``: awaiting review; ``accepted``; ``rejected``: sent back, rework open;
    ``reopened``: its annotator reopened it before review, rework open; ``resubmitted``: the rework
    was submitted, awaiting review again. ``item`` is the last submitted pass that decided the
    unit's QA pairs and ``annotator`` the person who completed it; ``round`` the open round the unit
    awaits its review in, if any.

    Gold copies (issue 20, section 2) get a state as real units do, and are never reviewed: they
    are settled as the real units around them are (``services.settle_gold``), so that their
    annotator cannot tell them apart by what becomes of them."""

    class State(models.TextChoices):
        SUBMITTED = "submitted", "submitted, awaiting review"
        ACCEPTED = "accepted", "accepted"
        REJECTED = "rejected", "rejected, rework open"
        REOPENED = "reopened", "reopened by its annotator, rework open"
        RESUBMITTED = "resubmitted", "resubmitted, awaiting review"

    AWAITING = (State.SUBMITTED, State.RESUBMITTED)

    unit = models.OneToOneField(WorkUnit, on_delete=models.CASCADE, related_name="review_state")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=20, choices=State.choices)
    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    review = models.ForeignKey(Review, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    rework_item = models.ForeignKey(QueueItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    round = models.ForeignKey(ReviewRound, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    check_drawn = models.BooleanField(
        default=False,
        db_default=False,
        help_text="A gold copy the double-check draw chose: it answers as a real unit whose "
        "double-check is open until it is settled (services.settle_gold).",
    )
    submitted_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["unit_id"]
        indexes = [
            # The review queue: a project's units awaiting review, oldest submission first.
            models.Index(
                fields=["project", "submitted_at", "unit"],
                name="review_awaiting",
                condition=models.Q(state__in=["submitted", "resubmitted"]),
            ),
            models.Index(fields=["annotator", "project", "state"], name="review_state_of_annotator"),
        ]

    def __str__(self) -> str:
        return f"unit {self.unit_id}: {self.state}"


class RoundUnit(models.Model):
    """A unit of a quality round, and the review that answered it in the round."""

    round = models.ForeignKey(ReviewRound, on_delete=models.CASCADE, related_name="units")
    unit = models.ForeignKey(WorkUnit, on_delete=models.CASCADE, related_name="+")
    review = models.ForeignKey(Review, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["round", "unit"], name="review_round_unit_once")]


class RoundSummary(models.Model):
    """What a closed round tells one annotator (EgoNight seed 000 App. A.2.1: "a quality check
    summarised common issues"): the round's issue tags with their counts over the whole round, how
    many of them were on this person's units, and examples from their own units only (another
    person's comments would show QA pairs they have not seen). ``summary`` shape:
    ``services.close_round``."""

    round = models.ForeignKey(ReviewRound, on_delete=models.CASCADE, related_name="summaries")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    summary = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-round_id", "user_id"]
        constraints = [models.UniqueConstraint(fields=["round", "user"], name="review_one_summary_per_person")]
