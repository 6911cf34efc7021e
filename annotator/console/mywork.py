""""My work" (issue 20, section 7): an annotator's own submitted passes, newest first, with what
they decided, and their open rework."""

from __future__ import annotations

from django.db.models import Count, Q

from annotator.console.units import PAGE
from annotator.projects.models import Project
from annotator.qa.models import QueueItem


def page(project: Project, user, before: int | None = None) -> dict:
    """``{"rows", "older", "rework"}``: one page of the person's done passes in ``project`` (newest
    first; ``older`` is the next page's cursor or None), each with ``decisions`` counts (keep,
    modify, delete, add) and ``time_s``; ``rework``: their open rework passes."""
    qs = QueueItem.objects.filter(project=project, completed_by=user, status=QueueItem.Status.DONE)
    if before is not None:
        qs = qs.filter(id__lt=before)
    rows = list(qs.select_related("unit__video").annotate(
        kept=Count("verdicts", filter=Q(verdicts__action="keep")),
        modified=Count("verdicts", filter=Q(verdicts__action="modify")),
        deleted=Count("verdicts", filter=Q(verdicts__action="delete")),
        added=Count("verdicts", filter=Q(verdicts__action="add")),
    ).order_by("-id")[: PAGE + 1])
    older = rows[PAGE - 1].pk if len(rows) > PAGE else None
    rows = rows[:PAGE]
    for r in rows:
        r.time_s = round(r.time_spent_ms / 1000) if r.time_spent_ms else None
    rework = list(QueueItem.objects.filter(project=project, assigned_to=user, status=QueueItem.Status.OPEN,
                                           kind=QueueItem.Kind.REWORK).select_related("unit__video").order_by("priority", "id"))
    return {"rows": rows, "older": older, "rework": rework}
