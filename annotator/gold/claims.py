"""The claim policy of onboarding and gold checks (registered with ``qa.queue.before_claim``).

On every claim, one statement (``_STATE_SQL``) reads whether the person holds an item (then nothing
else happens: the claim renews it), counts the new claim on their ``Standing`` and reads it with the
project's policy and their role. A gold copy the person skipped stays open, as a skipped real unit
does, and the claim never serves it to them again (it passes over items they skipped, assigned or
not), so a heartbeat on it answers as on a skipped real unit (security review of issue 20). Then:

1. Paused: the claim is refused (Forbidden) with why and whom to ask, from the claim the pause's
   delay names (``Standing.pause_from``).
2. Must qualify (the policy requires it, their role is annotator, not passed yet): they get only
   items assigned to them (``Gate(only_assigned=True)``); with no attempt open, a new attempt makes
   one copy of every qualification source, each a ``qualification`` item assigned to them. Out of
   tries, or no qualification set: refused in plain words.
3. Otherwise the claim makes nothing and draws nothing. A gold copy is made *ahead*, by ``premake``:
   with probability ``gold_rate`` (``rules.draws_gold``: seeded by the policy's seed, the person and
   the claim's number) the person's *next* claim draws gold, and a copy waits for it, a first-pass
   item assigned to them, from a gold source showing no footage they were shown (exposure ledger)
   nor whose unit they passed. The claim's statement serves a waiting copy before anything else.
   Every claim that takes a new item, in a project with active gold sources and a rate above 0,
   sends ``gold.premake_for`` for the person (``Gate.then``, on commit; in a web request once the
   response is out, ``jobs.nudge``), the same message whatever the draw, so their copy is made right
   after this claim; beat's ``gold.premake`` does the same
   for everyone every ``GOLD_PREMAKE_EVERY_S``.
   A claim that comes before its copy was made is served real work: the draw is missed. The claim
   used to make the copy itself then, and took about 23 ms longer, which a person could time
   (security reviews of issue 20, M2 and M4).
"""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotator import jobs
from annotator.errors import Forbidden
from annotator.gold import rules
from annotator.gold.models import Attempt, Pause, Policy, Source, Standing
from annotator.gold.services import copy_params, copy_sql, make_copy
from annotator.projects.models import Membership, Project, Role
from annotator.qa.models import QueueItem, WorkUnit
from annotator.qa.queue import SHARED_CLAIMABLE_SQL, Gate

# A gold copy waiting for the person: open, assigned to them, not skipped by them, not the one they
# hold. The claim's state reads it (a copy waiting: none is drawn) and the pick refuses a second.
_WAITING_GOLD_SQL = """SELECT 1 FROM qa_queueitem i JOIN qa_workunit w ON w.id = i.unit_id
    WHERE i.assigned_to_id = %(user)s AND i.project_id = %(project)s AND i.status = 'open'
      AND w.purpose = 'gold' AND i.leased_by_id IS DISTINCT FROM %(user)s
      AND NOT EXISTS (SELECT 1 FROM qa_skip s WHERE s.item_id = i.id AND s.user_id = %(user)s)"""

# One round trip per claim: held?, the claim counted (only when nothing is held), the person's
# standing, role and the project's policy (NULLs when it has none: the defaults apply).
_STATE_SQL = """
WITH held AS (
    SELECT EXISTS (SELECT 1 FROM qa_queueitem WHERE project_id = %(project)s AND status = 'open'
                   AND leased_by_id = %(user)s) AS held
), counted AS (
    INSERT INTO gold_standing (project_id, user_id, claims, paused, extra_tries, window_from)
    SELECT %(project)s, %(user)s, 1, false, 0, 0 FROM held WHERE NOT held.held
    ON CONFLICT (project_id, user_id) DO UPDATE SET claims = gold_standing.claims + 1
    RETURNING claims, qualified_at IS NOT NULL AS qualified,
              paused AND claims >= coalesce(pause_from, 0) AS paused, extra_tries
)
SELECT h.held, c.claims, c.qualified, c.paused, c.extra_tries,
       (SELECT m.role FROM projects_membership m WHERE m.project_id = %(project)s AND m.user_id = %(user)s),
       p.gold_rate, p.tries, p.qualification_required, p.threshold,
       EXISTS (SELECT 1 FROM gold_source s WHERE s.project_id = %(project)s AND s.role = 'gold' AND s.active)
FROM held h LEFT JOIN counted c ON TRUE LEFT JOIN gold_policy p ON p.project_id = %(project)s"""

