"""The rows of an export: the verified QA pairs read in keyset pages and built into ``row_schema()``
rows (``iter_rows``), the filters, and the ``Media`` hook that media cutting plugs into."""

from __future__ import annotations

import bisect
import hashlib
import hmac
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import orjson
from django.conf import settings
from django.db import connection

from annotator.projects.models import Project
from annotator.qa.exports.schema import NO_FLOAT, NO_INT, PARTS

CHUNK_ROWS = 5000


_CACHE_MAX = 20000  # videos / groups kept between chunks; cleared past this (memory stays bounded)


@dataclass(frozen=True)
class Filters:
    """The export's filters (each None for no filter); the same as the API's ``ExportFilterIn``."""

    qa_type: str | None = None
    provenance: str | None = None
    source: str | None = None
    illumination: str | None = None


_ROWS_SQL = """
SELECT q.id, t.slug, t.set_kind, t.answer_kind, t.paired, q.question, q.answer, q.options::text, q.answer_index,
       q.answer_start_s, q.answer_end_s, q.clip_start_s, q.clip_end_s, q.videos::text, q.provenance,
       to_char(q.verified_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
       q.video_id, u.group_id, d.question, d.answer, r.pipeline, r.model
FROM qa_qapair q
JOIN qa_qatype t ON t.id = q.qa_type_id
JOIN qa_workunit u ON u.id = q.unit_id
{video_join}
LEFT JOIN drafts_draft d ON d.id = q.draft_id
LEFT JOIN drafts_draftjob j ON j.id = d.job_id
LEFT JOIN drafts_draftrun r ON r.id = j.run_id
WHERE q.project_id = %(project)s AND q.status = 'verified' AND q.id > %(after)s {where}
ORDER BY q.id LIMIT %(limit)s"""


# The people's verifying revisions (keep, modify, add) of a page's pairs: one range scan of the
# qa_pair_id index instead of one probe per pair (pairs of other projects in the range are ignored).
_REVISIONS_SQL = """
SELECT qa_pair_id, actor_user_id FROM qa_revision
WHERE qa_pair_id BETWEEN %s AND %s AND actor_user_id IS NOT NULL AND action IN ('keep', 'modify', 'add')"""


_VIDEO_SQL = """
SELECT id, sha256, filename, duration_s, fps, width, height, illumination, source, original, rendition,
       difficulty, domain, scenario, view, extra::text
FROM media_video WHERE id = ANY(%s)"""


_MEMBERS_SQL = """
SELECT g.id, g.kind, g.name, g.params::text, m.role, m.position, m.offset_s, m.video_id
FROM media_videogroup g JOIN media_videogroupmember m ON m.group_id = g.id
WHERE g.id = ANY(%s) ORDER BY g.id, m.role, m.position"""


def _filters_sql(filters: Filters) -> tuple[str, str, dict]:
    # Only the benchmark's own units: gold, qualification and tutorial copies (issue 20) never leave.
    where, params, video_join = (
        ["NOT EXISTS (SELECT 1 FROM qa_workunit w WHERE w.id = q.unit_id AND w.purpose <> 'real')"],
        {},
        "",
    )
    if filters.qa_type:
        where.append("t.slug = %(qa_type)s")
        params["qa_type"] = filters.qa_type
    if filters.provenance:
        where.append("q.provenance = %(provenance)s")
        params["provenance"] = filters.provenance
    if filters.source or filters.illumination:
        video_join = "JOIN media_video v ON v.id = q.video_id"
        if filters.source:
            where.append("v.source = %(source)s")
            params["source"] = filters.source
        if filters.illumination:
            where.append("v.illumination = %(illumination)s")
            params["illumination"] = filters.illumination
    return video_join, "".join(" AND " + w for w in where), params


