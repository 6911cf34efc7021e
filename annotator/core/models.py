"""Background jobs as rows: the outbox behind every Celery message (see ``annotator.jobs``).

A service writes a Job in its own transaction and the message is sent only after commit, so a
broker that is down, or a message lost in a Redis restart, loses nothing: the reconciler re-sends
rows that went stale. The row also counts deliveries, so an input that kills its worker every time
fails alone after ``max_deliveries`` instead of looping.
"""

from django.db import models


class Job(models.Model):
    """One piece of background work: the Celery task ``task`` applied to ``args`` (primary keys).

    ``status`` moves queued -> running -> done, or -> failed with ``error`` in plain words. ``key``
    names the work (``media.transcode:12``), so queueing the same work twice makes one row; a done or
    failed row queued again starts over. ``deliveries`` counts how many times a worker started it
    (a crash or a hard time limit leaves it ``running`` and the next delivery counts again);
    ``sends`` how many messages were published for it. Times are server times (UTC).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    task = models.CharField(max_length=100)
    key = models.CharField(max_length=200, unique=True)
    args = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    deliveries = models.PositiveIntegerField(default=0)
    max_deliveries = models.PositiveIntegerField(default=3)
    sends = models.PositiveIntegerField(default=0)
    due_at = models.DateTimeField(help_text="Not to run before this time (a retry's backoff).")
    sent_at = models.DateTimeField(
        null=True, blank=True, help_text="When a message was last published; null: never (broker down)."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.TextField(blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # The reconciler's scan: only unfinished rows, oldest first.
            models.Index(
                fields=["status", "updated_at"],
                name="job_unfinished",
                condition=models.Q(status__in=["queued", "running"]),
            )
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"
