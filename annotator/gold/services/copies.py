"""Copies: a new ``qa.WorkUnit`` (purpose gold, qualification or example) with new QA pairs restored
to the content the first pass was shown (status draft), made in one statement, so its unit, QA pair
and queue item ids come from the same sequences as real units' (issue 20, section 2)."""

from __future__ import annotations

from django.db import connection
from django.utils import timezone

from annotator.exposure import ledger
from annotator.gold.models import (
    Attempt,
    Copy,
    Source,
)
from annotator.qa.models import WorkUnit

PURPOSE_OF = {
    Source.Role.GOLD: WorkUnit.Purpose.GOLD,
    Source.Role.QUALIFICATION: WorkUnit.Purpose.QUALIFICATION,
    Source.Role.EXAMPLE: WorkUnit.Purpose.EXAMPLE,
}


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