# The people whose next claim may draw gold, to make their copy ahead (``premake``): those holding
# an open item now (their next claim follows its submit), not paused, not still qualifying, in a
# project whose gold rate (the policy's, or the default without one) is above 0.
_PREMAKE_SQL = """
SELECT DISTINCT i.project_id, i.leased_by_id, st.claims, coalesce(p.gold_rate, %(rate)s), coalesce(p.seed, 0)
FROM qa_queueitem i
JOIN gold_standing st ON st.project_id = i.project_id AND st.user_id = i.leased_by_id
LEFT JOIN gold_policy p ON p.project_id = i.project_id
JOIN projects_membership m ON m.project_id = i.project_id AND m.user_id = i.leased_by_id
WHERE i.status = 'open' AND i.leased_by_id IS NOT NULL AND i.lease_expires_at > %(now)s
  AND NOT (st.paused AND st.claims + 1 >= coalesce(st.pause_from, 0))
  AND coalesce(p.gold_rate, %(rate)s) > 0
  AND (NOT coalesce(p.qualification_required, %(required)s) OR m.role <> 'annotator'
       OR st.qualified_at IS NOT NULL)
  AND (%(project)s::bigint IS NULL OR i.project_id = %(project)s)
  AND (%(user)s::bigint IS NULL OR i.leased_by_id = %(user)s)"""

# A gold copy for the person, picked and made in one statement (``services.copy_sql``): none when a
# gold copy already waits for them, nor when the shared queue has no unit left for them (a gold unit
# followed by an empty queue would give itself away, issue 20); else an active gold source none of
# whose footage was shown to them (footage or frames, in any queue or study of the project), none of
# whose units' passes they did, never copied for them, chosen by a hash of the claim's salt so the
# pick is reproducible.
_PICK = (
    """pick AS (
    SELECT s.id FROM gold_source s,
         (SELECT coalesce(array_agg(DISTINCT e.video_id), '{}') AS ids FROM exposure_exposure e
          WHERE e.project_id = %(project)s AND e.person = %(person)s::varchar AND e.kind IN ('footage', 'frames')
            AND e.video_id IS NOT NULL) seen
    WHERE s.project_id = %(project)s AND s.role = 'gold' AND s.active AND NOT (s.footage && seen.ids)
      AND NOT EXISTS ("""
    + _WAITING_GOLD_SQL
    + """)
      AND NOT EXISTS (SELECT 1 FROM qa_workunit w JOIN qa_queueitem d ON d.unit_id = w.id
                      WHERE (w.id = s.unit_id OR w.video_id = ANY(s.footage)) AND d.completed_by_id = %(user)s)
      AND NOT EXISTS (SELECT 1 FROM gold_copy c WHERE c.source_id = s.id AND c.user_id = %(user)s)
      AND EXISTS (SELECT 1 FROM qa_queueitem i WHERE """
    + SHARED_CLAIMABLE_SQL
    + """)
    ORDER BY md5(s.id::text || ':' || %(salt)s::text), s.id
    LIMIT 1)"""
)
_GOLD_SQL = copy_sql(_PICK)


def gate(project: Project, user) -> Gate | None:
    """The claim policy (see the module's docstring). Raises Forbidden when the person may not take a
    unit now (paused; out of tries; no qualification set while one is required)."""
    with connection.cursor() as cursor:
        cursor.execute(_STATE_SQL, {"project": project.pk, "user": user.pk})
        (held, _claims, qualified, paused, extra_tries, role, gold_rate, tries, required, threshold, has_gold) = (
            cursor.fetchone()
        )  # the claim is counted; its number is premake's
    if held:
        return None
    default = Policy()
    gold_rate = default.gold_rate if gold_rate is None else gold_rate
    if paused:
        raise Forbidden(pause_message(project, user))
    if required and role == Role.ANNOTATOR and not qualified:
        return _qualifying(
            project, user, tries=tries + extra_tries, threshold=default.threshold if threshold is None else threshold
        )
    if has_gold and gold_rate > 0:
        # The person's next copy, if their next claim draws gold, made right after this claim took its
        # item: the same message for every claim of the project, so nothing in a claim depends on its
        # draw.
        return Gate(then=lambda item: jobs.nudge("gold.premake_for", project.pk, user.pk))
    return None


def premake(now=None, *, project_id: int | None = None, user_id: int | None = None) -> int:
    """Make ahead the gold copy of each person whose next claim draws gold (``_PREMAKE_SQL`` says
    who): everyone, from Celery beat every ``GOLD_PREMAKE_EVERY_S`` seconds, or one person of one
    project (``project_id`` and ``user_id``: ``gold.premake_for``, sent by each of their claims).
    The copy waits, assigned to them and not leased, and their next claim serves it as it serves
    any item assigned to them, so a gold claim costs what a real one does: made in the claim, it
    took about 23 ms more, which a person could time (third security review of issue 20). The draw
    is for claim number ``claims + 1`` (``rules.draws_gold``), the pick salted with it. Returns how
    many copies were made."""
    from django.contrib.auth import get_user_model

    default = Policy()
    with connection.cursor() as cursor:
        cursor.execute(
            _PREMAKE_SQL,
            {
                "now": now or timezone.now(),
                "rate": default.gold_rate,
                "required": default.qualification_required,
                "project": project_id,
                "user": user_id,
            },
        )
        rows = cursor.fetchall()
    secret, made = draw_secret(), 0
    wanted = [
        (pid, uid, claims + 1, seed)
        for pid, uid, claims, rate, seed in rows
        if rules.draws_gold(seed, pid, uid, claims + 1, rate, secret)
    ]
    people = get_user_model().objects.in_bulk({uid for _, uid, _, _ in wanted})
    projects = Project.objects.in_bulk({pid for pid, _, _, _ in wanted})
    for pid, uid, n, seed in wanted:
        made += _serve_gold(projects[pid], people[uid], salt=f"{seed}:{uid}:{n}")
    return made


