"""Scoring gold and qualification copies when they are submitted (``qa.services.after_submit``), the
pause that follows low gold accuracy, the end of a qualification attempt, and what a qualifying
person reads of their attempt (``qa.selectors.register_payload_part``: on qualification items only).

Runs inside the submit's transaction, so a score is written with the submit or not at all.
"""

from __future__ import annotations

import json

from django.db import connection
from django.db.models import Count, Sum
from django.utils import timezone

from annotator.gold import rules
from annotator.gold.claims import draw_secret
from annotator.gold.models import Attempt, Copy, Pause, Policy, Source, Standing
from annotator.gold.services import policy_of
from annotator.qa.models import QueueItem, WorkUnit

SCORED = (WorkUnit.Purpose.GOLD, WorkUnit.Purpose.QUALIFICATION)


# The copy, its known decisions and the person's decisions on its pairs, in one statement: one row
# per known decision (none for a real unit: no copy).
_READ_SQL = """
SELECT c.id, s.role, c.attempt_id, (p.key)::bigint, k.action, k.reason, v.action, v.reason
FROM gold_copy c JOIN gold_source s ON s.id = c.source_id
CROSS JOIN LATERAL jsonb_each_text(c.pairs) p
JOIN gold_known k ON k.id = (p.value)::bigint
LEFT JOIN qa_verdict v ON v.item_id = %(item)s AND v.qa_pair_id = (p.key)::bigint
WHERE c.unit_id = %(unit)s
ORDER BY (p.key)::bigint"""

# The result written and, for gold, what the pause needs, in one statement: the policy (NULLs when
# the project has none: the defaults apply), the person's standing and their gold results since its
# window started, newest first, up to the window (the new row is not visible to the statement's own
# SELECT: the caller puts it first).
_WRITE_SQL = """
WITH added AS (
    INSERT INTO gold_result (project_id, user_id, copy_id, item_id, role, attempt_id, decisions, agreed, details,
                             created_at)
    VALUES (%(project)s, %(user)s, %(copy)s, %(item)s, %(role)s, %(attempt)s, %(decisions)s, %(agreed)s,
            %(details)s::jsonb, now())
    RETURNING id
), policy AS (
    SELECT p."window", p.threshold FROM gold_policy p WHERE p.project_id = %(project)s
), standing AS (
    SELECT st.paused, st.window_from FROM gold_standing st WHERE st.project_id = %(project)s AND st.user_id = %(user)s
)
SELECT (SELECT id FROM added), (SELECT "window" FROM policy), (SELECT threshold FROM policy),
       (SELECT paused FROM standing),
       CASE WHEN %(role)s = 'gold' THEN ARRAY(
           SELECT ARRAY[r.agreed, r.decisions] FROM gold_result r
           WHERE r.project_id = %(project)s AND r.user_id = %(user)s AND r.role = 'gold'
             AND r.id > coalesce((SELECT window_from FROM standing), 0)
           ORDER BY r.id DESC LIMIT coalesce((SELECT "window" FROM policy), %(default_window)s)) END"""


def on_submit(item: QueueItem, unit: WorkUnit, user, result) -> None:
    """Score the submit of a gold or qualification copy against its known decisions; nothing for a
    real unit (no query). Then, for gold, pause the person when their accuracy over the last K gold
    units is below the threshold; for qualification, end the attempt once all its copies are scored.

    Two statements for a gold copy (``_READ_SQL``, ``_WRITE_SQL``), plus the pause's writes when one
    is due: a gold submit must cost about what a real one does, or its timing tells it apart (issue
    20, section 2; it cost eight more before). Copies never get a double-check or other pass
    (``qa.services`` opens none on them)."""
    if unit.purpose not in SCORED or item.kind == QueueItem.Kind.REWORK:
        return  # a real unit, or a reopened copy resubmitted (scored once, on its first submit)
    with connection.cursor() as cursor:
        cursor.execute(_READ_SQL, {"item": item.pk, "unit": unit.pk})
        rows = cursor.fetchall()
    if not rows:
        return
    copy_id, role, attempt_id = rows[0][:3]
    details = [
        {
            "qa_id": qa_id,
            "known": [k_action, k_reason],
            "given": [g_action or "", g_reason or ""],
            "agreed": rules.agrees((k_action, k_reason), (g_action or "", g_reason or "")),
        }
        for _, _, _, qa_id, k_action, k_reason, g_action, g_reason in rows
    ]
    agreed = sum(d["agreed"] for d in details)
    default = Policy()
    with connection.cursor() as cursor:
        cursor.execute(
            _WRITE_SQL,
            {
                "project": unit.project_id,
                "user": user.pk,
                "copy": copy_id,
                "item": item.pk,
                "role": role,
                "attempt": attempt_id,
                "decisions": len(details),
                "agreed": agreed,
                "details": json.dumps(details),
                "default_window": default.window,
            },
        )
        _, window, threshold, paused, earlier = cursor.fetchone()
    if role == Source.Role.GOLD:
        window = default.window if window is None else window
        threshold = default.threshold if threshold is None else threshold
        if not paused:
            results = [(agreed, len(details))] + [tuple(r) for r in (earlier or [])]
            _pause_if_due(unit.project_id, user, results[:window][::-1], window, threshold)
    elif attempt_id is not None:
        _finish_if_done(Attempt.objects.get(pk=attempt_id))


