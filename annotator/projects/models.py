"""Projects and per-project membership with a role.

A user may belong to many projects with one role each. Roles gate every page and endpoint
(see ``annotator.access``).
"""

from django.conf import settings
from django.db import models


class Project(models.Model):
    """A benchmark under construction: its videos, QA types, queues and exports."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    guidelines = models.TextField(blank=True, help_text="Markdown shown to annotators while working.")
    # Queue policy (SPEC part 3; EgoNight seed 000 Sec. 3.2 "random double-check").
    double_check_share = models.FloatField(
        default=0.2, help_text="Share of first-pass units sent to double-check, chosen at random (0 to 1)."
    )
    overlap_share = models.FloatField(
        default=0.0, help_text="Share of new units verified blind by overlap_k distinct annotators (0 to 1)."
    )
    overlap_k = models.PositiveSmallIntegerField(
        default=2, help_text="Distinct annotators per overlap unit, the first pass included (2 or more)."
    )
    queue_seed = models.IntegerField(default=0, help_text="Seed of the random double-check and overlap choices.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(double_check_share__gte=0, double_check_share__lte=1),
                name="project_double_check_share_0_1",
            ),
            models.CheckConstraint(
                condition=models.Q(overlap_share__gte=0, overlap_share__lte=1), name="project_overlap_share_0_1"
            ),
            models.CheckConstraint(condition=models.Q(overlap_k__gte=2), name="project_overlap_k_2"),
        ]

    def __str__(self) -> str:
        return self.slug


class Role(models.TextChoices):
    ADMIN = "admin", "admin"
    REVIEWER = "reviewer", "reviewer"
    ANNOTATOR = "annotator", "annotator"
    RESEARCHER = "researcher", "researcher"


class Membership(models.Model):
    """One user's role in one project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="membership_unique_user")]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} as {self.role}"
