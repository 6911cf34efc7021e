"""Writes of onboarding and gold checks: the policy, sources made from verified units, copies, the
tutorial, pauses lifted and tries granted by admins.

A *source* is a verified real unit; its *known* decisions come from the verified outcome (kept ->
keep, modified -> modify, deleted -> delete with its reason). A *copy* is a new ``qa.WorkUnit``
(purpose gold, qualification or example) with new QA pairs restored to the content the first pass
was shown (status draft), so its unit, QA pair and queue item ids come from the same sequences as
real units' (issue 20, section 2).
"""

from __future__ import annotations

import math
import random

from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotator.errors import Conflict, Invalid, NotFound
from annotator.exposure import ledger
from annotator.gold.models import (
    GOLD_RATE_MAX,
    TRIES_MAX,
    WINDOW_MAX,
    Attempt,
    Copy,
    Known,
    Pause,
    Policy,
    Source,
    Standing,
)
from annotator.media.models import VideoGroupMember
from annotator.projects.models import Project
from annotator.qa.models import QAPair, QueueItem, Revision, WorkUnit
from annotator.qa.selectors import drafted_states

SOURCES_MAX = 500  # units one command or request may turn into sources
TUTORIAL_MAX = 100_000  # characters of tutorial Markdown
EXPLANATION_MAX = 4000
NOTE_MAX = 2000

PURPOSE_OF = {
    Source.Role.GOLD: WorkUnit.Purpose.GOLD,
    Source.Role.QUALIFICATION: WorkUnit.Purpose.QUALIFICATION,
    Source.Role.EXAMPLE: WorkUnit.Purpose.EXAMPLE,
}


# ------------------------------------------------------------------------------------ the policy


def policy_of(project: Project) -> Policy:
    """The project's policy, or an unsaved one with the defaults when it has none."""
    return Policy.objects.filter(project=project).first() or Policy(project=project)


def set_policy(
    project: Project,
    *,
    gold_rate: float | None = None,
    threshold: float | None = None,
    tries: int | None = None,
    window: int | None = None,
    qualification_required: bool | None = None,
    seed: int | None = None,
) -> Policy:
    """Change the project's policy (fields left None stay). Raises Invalid, naming each field out of
    bounds (nothing saved): ``gold_rate`` 0 to 0.5, ``threshold`` 0 to 1, ``tries`` 1 to 20,
    ``window`` (K gold units) 1 to 200, ``seed`` a 32-bit integer."""
    errors = {}
    checks = (
        ("gold_rate", gold_rate, 0, GOLD_RATE_MAX),
        ("threshold", threshold, 0, 1),
        ("tries", tries, 1, TRIES_MAX),
        ("window", window, 1, WINDOW_MAX),
        ("seed", seed, -(2**31), 2**31 - 1),
    )
    for name, value, low, high in checks:
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or math.isnan(value)
            or not low <= value <= high
        ):
            errors[name] = f"{name} must be a number from {low} to {high}"
        elif name in ("tries", "window", "seed") and value != int(value):
            errors[name] = f"{name} must be a whole number"
    if errors:
        raise Invalid("the policy has errors; nothing was saved", errors=errors)
    with transaction.atomic():
        policy, _ = Policy.objects.select_for_update().get_or_create(project=project)
        for name, value in (
            ("gold_rate", gold_rate),
            ("threshold", threshold),
            ("tries", tries),
            ("window", window),
            ("qualification_required", qualification_required),
            ("seed", seed),
        ):
            if value is not None:
                setattr(policy, name, int(value) if name in ("tries", "window", "seed") else value)
        policy.save()
    return policy


# ------------------------------------------------------------------------------------ sources


def known_decision(pair: QAPair, touched: bool) -> tuple[str, str] | None:
    """The verified outcome of a machine QA pair as a decision (action, reason): kept -> keep,
    modified -> modify, deleted by a person -> delete with its reason. None for a pair a person never
    decided (``touched``: it has a revision by a person), one a model dropped, or one a person added."""
    if pair.origin != QAPair.Origin.MACHINE or not touched:
        return None
    if pair.status == QAPair.Status.VERIFIED:
        return ("keep", "") if pair.provenance == QAPair.Provenance.MACHINE_KEPT else ("modify", "")
    if pair.status == QAPair.Status.DELETED and pair.delete_reason:
        return "delete", pair.delete_reason
    return None


