"""Scoring gold and qualification copies when they are submitted (``qa.services.after_submit``), the
pause that follows low gold accuracy, the end of a qualification attempt, and what a qualifying
person reads of their attempt (``qa.selectors.register_payload_part``: on qualification items only).

Runs inside the submit's transaction, so a score is written with the submit or not at all.
"""

from __future__ import annotations

from django.db.models import Count, Sum
from django.utils import timezone

from annotator.gold import rules
from annotator.gold.models import Attempt, Copy, Known, Pause, Result, Source, Standing
from annotator.gold.services import policy_of
from annotator.qa.models import QueueItem, Verdict, WorkUnit

SCORED = (WorkUnit.Purpose.GOLD, WorkUnit.Purpose.QUALIFICATION)


def on_submit(item: QueueItem, unit: WorkUnit, user, result) -> None:
    """Score the submit of a gold or qualification copy against its known decisions; nothing for a
    real unit (no query). Drops any other pass the submit queued on the copy (a double-check: copies
    are for their person only, never for the shared queue). Then, for gold, pauses the person when
    their accuracy over the last K gold units is below the threshold; for qualification, ends the
    attempt once all its copies are scored."""
    if unit.purpose not in SCORED or item.kind == QueueItem.Kind.REWORK:
        return  # a real unit, or a reopened copy resubmitted (scored once, on its first submit)
    copy = Copy.objects.filter(unit=unit).select_related("source", "attempt").first()
    if copy is None:
        return
    QueueItem.objects.filter(unit=unit, status=QueueItem.Status.OPEN).exclude(pk=item.pk).delete()
    known = Known.objects.in_bulk(list(copy.pairs.values()))
    given = {pair_id: (action, reason) for pair_id, action, reason in
             Verdict.objects.filter(item=item, qa_pair__isnull=False).values_list("qa_pair_id", "action", "reason")}
    details = []
    for pair_id, known_id in sorted(copy.pairs.items(), key=lambda kv: int(kv[0])):
        k = known[known_id]
        mine = given.get(int(pair_id), ("", ""))
        details.append({"qa_id": int(pair_id), "known": [k.action, k.reason], "given": list(mine),
                        "agreed": rules.agrees((k.action, k.reason), mine)})
    Result.objects.create(project_id=unit.project_id, user=user, copy=copy, item=item, role=copy.source.role,
                          attempt=copy.attempt, decisions=len(details), agreed=sum(d["agreed"] for d in details),
                          details=details)
    if copy.source.role == Source.Role.GOLD:
        _pause_if_due(unit.project, user)
    elif copy.attempt is not None:
        _finish_if_done(copy.attempt)


def on_skip(item: QueueItem, unit_id: int, user, reason: str) -> None:
    """Score a skipped gold copy as a miss (every known decision not agreed, ``given`` ``["skip",
    reason]``), so skipping a unit one suspects of being gold is not a way around the checks (second
    security review of issue 20). The pause is not looked at now: a pause right after a skip would
    say the skipped unit was gold; the person's next gold submit counts this result in its window.
    Nothing for a real unit (one query: the copy)."""
    copy = Copy.objects.filter(unit_id=unit_id, source__role=Source.Role.GOLD).select_related("source").first()
    if copy is None or Result.objects.filter(copy=copy).exists():
        return
    known = Known.objects.in_bulk(list(copy.pairs.values()))
    details = [{"qa_id": int(pair_id), "known": [known[k].action, known[k].reason], "given": ["skip", reason],
                "agreed": False} for pair_id, k in sorted(copy.pairs.items(), key=lambda kv: int(kv[0]))]
    Result.objects.create(project_id=item.project_id, user=user, copy=copy, item=item, role=Source.Role.GOLD,
                          decisions=len(details), agreed=0, details=details)


def _pause_if_due(project, user) -> Pause | None:
    """Open a pause when the person's accuracy over their last K gold units since their window
    started (an admin's last lift) is below the threshold (``rules.pause_accuracy``)."""
    policy = policy_of(project)
    standing, _ = Standing.objects.select_for_update().get_or_create(project=project, user=user)
    if standing.paused:
        return None
    window = list(Result.objects.filter(project=project, user=user, role=Source.Role.GOLD, id__gt=standing.window_from)
                  .order_by("-id").values_list("agreed", "decisions")[:policy.window])[::-1]
    value = rules.pause_accuracy(window, policy.window, policy.threshold)
    if value is None:
        return None
    standing.paused = True
    standing.save(update_fields=["paused"])
    return Pause.objects.create(
        project=project, user=user, accuracy=value, window=policy.window, threshold=policy.threshold,
        reason=f"gold accuracy {value:.0%} over the last {policy.window} gold units, below {policy.threshold:.0%}")


def _finish_if_done(attempt: Attempt) -> None:
    """Score the attempt once every copy of it has a result: passed when agreed / decisions reaches
    its threshold; a pass opens the real queue (``Standing.qualified_at``)."""
    attempt = Attempt.objects.select_for_update().get(pk=attempt.pk)
    if attempt.finished_at is not None:
        return
    totals = attempt.results.aggregate(n=Count("id"), agreed=Sum("agreed"), decisions=Sum("decisions"))
    if totals["n"] < attempt.copies.count():
        return
    now = timezone.now()
    attempt.agreed, attempt.decisions = totals["agreed"] or 0, totals["decisions"] or 0
    attempt.score = attempt.agreed / attempt.decisions if attempt.decisions else 0.0
    attempt.passed = attempt.decisions > 0 and attempt.score >= attempt.threshold
    attempt.finished_at = now
    attempt.save(update_fields=["agreed", "decisions", "score", "passed", "finished_at"])
    if attempt.passed:
        Standing.objects.update_or_create(project_id=attempt.project_id, user_id=attempt.user_id,
                                          defaults={"qualified_at": now})


def qualification_part(item: QueueItem, user) -> dict | None:
    """The payload's ``qualification`` part on qualification items (None, so no key, on every other):
    ``{"attempt": n, "tries": allowed, "units": in the attempt, "done": submitted, "threshold",
    "previous": {"score", "passed"} | None}``. Says nothing of the known decisions."""
    if item.kind != QueueItem.Kind.QUALIFICATION:
        return None
    copy = Copy.objects.filter(unit_id=item.unit_id).select_related("attempt").first()
    if copy is None or copy.attempt is None:
        return None
    attempt = copy.attempt
    policy = policy_of(item.project)
    standing = Standing.objects.filter(project_id=item.project_id, user_id=attempt.user_id).first()
    previous = (Attempt.objects.filter(project_id=item.project_id, user_id=attempt.user_id, number__lt=attempt.number)
                .order_by("-number").values("score", "passed").first())
    return {"attempt": attempt.number, "tries": policy.tries + (standing.extra_tries if standing else 0),
            "units": attempt.copies.count(), "done": attempt.results.count(), "threshold": attempt.threshold,
            "previous": previous}
