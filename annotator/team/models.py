"""Activity beats (what active time is counted from) and a project's pay rate (issue 20, sections 5, 6)."""

from decimal import Decimal

from django.conf import settings
from django.db import models

from annotator.projects.models import Project


class Beat(models.Model):
    """One sign of a person working on a queue item, at ``at``: the page claimed it (``claim``), its
    heartbeat renewed the lease (``heartbeat``), it autosaved (``autosave``) or submitted (``submit``).

    Append-only; written by ``activity.beat`` (the API's claim, heartbeat and autosave views) and by
    the submit hook. Active time is read from the gaps between a person's consecutive beats
    (``activity.active_seconds``). ``item`` is kept null if its queue item goes (the time stays).
    """

    class Kind(models.TextChoices):
        CLAIM = "claim", "claim"
        HEARTBEAT = "heartbeat", "heartbeat"
        AUTOSAVE = "autosave", "autosave"
        SUBMIT = "submit", "submit"

    id = models.BigAutoField(primary_key=True)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    item = models.ForeignKey("qa.QueueItem", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["project", "user", "at"], name="team_beat_person_time")]


class PayRate(models.Model):
    """What a project pays its annotators: ``amount`` of ``currency`` per video, per unit or per active
    hour (``basis``), and which units count (``count_gold``, ``count_qualification``,
    ``count_rework``; real units always count, tutorial examples never). See ``pay.report`` for
    the rules. Money is a Decimal with 2 places."""

    class Basis(models.TextChoices):
        VIDEO = "video", "per video"
        UNIT = "unit", "per unit"
        HOUR = "hour", "per active hour"

    project = models.OneToOneField(Project, on_delete=models.CASCADE, primary_key=True, related_name="pay_rate")
    basis = models.CharField(max_length=10, choices=Basis.choices)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3, help_text="ISO 4217 code, e.g. EUR.")
    count_gold = models.BooleanField(
        default=True,
        help_text="Gold units mixed into the queue are paid like real ones (the annotator cannot tell them apart).",
    )
    count_qualification = models.BooleanField(default=False, help_text="Units of the qualification set are paid.")
    count_rework = models.BooleanField(
        default=True,
        help_text="A unit sent back to its annotator for rework is still paid (once); off: it is not, "
        "nor the time spent on it.",
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gte=Decimal(0)), name="payrate_amount_not_negative"),
            models.CheckConstraint(condition=models.Q(currency__regex=r"^[A-Z]{3}$"), name="payrate_currency_iso"),
        ]

    def __str__(self) -> str:
        return f"{self.amount} {self.currency} {self.get_basis_display()}"