def verified_units(project: Project):
    """The project's real units whose verification is over: a first pass done, no open pass, no QA
    pair still a draft, and not a source already. A queryset of ``WorkUnit``."""
    open_items = QueueItem.objects.filter(unit=OuterRef("pk"), status=QueueItem.Status.OPEN)
    done = QueueItem.objects.filter(unit=OuterRef("pk"), kind=QueueItem.Kind.FIRST_PASS, status=QueueItem.Status.DONE)
    drafts = QAPair.objects.filter(unit=OuterRef("pk"), status=QAPair.Status.DRAFT)
    sources = Source.objects.filter(unit=OuterRef("pk"))
    return (
        WorkUnit.objects.filter(project=project, purpose=WorkUnit.Purpose.REAL)
        .filter(Exists(done))
        .exclude(Exists(open_items))
        .exclude(Exists(drafts))
        .exclude(Exists(sources))
    )


def footage_of(unit: WorkUnit) -> list[int]:
    """Source footage ids (``ledger.roots``) of every video ``unit`` shows: its video, its group's
    members, and the labelled videos of its QA pairs."""
    videos = {unit.video_id}
    if unit.group_id:
        videos |= set(VideoGroupMember.objects.filter(group_id=unit.group_id).values_list("video_id", flat=True))
    for labelled in QAPair.objects.filter(unit=unit).exclude(videos=[]).values_list("videos", flat=True):
        videos |= {v["video_id"] for v in labelled or [] if isinstance(v, dict) and isinstance(v.get("video_id"), int)}
    root = ledger.roots(videos)
    return sorted({root.get(v, v) for v in videos})


def _source_from(project: Project, unit: WorkUnit, role: str, position: int, user) -> Source | None:
    """A source of ``role`` made from verified ``unit`` with its known decisions; None when no
    machine QA pair of it was decided by a person."""
    pairs = list(unit.qa_pairs.filter(origin=QAPair.Origin.MACHINE).select_related("draft").order_by("id"))
    touched = set(
        Revision.objects.filter(qa_pair__in=pairs, actor_user__isnull=False).values_list("qa_pair_id", flat=True)
    )
    decided = [(p, d) for p in pairs if (d := known_decision(p, p.pk in touched)) is not None]
    if not decided:
        return None
    states = drafted_states([p for p, _ in decided])
    actors = dict(
        Revision.objects.filter(qa_pair__in=[p for p, _ in decided], action=Revision.Action.DRAFT).values_list(
            "qa_pair_id", "actor_model"
        )
    )
    source = Source.objects.create(
        project=project, unit=unit, role=role, footage=footage_of(unit), position=position, created_by=user
    )
    Known.objects.bulk_create(
        [
            Known(
                source=source,
                qa_pair=p,
                action=action,
                reason=reason,
                shown={**states[p.pk][0], "version": states[p.pk][1], "actor": actors.get(p.pk, "")},
                expected={k: v for k, v in p.snapshot().items() if k not in ("status",)},
            )
            for p, (action, reason) in decided
        ]
    )
    return source


def make_sources(project: Project, role: str, n: int, *, user=None, unit_ids: list[int] | None = None) -> list[Source]:
    """Turn ``n`` verified units of ``project`` (``verified_units``) into sources of ``role``, chosen at
    random with the policy's seed (or the units ``unit_ids``, in that order), preferring footage no
    other source shows (a person who saw a qualification or tutorial unit could never get a gold copy
    of its footage). Returns the sources made, possibly fewer than ``n`` when fewer units qualify.
    Raises Invalid for an unknown role, ``n`` outside 1..``SOURCES_MAX``, or a named unit that is not a
    verified real unit of the project (nothing made)."""
    if role not in Source.Role.values:
        raise Invalid(f"role must be one of {', '.join(Source.Role.values)}", errors={"role": "unknown"})
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= SOURCES_MAX:
        raise Invalid(f"choose from 1 to {SOURCES_MAX} units", errors={"n": f"from 1 to {SOURCES_MAX}"})
    candidates = verified_units(project)
    with transaction.atomic():
        Policy.objects.get_or_create(project=project)
        Project.objects.select_for_update().filter(pk=project.pk).first()  # one maker at a time per project
        if unit_ids is not None:
            found = {u.pk: u for u in candidates.filter(pk__in=unit_ids)}
            missing = [u for u in unit_ids if u not in found]
            if missing:
                raise Invalid(
                    f"unit {missing[0]} is not a verified unit of this project (a real unit whose passes are "
                    "all done, none of its QA pairs a draft, not already a gold, qualification or example unit)",
                    errors={"unit": "not a verified unit"},
                )
            chosen = [found[u] for u in unit_ids]
        else:
            ids = sorted(candidates.values_list("id", flat=True))
            random.Random(f"sources:{policy_of(project).seed}:{role}:{len(ids)}").shuffle(ids)
            taken = set()
            for footage in Source.objects.filter(project=project).values_list("footage", flat=True):
                taken |= set(footage)
            units = WorkUnit.objects.in_bulk(ids[: max(n * 4, n + 20)])
            ordered = [units[i] for i in ids[: max(n * 4, n + 20)]]
            fresh = [u for u in ordered if not set(footage_of(u)) & taken]
            chosen = fresh + [u for u in ordered if u not in fresh]
        start = (
            Source.objects.filter(project=project, role=role)
            .order_by("-position")
            .values_list("position", flat=True)
            .first()
            or 0
        ) + 1
        made = []
        for unit in chosen:
            if len(made) == n:
                break
            source = _source_from(project, unit, role, start + len(made), user)
            if source is not None:
                made.append(source)
        if unit_ids is not None and len(made) < len(unit_ids):
            raise Invalid(
                "a unit named has no QA pair a person decided; nothing was made", errors={"unit": "no decisions"}
            )
    return made