# A skipped gold copy scored as a miss, in one statement: nothing for a real unit (no copy) or for a
# copy already scored.
_SKIP_SQL = """
INSERT INTO gold_result (project_id, user_id, copy_id, item_id, role, attempt_id, decisions, agreed, details,
                         created_at)
SELECT %(project)s, %(user)s, c.id, %(item)s, 'gold', NULL, count(*), 0,
       jsonb_agg(jsonb_build_object('qa_id', (p.key)::bigint, 'known', jsonb_build_array(k.action, k.reason),
                                    'given', jsonb_build_array('skip', %(reason)s::text), 'agreed', false)
                 ORDER BY (p.key)::bigint),
       now()
FROM gold_copy c JOIN gold_source s ON s.id = c.source_id
CROSS JOIN LATERAL jsonb_each_text(c.pairs) p
JOIN gold_known k ON k.id = (p.value)::bigint
WHERE c.unit_id = %(unit)s AND s.role = 'gold' AND NOT EXISTS (SELECT 1 FROM gold_result r WHERE r.copy_id = c.id)
GROUP BY c.id"""


def on_skip(item: QueueItem, unit_id: int, user, reason: str) -> None:
    """Score a skipped gold copy as a miss (every known decision not agreed, ``given`` ``["skip",
    reason]``), so skipping a unit one suspects of being gold is not a way around the checks (second
    security review of issue 20). The pause is not looked at now: a pause right after a skip would
    say the skipped unit was gold; the person's next gold submit counts this result in its window.
    One statement whether the unit is gold or real (``_SKIP_SQL``): its cost must not tell them apart."""
    with connection.cursor() as cursor:
        cursor.execute(
            _SKIP_SQL, {"project": item.project_id, "user": user.pk, "item": item.pk, "unit": unit_id, "reason": reason}
        )


def _pause_if_due(project_id: int, user, window: list[tuple[int, int]], k: int, threshold: float) -> Pause | None:
    """Open a pause when the person's accuracy over their last ``k`` gold units since their window
    started (an admin's last lift), ``window`` oldest first as (agreed, decided), is below
    ``threshold`` (``rules.pause_accuracy``). No query unless one is due; then the standing is locked
    and read again (two submits at once pause once). Admins see the pause at once; the person's
    claims are refused from ``rules.pause_delay`` claims on (``Standing.pause_from``)."""
    value = rules.pause_accuracy(window, k, threshold)
    if value is None:
        return None
    standing, _ = Standing.objects.select_for_update().get_or_create(project_id=project_id, user=user)
    if standing.paused:
        return None
    standing.paused = True
    standing.pause_from = standing.claims + 1 + rules.pause_delay(project_id, user.pk, standing.claims, draw_secret())
    standing.save(update_fields=["paused", "pause_from"])
    return Pause.objects.create(
        project_id=project_id,
        user=user,
        accuracy=value,
        window=k,
        threshold=threshold,
        reason=f"gold accuracy {value:.0%} over the last {k} gold units, below {threshold:.0%}",
    )


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
        Standing.objects.update_or_create(
            project_id=attempt.project_id, user_id=attempt.user_id, defaults={"qualified_at": now}
        )


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
    previous = (
        Attempt.objects.filter(project_id=item.project_id, user_id=attempt.user_id, number__lt=attempt.number)
        .order_by("-number")
        .values("score", "passed")
        .first()
    )
    return {
        "attempt": attempt.number,
        "tries": policy.tries + (standing.extra_tries if standing else 0),
        "units": attempt.copies.count(),
        "done": attempt.results.count(),
        "threshold": attempt.threshold,
        "previous": previous,
    }