def draw_secret() -> bytes:
    """The key of the gold draws (``rules.draws_gold``): derived from the deployment's SECRET_KEY, so
    nobody outside the server can tell which of their claims will be gold (the seed and ids are not
    secret)."""
    return hmac.new(settings.SECRET_KEY.encode(), b"gold-draws", hashlib.sha256).digest()


def admins_of(project: Project) -> str:
    """The project's admins by username, for "ask ..." in messages ("an admin" when it has none)."""
    names = list(
        Membership.objects.filter(project=project, role=Role.ADMIN)
        .order_by("user__username")
        .values_list("user__username", flat=True)[:5]
    )
    return ", ".join(names) if names else "an admin"


def pause_message(project: Project, user) -> str:
    """Why the person is paused and whom to ask, in plain words."""
    pause = Pause.objects.filter(project=project, user=user, lifted_at__isnull=True).first()
    why = (
        f"your agreement with the known answers over your last {pause.window} checked units was "
        f"{pause.accuracy:.0%}, below the project's {pause.threshold:.0%}"
        if pause
        else "an admin paused it"
    )
    since = f" since {pause.created_at:%Y-%m-%d}" if pause else ""  # the day: the time would name the unit
    return (
        f"Your work on {project.name} is paused{since}: {why}. Ask an admin of the project ({admins_of(project)}) "
        "to look at your work with you and lift the pause."
    )


def _qualifying(project: Project, user, *, tries: int, threshold: float) -> Gate:
    """Items of the person's open qualification attempt only; a new attempt when none is open and tries
    remain. Raises Forbidden when out of tries or when the project has no qualification set."""
    with transaction.atomic():
        Standing.objects.select_for_update().filter(project=project, user=user).first()  # two tabs: one attempt
        attempt = Attempt.objects.filter(project=project, user=user, finished_at__isnull=True).order_by("-id").first()
        if attempt is not None:
            return Gate(only_assigned=True)
        done = list(
            Attempt.objects.filter(project=project, user=user).order_by("number").values_list("number", "score")
        )
        if len(done) >= tries:
            best = max((s for _, s in done if s is not None), default=0.0)
            raise Forbidden(
                f"You have used all {tries} of your tries at the qualification set of {project.name} without "
                f"reaching {threshold:.0%} agreement with the known decisions (your best was {best:.0%}), so the "
                f"project's units are not open to you. Ask an admin of the project ({admins_of(project)}) for "
                "another try."
            )
        sources = list(
            Source.objects.filter(project=project, role=Source.Role.QUALIFICATION, active=True).order_by(
                "position", "id"
            )
        )
        if not sources:
            raise Forbidden(
                f"{project.name} asks annotators to pass a qualification set first, and it has none yet. "
                f"Ask an admin of the project ({admins_of(project)}) to make one."
            )
        try:
            with transaction.atomic():
                attempt = Attempt.objects.create(project=project, user=user, number=len(done) + 1, threshold=threshold)
                for source in sources:
                    make_copy(source, user=user, attempt=attempt, kind=QueueItem.Kind.QUALIFICATION)
        except IntegrityError:  # another tab made this attempt meanwhile: its items are served
            pass
    return Gate(only_assigned=True)


def _serve_gold(project: Project, user, *, salt: str) -> int:
    """Make a gold copy for the person, a first-pass item assigned to them, unless one is waiting for
    them already or no gold source is left that they were not shown (``_GOLD_SQL``: one statement).
    Returns how many were made (0 or 1): 0 as well when another transaction made the same copy at the
    same moment (a claim's ``premake_for`` and beat's ``premake``; the constraint
    ``gold_copy_once_per_person`` keeps one).
    Raises IntegrityError for any other constraint the insert breaks."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                _GOLD_SQL,
                copy_params(
                    purpose=WorkUnit.Purpose.GOLD,
                    user=user,
                    kind=QueueItem.Kind.FIRST_PASS,
                    project=project.pk,
                    salt=salt,
                ),
            )
            return int(cursor.fetchone()[0] is not None)  # the copy's id, or NULL when none was made
    except IntegrityError as exc:
        if _constraint_of(exc) != _ONCE_PER_PERSON:
            raise  # any other broken rule is a defect, not the race this function expects
        return 0


_ONCE_PER_PERSON = "gold_copy_once_per_person"


def _constraint_of(exc: IntegrityError) -> str | None:
    """The name of the constraint (or unique index) that ``exc`` broke, as PostgreSQL reports it
    (psycopg's ``diag.constraint_name``); None when the driver says nothing."""
    return getattr(getattr(exc.__cause__, "diag", None), "constraint_name", None)
