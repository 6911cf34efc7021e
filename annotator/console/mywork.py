""" "My work" (issue 20, section 7): an annotator's own submitted passes, newest first, with what
they decided and where each unit stands in review (the reviewer's comments, reopen while it
waits), their open rework, the quality rounds' summaries sent to them, and their own figures and
pay over a period."""

from __future__ import annotations

from django.db.models import Count, Q

from annotator.console.units import PAGE
from annotator.errors import Invalid
from annotator.projects.models import Project
from annotator.qa.models import QueueItem, Verdict, WorkUnit
from annotator.review import figures as review_figures
from annotator.review import selectors as review
from annotator.review.models import ReviewState
from annotator.team import selectors as team

PERIODS = {k: v for k, v in team.PRESETS.items() if k != "custom"}


def page(project: Project, user, before: int | None = None, period: str = "month") -> dict:
    """``{"rows", "older", "rework", "summaries", "own", "period", "periods"}``:

    - ``rows``: one page of the person's done passes (last submitted first; ``older`` the next page's
      cursor, the last row's item id, or None; Invalid for a ``before`` that is not one of the
      person's done passes), each with ``kept``, ``modified``, ``deleted``, ``added`` counts, ``time_s``, and
      ``review``: the unit's review state if this pass is the one under review (``state``,
      ``label``, ``can_reopen``, ``comments`` of the latest review: ``[{"qa_id", "question", "text",
      "tags"}]``). The page names units and items by their handles (``core.handles``, issue 20);
    - ``rework``: their open rework passes; ``summaries``: quality-round summaries sent to them;
    - ``own``: ``team.selectors.own_figures`` over ``period`` (a key of ``PERIODS``; Invalid
      otherwise), as the person may see it: units, QA pairs and rework rate over real and gold
      units, no gold accuracy, ``pay_hidden`` for a running period when the rate leaves gold out; ``active_h``:
      their active time in hours.
    """
    first, last = team.preset_dates(period)
    span = team.period_of(first, last)
    own = team.own_figures(project, user, span)
    # The team's figures count real units only; shown to the person that would tell them how many
    # of their units were gold checks (issue 20, section 2). Here, units and QA pairs count every
    # unit of theirs but qualification ones, as the person saw them.
    seen = QueueItem.objects.filter(
        project=project,
        completed_by=user,
        status=QueueItem.Status.DONE,
        unit__purpose__in=[WorkUnit.Purpose.REAL, WorkUnit.Purpose.GOLD],
    )
    if span.start:
        seen = seen.filter(completed_at__gte=span.start)
    if span.end:
        seen = seen.filter(completed_at__lt=span.end)
    own["figures"] = {
        **own["figures"],
        "units": seen.values("unit_id").distinct().count(),
        "qa_pairs": Verdict.objects.filter(item__in=seen, user=user).count(),
    }
    # Gold accuracy is not shown to the person (it would change right after a gold unit: admins see
    # it on the team page); nor is pay for a period still running when the rate leaves gold units
    # out (it would stand still over one). Active time is the figure's, over every unit.
    own["figures"].pop("gold_accuracy", None)
    own["figures"]["rework_rate"] = review_figures.rework_rate_over(
        project, [user.pk], span, [WorkUnit.Purpose.REAL, WorkUnit.Purpose.GOLD]
    ).get(user.pk)
    rate = own.get("rate")
    own["pay_hidden"] = bool(rate and not rate["count_gold"] and period != "last_month")
    qs = QueueItem.objects.filter(project=project, completed_by=user, status=QueueItem.Status.DONE)
    if before is not None:
        # The cursor is one of the person's own done passes, and the list runs by when they were
        # submitted: ordered by id, or compared with any id the person names, it showed which of
        # their units were gold copies, made (so numbered) when they were served (issue 20).
        anchor = qs.filter(pk=before).values("completed_at", "id").first()
        if anchor is None:
            raise Invalid("not a page of this list: start from the first")
        qs = qs.filter(
            Q(completed_at__lt=anchor["completed_at"]) | Q(completed_at=anchor["completed_at"], id__lt=anchor["id"])
        )
    rows = list(
        qs.select_related("unit__video")
        .annotate(
            kept=Count("verdicts", filter=Q(verdicts__action="keep")),
            modified=Count("verdicts", filter=Q(verdicts__action="modify")),
            deleted=Count("verdicts", filter=Q(verdicts__action="delete")),
            added=Count("verdicts", filter=Q(verdicts__action="add")),
        )
        .order_by("-completed_at", "-id")[: PAGE + 1]
    )
    older = rows[PAGE - 1].pk if len(rows) > PAGE else None
    rows = rows[:PAGE]
    states = {s.item_id: s for s in review.states_of(user, project).filter(item_id__in=[r.pk for r in rows])}
    for r in rows:
        r.time_s = round(r.time_spent_ms / 1000) if r.time_spent_ms else None
        s = states.get(r.pk)
        r.review = (
            None
            if s is None
            else {
                "state": s.state,
                "label": ReviewState.State(s.state).label,
                "can_reopen": s.state in ReviewState.AWAITING and not s.open_pass and not s.check_drawn,
                "comments": (
                    [
                        {"qa_id": c.qa_pair_id, "question": c.qa_pair.question, "text": c.text, "tags": c.tags}
                        for c in s.review.comments.select_related("qa_pair")
                    ]
                    if s.review
                    else []
                ),
                "decision": s.review.decision if s.review else "",
            }
        )
    rework = list(
        QueueItem.objects.filter(
            project=project, assigned_to=user, status=QueueItem.Status.OPEN, kind=QueueItem.Kind.REWORK
        )
        .select_related("unit__video")
        .order_by("priority", "id")
    )
    return {
        "rows": rows,
        "older": older,
        "rework": rework,
        "summaries": list(review.summaries_for(user, project)[:5]),
        "own": own,
        "active_h": f"{(own['figures'].get('active_s') or 0) / 3600:.2f}",
        "period": period,
        "periods": PERIODS,
    }
