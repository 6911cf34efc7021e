"""Projects and per-project membership with a role.

A user may belong to many projects with one role each. Roles gate every page and endpoint
(see ``annotator.projects.access``).
"""

from django.conf import settings
from django.db import models


class Project(models.Model):
    """A benchmark under construction: its videos, QA types, queues and exports."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    guidelines = models.TextField(blank=True, help_text="Markdown shown to annotators while working.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

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