# ------------------------------------------------------------------------------------ copies

# A copy in one statement (a gold copy is made while a person waits for their claim): the unit, one QA
# pair per known decision restored to the content the first pass was shown (drafted content and
# version, status draft), its ``draft`` revision by the same model, the queue item assigned to the
# person (when a kind is given), the ``gold_copy`` row mapping copy pairs to known decisions, and the
# source pairs' answers in the person's exposure ledger (as ``exposure.ledger.record`` writes them).
# The ``{pick}`` CTE names the source (one row, or none: then nothing is written). QA pairs are
# inserted in known-decision order and numbered back by id (identity values follow insertion order
# within a statement), which pairs each copy with its known decision.
_COPY_SQL = """
WITH {pick},
src AS (
    SELECT s.id AS source_id, u.project_id, u.video_id, u.group_id, u.start_s, u.end_s
    FROM pick JOIN gold_source s ON s.id = pick.id JOIN qa_workunit u ON u.id = s.unit_id
), unit AS (
    INSERT INTO qa_workunit (project_id, video_id, group_id, start_s, end_s, purpose, created_at)
    SELECT project_id, video_id, group_id, start_s, end_s, %(purpose)s::varchar, %(now)s::timestamptz FROM src
    RETURNING id, project_id
), k AS (
    SELECT k.id AS known_id, k.qa_pair_id, k.shown, p.video_id, p.qa_type_id, p.draft_id, p.clip_start_s,
           p.clip_end_s, p.videos, row_number() OVER (ORDER BY k.id) AS n
    FROM src JOIN gold_known k ON k.source_id = src.source_id JOIN qa_qapair p ON p.id = k.qa_pair_id
), pairs AS (
    INSERT INTO qa_qapair (project_id, unit_id, video_id, qa_type_id, draft_id, origin, question, answer, options,
                           answer_index, answer_start_s, answer_end_s, clip_start_s, clip_end_s, videos, status,
                           provenance, delete_reason, flag_reason, flag_source, version, created_at, updated_at)
    SELECT unit.project_id, unit.id, k.video_id, k.qa_type_id, k.draft_id, 'machine', k.shown->>'question',
           k.shown->>'answer', NULLIF(k.shown->'options', 'null'::jsonb), (k.shown->>'answer_index')::int,
           (k.shown->>'answer_start_s')::float8, (k.shown->>'answer_end_s')::float8, k.clip_start_s, k.clip_end_s,
           k.videos, 'draft', '', '', '', '', (k.shown->>'version')::int, %(now)s::timestamptz, %(now)s::timestamptz
    FROM k, unit ORDER BY k.n
    RETURNING id, question, answer, options, answer_index, answer_start_s, answer_end_s, version
), numbered AS (
    SELECT pairs.*, row_number() OVER (ORDER BY pairs.id) AS n FROM pairs
), revisions AS (
    INSERT INTO qa_revision (qa_pair_id, actor_model, action, after, version, created_at)
    SELECT c.id, coalesce(k.shown->>'actor', ''), 'draft',
           jsonb_build_object('question', c.question, 'answer', c.answer, 'options', c.options,
                              'answer_index', c.answer_index, 'answer_start_s', c.answer_start_s,
                              'answer_end_s', c.answer_end_s, 'status', 'draft', 'delete_reason', ''),
           c.version, %(now)s::timestamptz
    FROM numbered c JOIN k ON k.n = c.n
), item AS (
    INSERT INTO qa_queueitem (project_id, unit_id, kind, seq, status, priority, assigned_to_id, created_at)
    SELECT unit.project_id, unit.id, %(kind)s::varchar, 0, 'open', 0, %(user)s::integer, %(now)s::timestamptz FROM unit WHERE %(kind)s::varchar IS NOT NULL
    RETURNING id
), made AS (
    INSERT INTO gold_copy (source_id, unit_id, user_id, attempt_id, pairs, created_at)
    SELECT src.source_id, unit.id, %(user)s::integer, %(attempt)s::bigint,
           coalesce((SELECT jsonb_object_agg(c.id::text, k.known_id) FROM numbered c JOIN k ON k.n = c.n), '{{}}'),
           %(now)s::timestamptz
    FROM src, unit
    RETURNING id
), exposed AS (
    INSERT INTO exposure_exposure (person, project_id, kind, video_id, start_s, end_s, qa_pair_id, source, ref,
                                   created_at)
    SELECT %(person)s::varchar, unit.project_id, 'answer', NULL, NULL, NULL, k.qa_pair_id, 'queue', 'unit:' || unit.id, %(now)s::timestamptz
    FROM k, unit WHERE %(person)s::varchar IS NOT NULL
)
SELECT (SELECT id FROM made), (SELECT id FROM unit), (SELECT id FROM item)"""

