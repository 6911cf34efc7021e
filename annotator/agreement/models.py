"""Inter-annotator agreement: what is measured (scopes), the stored reports, rating sets brought from
outside, and the consensus round.

A *scope* is one body of human judgments in a project: the verification passes over the same QA
pairs (``verification``), one study's responses (``study:<name>``) or one rating set
(``ratings:<name>``: external ratings, or a model judge against people re-judging its scores). A
*computation* measures a scope once, from a snapshot of its inputs (its ``fingerprint``), and writes
one *report* row per subset, metric, level and round. Reports are kept, so a trend can be drawn.

The consensus round (X-LeBench, seed 002 App. D.3: "resolve discrepancies through discussion and
reevaluation") sends items whose disagreement passes a threshold to a reconciliation queue, where a
reviewer sees every answer, records each rater's re-evaluated answer and the consensus. Round 1 is
never changed; ``round="consensus"`` reports measure round 1 with the re-evaluated answers in place.
"""

from django.conf import settings
from django.db import models

from annotator.projects.models import Project

LEVELS = [(v, v) for v in ("nominal", "ordinal", "interval", "ratio")]


class RatingSet(models.Model):
    """Ratings brought into a project: ``external`` (evaluations done elsewhere, e.g. X-LeBench's
    debriefing sheets, seed 002 App. D) or ``judge`` (a model judge's scores, rater ``judge``, and
    people's re-judgements of the same items, EgoNight seed 000 App. A.5.1; agreement is reported as
    percent agreement and Cohen's kappa). ``level`` is the level of measurement of ``Rating.value``."""

    class Source(models.TextChoices):
        EXTERNAL = "external", "external ratings"
        JUDGE = "judge", "model judge and human re-judges"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="rating_sets")
    name = models.SlugField(max_length=100)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.EXTERNAL)
    level = models.CharField(max_length=10, choices=LEVELS)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="ratingset_unique_name")]

    def __str__(self) -> str:
        return self.name


class Rating(models.Model):
    """One rater's value for one item of a rating set (a number, or a category's text)."""

    rating_set = models.ForeignKey(RatingSet, on_delete=models.CASCADE, related_name="ratings")
    item = models.CharField(max_length=200)
    rater = models.CharField(max_length=200)
    value = models.JSONField()

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["rating_set", "item", "rater"], name="rating_unique_per_rater")]


class Scope(models.Model):
    """One measured body of judgments in a project, and what the scheduler last saw of it.

    ``key``: ``verification``, ``study:<name>`` or ``ratings:<name>``. ``watermark`` is a cheap
    summary of the inputs (counts and latest ids or times) read by the scheduler: a scope whose
    watermark differs from the one stored by its last computation has new responses and is computed
    again. ``computing_since`` is set while a computation runs (one at a time per scope, held by a
    PostgreSQL advisory lock)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="agreement_scopes")
    key = models.CharField(max_length=200)
    watermark = models.JSONField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    computing_since = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["project", "key"]
        constraints = [models.UniqueConstraint(fields=["project", "key"], name="agreement_scope_unique_key")]

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.key}"


class Computation(models.Model):
    """One measurement of a scope. ``fingerprint``: SHA-256 of the canonical JSON of every input
    (items, raters, values) it read. ``details`` per subset: the rater-by-rater matrix, the confusion
    matrix of nominal decisions and the items with the most disagreement (see ``services``).
    ``seed`` and ``n_resamples`` are the bootstrap's; ``trigger``: ``schedule``, ``button``, ``api``
    or ``command``."""

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="computations")
    trigger = models.CharField(max_length=20, default="schedule")
    fingerprint = models.CharField(max_length=64, blank=True)
    watermark = models.JSONField(null=True, blank=True)
    seed = models.BigIntegerField(default=0)
    n_resamples = models.PositiveIntegerField(default=1000)
    library_versions = models.JSONField(default=dict)
    details = models.JSONField(default=dict)
    skipped = models.JSONField(default=dict, help_text="subset -> metric -> why it does not apply.")
    started_at = models.DateTimeField()
    computed_at = models.DateTimeField()
    seconds = models.FloatField(default=0)

    class Meta:
        ordering = ["-computed_at", "-id"]
        indexes = [models.Index(fields=["scope", "-computed_at"], name="agreement_comp_latest")]


class Report(models.Model):
    """One metric of one subset of a scope, as measured by one computation.

    ``subset``: ``""`` for the whole scope, else e.g. ``qa_type=counting``, ``illumination=night``,
    ``answers`` (semantic agreement of proposed answers), ``criterion=relevance/group=real``.
    ``round``: ``first`` (the judgments as given) or ``consensus`` (with re-evaluated answers from
    the consensus round in place). ``ci_low``/``ci_high``: the 95% interval (percentile bootstrap over
    items; null when it cannot be had). ``method`` says which library, level, weights and interval.
    """

    class Round(models.TextChoices):
        FIRST = "first", "first round"
        CONSENSUS = "consensus", "after the consensus round"

    computation = models.ForeignKey(Computation, on_delete=models.CASCADE, related_name="reports")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    scope = models.CharField(max_length=200)
    subset = models.CharField(max_length=300, blank=True)
    metric = models.CharField(max_length=50)
    level = models.CharField(max_length=10, blank=True)
    round = models.CharField(max_length=10, choices=Round.choices, default=Round.FIRST)
    value = models.FloatField()
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    n_items = models.PositiveIntegerField()
    n_raters = models.PositiveIntegerField()
    method = models.TextField()
    library_versions = models.JSONField(default=dict)
    fingerprint = models.CharField(max_length=64)
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["scope", "subset", "metric", "level", "round", "computed_at"]
        indexes = [models.Index(fields=["project", "scope", "computed_at"], name="agreement_report_scope")]


class ConsensusItem(models.Model):
    """An item of a scope sent to the reconciliation queue (X-LeBench seed 002 App. D.3).

    ``item`` is the scope's item key, ``label`` and ``link`` say what it is and where its history is.
    ``answers``: every rater's round-1 answer when it was sent, ``[{"rater", "value"}]`` (the
    reviewer sees them all). A reviewer records ``consensus`` (the agreed value) and each rater's
    re-evaluated answer (``ConsensusRating``); round 1 stays as it was."""

    class Status(models.TextChoices):
        OPEN = "open", "open"
        DONE = "done", "reconciled"

    scope = models.ForeignKey(Scope, on_delete=models.CASCADE, related_name="consensus_items")
    subset = models.CharField(max_length=300, blank=True)
    item = models.CharField(max_length=200)
    label = models.TextField(blank=True)
    link = models.CharField(max_length=300, blank=True)
    level = models.CharField(max_length=10, blank=True)
    disagreement = models.FloatField(help_text="0 (all agree) to 1, when it was sent.")
    answers = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    sent_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    sent_at = models.DateTimeField(auto_now_add=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    consensus = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["status", "-disagreement", "id"]
        constraints = [models.UniqueConstraint(fields=["scope", "subset", "item"], name="consensus_unique_item")]


class ConsensusRating(models.Model):
    """One rater's re-evaluated answer on a reconciled item (round 2); ``value`` null: no answer."""

    consensus_item = models.ForeignKey(ConsensusItem, on_delete=models.CASCADE, related_name="ratings")
    rater = models.CharField(max_length=200)
    value = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["consensus_item", "rater"], name="consensus_rating_unique")]
