"""Recording what a person was shown, and asking whether an item's truth follows from it (issue 19).

Callers describe what they show as ``Shown`` values and what an item's truth rests on as ``Needs``;
this module knows nothing of queues or studies beyond that.

- ``record(person, project_id, shown, source=, ref=)`` appends what one queue unit or study trial
  showed to the ledger (``models.Exposure``), each video as its source footage.
- ``Ledger.of(person, project_id)`` loads a person's rows once; ``Ledger.refusal(needs)`` says why
  an item must not be served to them, or None. An item is refused when

  * its truth is an order of events (ordering items) and footage overlapping its range was played
    to them: on the same footage, a rendition derived from it, or a day-night or ego-exo partner
    (the range mapped through the group's offsets: member time = reference time + offset_s, see
    ``media.models.VideoGroup``);
  * its truth is a QA pair's answer and that pair was shown with its answer, or (for open answers)
    with its answer among options.

- ``Pending`` is the same test the other way round: whether showing something would give away an
  item the person still has to answer (an open trial elsewhere).

Times are seconds of the video; a range of (None, None) is the whole video.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.utils import timezone

from annotator.exposure.models import Exposure

FOOTAGE, FRAMES, ANSWER, OPTIONS, QUESTION = (
    Exposure.Kind.FOOTAGE,
    Exposure.Kind.FRAMES,
    Exposure.Kind.ANSWER,
    Exposure.Kind.OPTIONS,
    Exposure.Kind.QUESTION,
)

# Refusal reasons, in words (stored on ``Refusal.reason``, counted in reports).
FOOTAGE_PLAYED = "footage played to them"
ANSWER_SHOWN = "answer shown to them"
OPTIONS_SHOWN = "options shown to them"
WOULD_PLAY_OPEN = "plays footage of an open trial"
WOULD_SHOW_OPEN = "shows the answer of an open trial"
REASONS = (FOOTAGE_PLAYED, ANSWER_SHOWN, OPTIONS_SHOWN, WOULD_PLAY_OPEN, WOULD_SHOW_OPEN)

Range = tuple[int, float | None, float | None]  # (video id, start_s, end_s)


def person_key(*, user_id: int | None = None, pseudonym: str = "") -> str:
    """The ledger's name of a person: ``user:<id>`` for an account, ``anon:<pseudonym>`` for an
    anonymous panel participant. Raises ValueError when neither is given."""
    if user_id is not None:
        return f"user:{user_id}"
    if pseudonym:
        return f"anon:{pseudonym}"
    raise ValueError("a person is an account (user_id) or a pseudonymised external id")


@dataclass(frozen=True)
class Shown:
    """One thing put in front of a person: ``kind`` (``Exposure.Kind``), the video and range
    (seconds; None, None: the whole video) for footage and frames, the QA pair for the others."""

    kind: str
    video_id: int | None = None
    start_s: float | None = None
    end_s: float | None = None
    qa_pair_id: int | None = None


@dataclass(frozen=True)
class Needs:
    """What an item's truth rests on: ``order_of`` (footage ranges whose order of events is the
    truth: an ordering item's clip) and ``answer_of`` (a QA pair whose answer is the truth), with
    ``options_give_away`` when seeing the answer among options gives it away too (open answers)."""

    order_of: tuple[Range, ...] = ()
    answer_of: int | None = None
    options_give_away: bool = False

    def __bool__(self) -> bool:
        return bool(self.order_of) or self.answer_of is not None


def roots(video_ids: Iterable[int]) -> dict[int, int]:
    """Video id -> the source footage it shows (``derived_from``, or itself)."""
    from annotator.media.models import Video

    ids = {v for v in video_ids if v is not None}
    return {vid: root or vid for vid, root in Video.objects.filter(pk__in=ids).values_list("id", "derived_from_id")}


# One statement: the rows shown (``{shown}``: ``record``'s arrays, or ``record_rows``'s query),
# each video mapped to its source footage (as ``roots``) by a join, duplicates (after the mapping)
# written once, in the order given. ``guarded``: an optional data-modifying CTE (``record``'s
# ``guard``); with one, rows are written only if it returned a row.
_SHOWN_ARRAYS = """unnest(%(kinds)s::varchar[], %(videos)s::bigint[], %(starts)s::float8[], %(ends)s::float8[],
                %(pairs)s::bigint[]) WITH ORDINALITY"""
_RECORD_SQL = """
WITH {guard_cte} rows AS (
    SELECT s.kind, COALESCE(v.derived_from_id, s.video_id) AS video_id, s.start_s, s.end_s, s.qa_pair_id,
           min(s.n) AS n
    FROM {shown} AS s(kind, video_id, start_s, end_s, qa_pair_id, n)
    LEFT JOIN {video} v ON v.id = s.video_id
    {guard_from}
    GROUP BY 1, 2, 3, 4, 5
), written AS (
    INSERT INTO {exposure} (person, project_id, kind, video_id, start_s, end_s, qa_pair_id, source, ref, created_at)
    SELECT %(person)s, %(project)s, kind, video_id, start_s, end_s, qa_pair_id, %(source)s, %(ref)s, %(now)s
    FROM rows ORDER BY n
    RETURNING 1
)
SELECT {guard_count}, (SELECT count(*) FROM written)"""


def record(
    person: str,
    project_id: int,
    shown: Iterable[Shown],
    *,
    source: str,
    ref: str,
    guard: tuple[str, dict] | None = None,
) -> tuple[bool, int] | int:
    """Append ``shown`` to the ledger as shown to ``person`` by ``ref`` (``unit:<id>`` or
    ``trial:<id>``) from ``source`` (``Exposure.Source``), each video as its source footage;
    duplicates within the call are written once. One statement. Returns rows written.

    ``guard``: (SQL of a data-modifying statement with ``RETURNING``, its parameters named
    ``%(guard_...)s`` in a dict) run in the same statement, the rows written only if it returned a
    row (a trial's first serving stamp, say: the stamp and the rows together or neither, without
    a transaction). Returns (whether it returned a row, rows written) then."""
    shown = list(dict.fromkeys(shown))
    if not shown and guard is None:
        return 0

    # One Python type per array (psycopg refuses a list mixing ints and floats: 0 and 12.5, say).
    def ints(values):
        return [None if v is None else int(v) for v in values]

    def floats(values):
        return [None if v is None else float(v) for v in values]

    arrays = {
        "kinds": [str(x.kind) for x in shown],
        "videos": ints(x.video_id for x in shown),
        "starts": floats(x.start_s for x in shown),
        "ends": floats(x.end_s for x in shown),
        "pairs": ints(x.qa_pair_id for x in shown),
    }
    matched, written = _write(_SHOWN_ARRAYS, arrays, person, project_id, source, ref, guard)
    return (matched > 0, written) if guard is not None else written


def record_rows(person: str, project_id: int, rows_sql: str, rows_params: dict, *, source: str, ref: str) -> int:
    """As ``record``, for what a query selects instead of ``Shown`` values: the reads of what was
    shown and the write in one statement (a queue claim's exposure, ``qa.queue.record_exposure``).

    ``rows_sql``: a SELECT of (kind varchar, video_id bigint, start_s float8, end_s float8,
    qa_pair_id bigint, n bigint), ``n`` the order to write them in; its parameters named
    ``%(rows_...)s`` in ``rows_params`` (ValueError otherwise). Returns rows written."""
    if any(not name.startswith("rows_") for name in rows_params):
        raise ValueError("the rows' parameters are named rows_...")
    return _write(f"({rows_sql})", rows_params, person, project_id, source, ref, None)[1]


def _write(shown_sql: str, shown_params: dict, person, project_id, source, ref, guard) -> tuple[int, int]:
    """Run ``_RECORD_SQL`` with ``shown_sql`` as its rows: (rows the guard returned, rows written)."""
    from django.db import connection

    from annotator.media.models import Video

    quote = connection.ops.quote_name
    params = {
        **shown_params,
        "person": person,
        "project": project_id,
        "source": source,
        "ref": ref,
        "now": timezone.now(),
    }
    parts = {
        "shown": shown_sql,
        "video": quote(Video._meta.db_table),
        "exposure": quote(Exposure._meta.db_table),
        "guard_cte": "",
        "guard_from": "",
        "guard_count": "1",
    }
    if guard is not None:
        guard_sql, guard_params = guard
        if any(not name.startswith("guard_") for name in guard_params):
            raise ValueError("a guard's parameters are named guard_...")
        params.update(guard_params)
        parts.update(
            guard_cte=f"guarded AS ({guard_sql}),",
            guard_from="WHERE EXISTS (SELECT 1 FROM guarded)",
            guard_count="(SELECT count(*) FROM guarded)",
        )
    with connection.cursor() as cursor:
        cursor.execute(_RECORD_SQL.format(**parts), params)
        return cursor.fetchone()


def _overlaps(a1, b1, a2, b2) -> bool:
    """Whether two ranges in seconds share time (None bounds: open, i.e. the whole video)."""
    lo1, hi1 = (float("-inf") if a1 is None else a1), (float("inf") if b1 is None else b1)
    lo2, hi2 = (float("-inf") if a2 is None else a2), (float("inf") if b2 is None else b2)
    return lo1 < hi2 and lo2 < hi1


def family(ranges: Iterable[Range]) -> list[Range]:
    """``ranges`` as ranges of source footage, with the same moments on every day-night and
    ego-exo partner of their videos (member time = reference time + offset_s). Life-log parts are
    different moments and are not partners."""
    from annotator.media.models import VideoGroup, VideoGroupMember

    ranges = list(ranges)
    if not ranges:
        return []
    root = roots(v for v, _, _ in ranges)
    ids = set(root) | set(root.values())
    memberships = list(
        VideoGroupMember.objects.filter(
            video_id__in=ids, group__kind__in=[VideoGroup.Kind.DAY_NIGHT, VideoGroup.Kind.EGO_EXO]
        ).values_list("group_id", "video_id", "offset_s")
    )
    members = defaultdict(list)
    for gid, vid, off in VideoGroupMember.objects.filter(group_id__in={m[0] for m in memberships}).values_list(
        "group_id", "video_id", "offset_s"
    ):
        members[gid].append((vid, off))
    partner_root = roots(v for ms in members.values() for v, _ in ms)
    out = []
    for video, a, b in ranges:
        r = root.get(video, video)
        out.append((r, a, b))
        for gid, member, offset in memberships:
            if member not in (video, r):
                continue
            for other, other_offset in members[gid]:
                if other == member:
                    continue
                shift = other_offset - offset
                out.append(
                    (partner_root.get(other, other), None if a is None else a + shift, None if b is None else b + shift)
                )
    return list(dict.fromkeys(out))


@dataclass
class Ledger:
    """A person's exposures in one project, loaded once: footage ranges played per source video,
    and the QA pairs shown with their answer or among options."""

    played: dict[int, list[tuple[float | None, float | None]]] = field(default_factory=lambda: defaultdict(list))
    answers: set[int] = field(default_factory=set)
    options: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, person: str, project_id: int) -> Ledger:
        """The ledger of ``person`` in the project (one statement)."""
        return cls.from_rows(cls.rows(person, project_id))

    @staticmethod
    def rows(person: str, project_id: int):
        """The query of the rows ``of`` reads: (kind, video id, start_s, end_s, QA pair id), for a
        caller that reads them with something else in one statement (``from_rows`` then)."""
        return (
            Exposure.objects.filter(person=person, project_id=project_id, kind__in=[FOOTAGE, ANSWER, OPTIONS])
            .order_by()
            .values_list("kind", "video_id", "start_s", "end_s", "qa_pair_id")
        )

    @classmethod
    def from_rows(cls, rows: Iterable[tuple]) -> Ledger:
        """A ledger of rows as ``rows`` reads them."""
        ledger = cls()
        for kind, video, a, b, pair in rows:
            if kind == FOOTAGE and video is not None:
                ledger.played[video].append((a, b))
            elif kind == ANSWER and pair is not None:
                ledger.answers.add(pair)
            elif kind == OPTIONS and pair is not None:
                ledger.options.add(pair)
        return ledger

    @classmethod
    def from_shown(cls, shown: Iterable[Shown]) -> Ledger:
        """A ledger of someone shown ``shown`` (to ask what a study or the queues would give away)."""
        shown = list(shown)
        root = roots(s.video_id for s in shown if s.kind == FOOTAGE)
        ledger = cls()
        for s in shown:
            if s.kind == FOOTAGE and s.video_id is not None:
                ledger.played[root.get(s.video_id, s.video_id)].append((s.start_s, s.end_s))
            elif s.kind == ANSWER and s.qa_pair_id is not None:
                ledger.answers.add(s.qa_pair_id)
            elif s.kind == OPTIONS and s.qa_pair_id is not None:
                ledger.options.add(s.qa_pair_id)
        return ledger

    def refusal(self, needs: Needs) -> str | None:
        """Why an item with ``needs`` must not be served to this person (a reason of ``REASONS``),
        or None."""
        if needs.answer_of is not None:
            if needs.answer_of in self.answers:
                return ANSWER_SHOWN
            if needs.options_give_away and needs.answer_of in self.options:
                return OPTIONS_SHOWN
        if needs.order_of and self.played:
            for video, a, b in family(needs.order_of):
                if any(_overlaps(a, b, pa, pb) for pa, pb in self.played.get(video, ())):
                    return FOOTAGE_PLAYED
        return None


@dataclass
class Pending:
    """What a person's open trials rest on (their ``Needs``), to ask whether showing something
    would give one away."""

    order_of: dict[int, list[tuple[float | None, float | None]]] = field(default_factory=lambda: defaultdict(list))
    answers: set[int] = field(default_factory=set)
    open_answers: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, needs: Iterable[Needs]) -> Pending:
        pending = cls()
        for n in needs:
            for video, a, b in family(n.order_of):
                pending.order_of[video].append((a, b))
            if n.answer_of is not None:
                pending.answers.add(n.answer_of)
                if n.options_give_away:
                    pending.open_answers.add(n.answer_of)
        return pending

    def refusal(self, shown: Iterable[Shown]) -> str | None:
        """Why showing ``shown`` would give away an open trial (a reason of ``REASONS``), or None."""
        shown = list(shown)
        root = roots(s.video_id for s in shown if s.kind == FOOTAGE)
        for s in shown:
            if s.kind == FOOTAGE and s.video_id is not None:
                if any(
                    _overlaps(s.start_s, s.end_s, a, b)
                    for a, b in self.order_of.get(root.get(s.video_id, s.video_id), ())
                ):
                    return WOULD_PLAY_OPEN
            elif s.kind == ANSWER and s.qa_pair_id in self.answers:
                return WOULD_SHOW_OPEN
            elif s.kind == OPTIONS and s.qa_pair_id in self.open_answers:
                return WOULD_SHOW_OPEN
        return None