_ONE_SOURCE = "pick AS (SELECT %(source)s::bigint AS id)"


def copy_sql(pick: str = _ONE_SOURCE) -> str:
    """The copy statement with ``pick`` as its first CTE (``pick AS (SELECT ... AS id ...)``)."""
    return _COPY_SQL.format(pick=pick)


def copy_params(*, purpose: str, user=None, attempt: Attempt | None = None, kind: str | None = None, **more) -> dict:
    """The parameters of ``copy_sql`` (``more``: those of the pick)."""
    return {
        "purpose": purpose,
        "now": timezone.now(),
        "kind": kind,
        "user": user.pk if user is not None else None,
        "attempt": attempt.pk if attempt is not None else None,
        "person": ledger.person_key(user_id=user.pk) if user is not None else None,
        **more,
    }


def make_copy(source: Source, *, user=None, attempt: Attempt | None = None, kind: str | None = None) -> Copy:
    """A new unit from ``source`` (purpose from its role) with one QA pair per known decision, restored
    to the content the first pass was shown (status draft, the same version, a ``draft`` revision by
    the same model), and, when ``kind`` is given, a queue item of that kind assigned to ``user``.
    Made now, its ids come from the same sequences as the real units made meanwhile. For a person's
    copy the source QA pairs' answers are added to their exposure ledger: they are answering them.
    One statement (``_COPY_SQL``)."""
    with connection.cursor() as cursor:
        cursor.execute(
            copy_sql(),
            copy_params(purpose=PURPOSE_OF[source.role], user=user, attempt=attempt, kind=kind, source=source.pk),
        )
        copy_id = cursor.fetchone()[0]
    return Copy.objects.get(pk=copy_id)


# ------------------------------------------------------------------------------------ admins' actions


def lift_pause(pause_id: int, admin, note: str = "", *, project: Project | None = None) -> Pause:
    """Lift an open pause: the person gets units again, and their gold accuracy window starts afresh
    (results before the lift no longer count towards a pause). Raises NotFound (no such pause, or of
    another project than ``project``), Invalid (note longer than 2,000 characters), Conflict
    (already lifted)."""
    note = (note or "").strip()
    if len(note) > NOTE_MAX:
        raise Invalid(
            f"the note is longer than {NOTE_MAX} characters", errors={"note": f"at most {NOTE_MAX} characters"}
        )
    with transaction.atomic():
        pause = Pause.objects.select_for_update().filter(pk=pause_id).first()
        if pause is None or (project is not None and pause.project_id != project.pk):
            raise NotFound("no such pause")
        if pause.lifted_at is not None:
            raise Conflict(f"this pause was already lifted on {pause.lifted_at:%Y-%m-%d %H:%M}")
        pause.lifted_at, pause.lifted_by, pause.note = timezone.now(), admin, note
        pause.save(update_fields=["lifted_at", "lifted_by", "note"])
        from annotator.gold.models import Result

        last = (
            Result.objects.filter(project_id=pause.project_id, user_id=pause.user_id)
            .order_by("-id")
            .values_list("id", flat=True)
            .first()
            or 0
        )
        Standing.objects.update_or_create(
            project_id=pause.project_id,
            user_id=pause.user_id,
            defaults={"paused": False, "pause_from": None, "window_from": last},
        )
    return pause