def count_rows(project: Project, filters: Filters = Filters()) -> int:
    """How many QA pairs an export with ``filters`` holds (one query; for a progress bar)."""
    video_join, where, params = _filters_sql(filters)
    sql = (
        f"SELECT count(*) FROM qa_qapair q JOIN qa_qatype t ON t.id = q.qa_type_id {video_join} "
        f"WHERE q.project_id = %(project)s AND q.status = 'verified' {where}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {**params, "project": project.pk})
        return cursor.fetchone()[0]


def max_options(project: Project, filters: Filters) -> int:
    """The most options any multiple-choice item of the export has (one query)."""
    video_join, where, params = _filters_sql(filters)
    sql = (
        f"SELECT coalesce(max(jsonb_array_length(q.options)), 0) FROM qa_qapair q "
        f"JOIN qa_qatype t ON t.id = q.qa_type_id {video_join} WHERE q.project_id = %(project)s "
        f"AND q.status = 'verified' AND jsonb_typeof(q.options) = 'array' {where}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {**params, "project": project.pk})
        return cursor.fetchone()[0]


def _pseudonymiser():
    key = hashlib.sha256(("annotator-pseudonym:" + settings.PSEUDONYM_KEY).encode()).digest()
    cache: dict[int, str] = {}

    def pseudonym(user_id: int) -> str:  # the same as selectors.pseudonym, cached per person
        name = cache.get(user_id)
        if name is None:
            name = cache[user_id] = "ann-" + hmac.new(key, str(user_id).encode(), hashlib.sha256).hexdigest()[:12]
        return name

    return pseudonym


def _num(value, default=NO_FLOAT) -> float:
    return float(value) if value is not None else default


def _metadata(difficulty, domain, scenario, view, extra_text) -> str:
    extra = orjson.loads(extra_text) if extra_text else {}
    meta = {
        **extra,
        "difficulty": difficulty or None,
        "domain": domain or None,
        "scenario": scenario or None,
        "view": view or None,
    }
    return orjson.dumps(meta, option=orjson.OPT_SORT_KEYS).decode()


class Media:
    """Where rows' media paths come from. The base class exports no media (every ``media_path`` is
    ``""``); ``ClipMedia`` cuts clips."""

    enabled = False

    def clip(self, video: dict, start_s: float, end_s: float) -> str:
        """A handle for ``video``'s (a record of ``_load_videos``) clip ``start_s``..``end_s`` seconds,
        or "" for none."""
        return ""

    def resolve(self, handle: str) -> str:
        """The path to write for a handle from ``clip`` once ``flush`` ran ("" if it failed)."""
        return ""

    def flush(self) -> None:
        """Make every clip named since the last flush exist (called before a chunk of rows is written)."""


def _add_parts(rows: list[dict], project_id: int) -> None:
    if not PARTS or not rows:
        return
    first, last = rows[0]["id"], rows[-1]["id"]
    for part in PARTS.values():
        values = part.fetch(project_id, first, last)
        for row in rows:
            row[part.name] = values.get(row["id"], part.default)


def iter_rows(
    project: Project, filters: Filters = Filters(), *, media: Media | None = None, chunk_rows: int = CHUNK_ROWS
) -> Iterator[dict]:
    """Yield the export rows (``ROW_SCHEMA``, README "Export schema") of the project's verified QA
    pairs matching ``filters``, by id.

    Steps, per page of ``chunk_rows`` pairs (one indexed query: id after the previous page's last):
    the videos and groups not yet seen are read in one query each (kept in bounded caches), the
    rows are built, ``media.flush()`` cuts the page's clips, then the rows are yielded with their
    media paths (a clip that failed has ``""``). Memory holds one page, whatever the export's size.
    Pages are separate statements, so rows verified during a long export may or may not be in it
    (each row is whole)."""
    media = media or Media()
    video_join, where, params = _filters_sql(filters)
    sql = _ROWS_SQL.format(video_join=video_join, where=where)
    pseudonym = _pseudonymiser()
    videos: dict[int, dict] = {}
    groups: dict[int, dict] = {}
    annotators: dict[tuple, list[str]] = {}  # sets of verifiers (few) -> their sorted pseudonyms
    slug = project.slug
    for chunk, revisions in _pages(sql, {**params, "project": project.pk}, chunk_rows):
        if len(videos) > _CACHE_MAX:
            videos.clear()
        if len(groups) > _CACHE_MAX:
            groups.clear()
        group_ids = {r[17] for r in chunk if r[17] is not None and r[17] not in groups}
        _load_groups(group_ids, groups)
        want = {r[16] for r in chunk}
        for r in chunk:
            if r[13] and r[13] != "[]":
                want.update(v.get("video_id") for v in orjson.loads(r[13]) if isinstance(v, dict))
        for gid in {r[17] for r in chunk if r[17] is not None}:
            want.update(m["video_id"] for m in groups[gid]["members"])
        _load_videos({v for v in want if isinstance(v, int) and v not in videos}, videos)
        if not media.enabled and not PARTS:  # each row built as it is read, so it dies young (cheap for the GC)
            for r in chunk:
                yield _build(r, slug, videos, groups, media, pseudonym, annotators, revisions)[0]
        else:
            built = [_build(r, slug, videos, groups, media, pseudonym, annotators, revisions) for r in chunk]
            _add_parts([row for row, _ in built], project.pk)
            media.flush()
            for row, paths in built:
                for target, key, clip in paths:
                    target[key] = media.resolve(clip) if clip else ""
                yield row
        if len(annotators) > _CACHE_MAX:
            annotators.clear()


def _pages(sql: str, params: dict, chunk_rows: int) -> Iterator[tuple[list[tuple], dict[int, list[int]]]]:
    """The rows of ``sql`` page by page (keyset: ``id > %(after)s ... LIMIT %(limit)s``), each with
    the user ids of the verifying revisions of its pairs ({qa id: [user id, ...]}).

    Each page is a small indexed query: nothing is sorted or held open between pages (a server-side
    cursor outside a transaction is WITH HOLD, so Postgres would materialise the whole result first),
    and no page costs enough to be JIT-compiled (that alone took 2.8 s of a 100k export). Outside a
    transaction a reader thread with its own connection fetches the next page while the caller
    builds this one (at most 2 pages wait); inside one (the caller's snapshot, e.g. a test) pages
    are read on the caller's connection in turn."""

    def fetch(after: int) -> tuple[list[tuple], dict[int, list[int]]]:
        revisions: dict[int, list[int]] = {}
        with connection.cursor() as cursor:  # the calling thread's own connection
            cursor.execute(sql, {**params, "after": after, "limit": chunk_rows})
            rows = cursor.fetchall()
            if rows:
                cursor.execute(_REVISIONS_SQL, [rows[0][0], rows[-1][0]])
                for qa_id, user_id in cursor.fetchall():
                    revisions.setdefault(qa_id, []).append(user_id)
        return rows, revisions

    if connection.in_atomic_block:
        after = 0
        while (page := fetch(after))[0]:
            yield page
            after = page[0][-1][0]
        return

    pages: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                pages.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def reader() -> None:
        try:
            with connection.cursor() as cursor:  # this connection only: small pages want neither
                cursor.execute("SET jit = off")
                cursor.execute("SET max_parallel_workers_per_gather = 0")
            after = 0
            while True:
                page = fetch(after)
                if not put(page) or not page[0]:
                    return
                after = page[0][-1][0]
        except Exception as exc:  # noqa: BLE001  (handed to the caller, raised there)
            put(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=reader, name="export-pages", daemon=True)
    thread.start()
    try:
        while True:
            try:
                chunk = pages.get(timeout=1.0)
            except queue.Empty:
                if not thread.is_alive():
                    raise RuntimeError("the export's page reader stopped without a reason") from None
                continue
            if isinstance(chunk, BaseException):
                raise chunk
            if not chunk[0]:
                return
            yield chunk
    finally:
        stop.set()
        thread.join()


def _load_videos(ids: set[int], videos: dict[int, dict]) -> None:
    if not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(_VIDEO_SQL, [list(ids)])
        for (
            vid,
            sha,
            filename,
            duration,
            fps,
            width,
            height,
            illumination,
            source,
            original,
            rendition,
            difficulty,
            domain,
            scenario,
            view,
            extra,
        ) in cursor.fetchall():
            public = {
                "id": vid,
                "sha256": sha,
                "filename": filename,
                "duration_s": _num(duration),
                "fps": _num(fps),
                "width": width if width is not None else NO_INT,
                "height": height if height is not None else NO_INT,
                "illumination": illumination or "",
                "source": source,
                "storage_path": original or "",
                "metadata": _metadata(difficulty, domain, scenario, view, extra),
            }
            # Built once per video and shared by its rows (orjson writes a shared dict like any other).
            videos[vid] = {
                "public": public,
                "member": {k: v for k, v in public.items() if k != "metadata"},
                "source_file": rendition or original or "",
                "sha256": sha,
                "filename": filename,
                "id": vid,
                "duration_s": public["duration_s"],
            }


def _load_groups(ids: set[int], groups: dict[int, dict]) -> None:
    if not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(_MEMBERS_SQL, [list(ids)])
        for gid, kind, name, params, role, position, offset_s, video_id in cursor.fetchall():
            group = groups.setdefault(
                gid,
                {
                    "kind": kind,
                    "name": name,
                    "params": orjson.dumps(orjson.loads(params or "{}"), option=orjson.OPT_SORT_KEYS).decode(),
                    "members": [],
                },
            )
            group["members"].append(
                {"role": role, "position": position, "offset_s": float(offset_s), "video_id": video_id}
            )


_EMPTY_GROUP = {"kind": "", "name": "", "params": "{}", "members": []}


_EMPTY_DRAFT = {"question": "", "answer": "", "pipeline": "", "model": ""}


def _members(group: dict, videos: dict, c_start: float, c_end: float, media: Media, paths: list) -> list[dict]:
    """The group's members for a row whose clip is ``c_start``..``c_end`` seconds, with the clip handle
    of each member's range appended to ``paths``; without media the same list serves every row."""
    if not media.enabled:
        shared = group.get("shared")
        if shared is None:
            shared = group["shared"] = [
                {
                    "role": m["role"],
                    "position": m["position"],
                    "offset_s": m["offset_s"],
                    **videos[m["video_id"]]["member"],
                    "media_path": "",
                }
                for m in group["members"]
            ]
        return shared
    life_log = group["kind"] == "life_log"
    members = []
    for m in group["members"]:
        record = videos[m["video_id"]]
        out = {
            "role": m["role"],
            "position": m["position"],
            "offset_s": m["offset_s"],
            **record["member"],
            "media_path": "",
        }
        if life_log:
            # A part at virtual offset o covering [o, o + d] shows the overlap of the clip's virtual range.
            a, b = max(c_start - m["offset_s"], 0.0), min(c_end - m["offset_s"], record["duration_s"])
        else:  # day-night and ego-exo: member time = day (ego) time + offset_s
            a, b = max(c_start + m["offset_s"], 0.0), max(c_end + m["offset_s"], 0.0)
        if b > a:
            paths.append((out, "media_path", media.clip(record, a, b)))
        members.append(out)
    return members


def _segments(group: dict, videos: dict, c_start: float, c_end: float, media: Media, paths: list) -> list[dict]:
    """The parts of life log ``group`` that the virtual range ``c_start``..``c_end`` (seconds after the
    log's start) covers, in order, each with the local range of its video (``start_s``..``end_s``,
    seconds in the part's own video), the virtual range it shows, and the clip handle of that local
    range appended to ``paths`` (with media). Gaps between parts have no segment (X-LeBench seed 002
    Sec. 3: time not recorded). The parts' order and ends are kept on the group (bisect per row)."""
    parts = group.get("parts")
    if parts is None:
        parts = group["parts"] = sorted(
            ((m["offset_s"], m["position"], videos[m["video_id"]]) for m in group["members"] if m["role"] == "part"),
            key=lambda p: (p[0], p[1]),
        )
        group["part_ends"] = [o + max(record["duration_s"], 0.0) for o, _, record in parts]
    out = []
    for offset, position, record in parts[bisect.bisect_right(group["part_ends"], c_start) :]:
        if offset >= c_end:
            break
        a, b = max(c_start - offset, 0.0), min(c_end - offset, max(record["duration_s"], 0.0))
        if b <= a:
            continue
        segment = {
            "position": position,
            "video_id": record["id"],
            "sha256": record["sha256"],
            "filename": record["filename"],
            "start_s": a,
            "end_s": b,
            "virtual_start_s": offset + a,
            "virtual_end_s": offset + b,
            "media_path": "",
        }
        if media.enabled:
            paths.append((segment, "media_path", media.clip(record, a, b)))
        out.append(segment)
    return out


def _labelled(text: str, videos: dict, media: Media, paths: list) -> list[dict]:
    """``QAPair.videos`` (JSON text) as rows' ``videos``: each labelled video with its sha256, filename
    and the clip handle of its range appended to ``paths``."""
    out_list = []
    for item in orjson.loads(text):
        if not isinstance(item, dict):
            continue
        record = videos.get(item.get("video_id"))
        start, end = _num(item.get("start_s")), _num(item.get("end_s"))
        out = {
            "label": str(item.get("label", "")),
            "video_id": item.get("video_id") or NO_INT,
            "role": str(item.get("role") or ""),
            "start_s": start,
            "end_s": end,
            "sha256": record["sha256"] if record else "",
            "filename": record["filename"] if record else "",
            "media_path": "",
        }
        if record is not None and media.enabled:
            a, b = max(start, 0.0), (end if end > 0 else record["duration_s"])
            if b > a:
                paths.append((out, "media_path", media.clip(record, a, b)))
        out_list.append(out)
    return out_list


def _build(r, slug, videos, groups, media: Media, pseudonym, annotators: dict, revisions: dict) -> tuple[dict, list]:
    """One row from one SQL row, plus the media paths to fill in once clips exist:
    [(dict, key, clip handle)] (empty without media)."""
    (
        qa_id,
        qa_type,
        set_kind,
        answer_kind,
        paired,
        question,
        answer,
        options,
        answer_index,
        a_start,
        a_end,
        c_start,
        c_end,
        labelled,
        provenance,
        verified_at,
        video_id,
        group_id,
        d_question,
        d_answer,
        pipeline,
        model,
    ) = r
    users = revisions.get(qa_id, ())
    record = videos[video_id]
    paths: list = []
    group_out = _EMPTY_GROUP
    life_log = False
    segments: list[dict] = []
    if group_id is not None:
        group = groups[group_id]
        life_log = group["kind"] == "life_log"
        group_out = {
            "kind": group["kind"],
            "name": group["name"],
            "params": group["params"],
            "members": _members(group, videos, c_start, c_end, media, paths),
        }
        if life_log:
            segments = _segments(group, videos, c_start, c_end, media, paths)
    key = tuple(sorted(set(users)))
    names = annotators.get(key)
    if names is None:
        names = annotators[key] = sorted({pseudonym(u) for u in key})
    row = {
        "id": qa_id,
        "project": slug,
        "qa_type": qa_type,
        "set_kind": set_kind or "",
        "answer_kind": answer_kind,
        "paired": bool(paired and group_id is not None),
        "question": question,
        "answer": answer,
        "options": orjson.loads(options) if options and options != "null" else [],
        "answer_index": answer_index if answer_index is not None else NO_INT,
        "answer_start_s": _num(a_start),
        "answer_end_s": _num(a_end),
        "clip_start_s": c_start,
        "clip_end_s": c_end,
        "video": record["public"],
        "media_path": "",
        "media_segments": segments,
        "group": group_out,
        "videos": _labelled(labelled, videos, media, paths) if labelled and labelled != "[]" else [],
        "provenance": provenance,
        "draft": {"question": d_question, "answer": d_answer, "pipeline": pipeline or "", "model": model or ""}
        if d_question is not None
        else _EMPTY_DRAFT,
        "annotators": names,
        "verifications": len(users),
        "verified_at": verified_at or "",
    }
    if media.enabled and not life_log:
        paths.append((row, "media_path", media.clip(record, c_start, c_end)))
    return row, paths