def grant_try(project: Project, user_id: int) -> Standing:
    """Give a person one more try at the qualification set than the policy allows. Raises NotFound
    (not a member of the project), Conflict (already qualified), Invalid (20 extra tries already)."""
    from annotator.projects.models import Membership

    if not Membership.objects.filter(project=project, user_id=user_id).exists():
        raise NotFound("no such member of this project")
    with transaction.atomic():
        standing, _ = Standing.objects.select_for_update().get_or_create(project=project, user_id=user_id)
        if standing.qualified_at is not None:
            raise Conflict("this person has already qualified")
        if standing.extra_tries >= TRIES_MAX:
            raise Invalid(f"at most {TRIES_MAX} extra tries", errors={"user": "too many tries"})
        standing.extra_tries += 1
        standing.save(update_fields=["extra_tries"])
    return standing


def exempt(project: Project, user_ids) -> int:
    """Count these people as qualified without an attempt (annotators who worked before the gate was
    turned on). Returns how many were not qualified before. Raises NotFound for a non-member."""
    from annotator.projects.models import Membership

    user_ids = sorted(set(user_ids))
    members = set(Membership.objects.filter(project=project, user_id__in=user_ids).values_list("user_id", flat=True))
    if missing := [u for u in user_ids if u not in members]:
        raise NotFound(f"user {missing[0]} is not a member of this project")
    now, made = timezone.now(), 0
    with transaction.atomic():
        for uid in user_ids:
            standing, _ = Standing.objects.select_for_update().get_or_create(project=project, user_id=uid)
            if standing.qualified_at is None:
                standing.qualified_at = now
                standing.save(update_fields=["qualified_at"])
                made += 1
    return made


def worked_before(project: Project) -> list[int]:
    """Annotators of the project who completed a pass of a real unit (to ``exempt`` them)."""
    from annotator.projects.models import Membership, Role

    annotators = Membership.objects.filter(project=project, role=Role.ANNOTATOR).values("user_id")
    return sorted(
        set(
            QueueItem.objects.filter(
                project=project, unit__purpose=WorkUnit.Purpose.REAL, completed_by__in=annotators
            ).values_list("completed_by", flat=True)
        )
    )


# ------------------------------------------------------------------------------------ the tutorial


def set_tutorial(project: Project, markdown: str) -> Policy:
    """Set the tutorial's Markdown (shown sanitised, ``annotator.markdown.render``). Raises Invalid
    when it is longer than 100,000 characters (nothing saved)."""
    if not isinstance(markdown, str) or len(markdown) > TUTORIAL_MAX:
        raise Invalid(f"the tutorial is longer than {TUTORIAL_MAX:,} characters", errors={"tutorial": "too long"})
    with transaction.atomic():
        policy, _ = Policy.objects.select_for_update().get_or_create(project=project)
        policy.tutorial = markdown
        policy.save(update_fields=["tutorial", "updated_at"])
    return policy


def add_example(project: Project, unit_id: int, user=None) -> Source:
    """Make verified unit ``unit_id`` a tutorial example: a source of role example and its copy (a unit
    of purpose example) shown on the tutorial page with each QA pair's expected decision. Raises
    Invalid when the unit is not a verified real unit of the project (``make_sources``)."""
    with transaction.atomic():
        source = make_sources(project, Source.Role.EXAMPLE, 1, user=user, unit_ids=[unit_id])[0]
        make_copy(source)
    return source


def remove_example(project: Project, source_id: int) -> None:
    """Take an example off the tutorial (its rows are kept, inactive). Raises NotFound."""
    if not Source.objects.filter(pk=source_id, project=project, role=Source.Role.EXAMPLE).update(active=False):
        raise NotFound("no such example")


def set_explanation(project: Project, known_id: int, text: str) -> Known:
    """Set the tutorial's explanation of one example QA pair's expected decision. Raises NotFound (not
    an example pair of the project), Invalid (longer than 4,000 characters)."""
    text = (text or "").strip()
    if len(text) > EXPLANATION_MAX:
        raise Invalid(
            f"the explanation is longer than {EXPLANATION_MAX} characters",
            errors={"explanation": f"at most {EXPLANATION_MAX} characters"},
        )
    known = Known.objects.filter(pk=known_id, source__project=project, source__role=Source.Role.EXAMPLE).first()
    if known is None:
        raise NotFound("no such example QA pair")
    known.explanation = text
    known.save(update_fields=["explanation"])
    return known
