"""Exports of a project's verified QA pairs that model-evaluation toolkits load as they are (issue 11).

One row shape for every format (``ROW_SCHEMA``, README "Export schema"): every key in every row,
always of the same type, no nulls (absent values are ``""``, ``-1`` or ``-1.0``, empty lists), and
free-form metadata (a video's manifest keys, a night recipe, a group's params) as ONE JSON string,
so that pyarrow and Hugging Face ``datasets`` infer the same types for every export, whatever QA
types it holds. Rows are read in keyset pages of 5,000 (one indexed query each; outside a
transaction a reader thread fetches the next page meanwhile), so memory holds about a page at any
size, and are serialised by orjson (``bench/export.py`` measures it).

Writers, one per ``--format`` of ``manage.py export_qa``:

- ``jsonl``: one row a line (the default), plus a dataset card beside it (README.md with the
  ``datasets`` YAML header: a config named by the data's content hash, its data_files and the
  dataset_info features, which type every file of the folder alike, empty lists included).
- ``parquet``: the same rows under the explicit ``ROW_SCHEMA`` in ``data/`` (the Hub layout), the card
  in the folder above.
- ``vlmevalkit``: VLMEvalKit's Video-MCQ TSV (index, question, A, B, ..., answer letter, video, ...)
  and the video dataset class that reads it (``export_files/vlmevalkit_dataset.py``).
- ``lmms-eval``: a task folder: ``<task>.yaml`` (paths relative to it), ``<task>.jsonl`` and the
  ``utils.py`` it names (``export_files/lmms_eval_utils.py``); only with media.

Paired items (EgoNight seed 000 Sec. 3.2, Fig. 3: "the same question-answer applies to both day and
night clips") expand into one evaluation item for the day clip and one for the night clip in the two
toolkit formats; the dataset formats keep one row per QA pair with the group's members.

Media (``--with-media DIR``): each (video, clip range) is cut once by ffmpeg into
``DIR/<sha256[:16]>_<start_ms>-<end_ms>.mp4`` (a clip already there is reused) and rows carry its
path relative to the export. A clip that cannot be cut fails alone: its rows get an empty path and
the failure is listed in ``ExportResult.media_failures``. A life-log item's clip is in virtual
seconds over parts with gaps between them (X-LeBench seed 002 Sec. 3), which no one video holds: its
row's ``media_path`` is ``""`` and ``media_segments`` lists, in order, each part the range covers
with its local range and the clip cut from it (every other row has ``[]``).
"""

from __future__ import annotations

import bisect
import csv
import gc
import hashlib
import hmac
import io
import os
import queue
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from django.conf import settings
from django.db import connection

from annotator.projects.models import Project

FORMATS = ("jsonl", "parquet", "vlmevalkit", "lmms-eval")
CHUNK_ROWS = 5000
_CACHE_MAX = 20000  # videos / groups kept between chunks; cleared past this (memory stays bounded)

# What "absent" is in a row: no value is ever null (see the module docstring).
NO_INT = -1
NO_FLOAT = -1.0


def _schema():
    """The pyarrow schema of an export row (``ROW_SCHEMA``); built lazily so that importing this
    module does not import pyarrow."""
    import pyarrow as pa

    video_fields = [
        ("id", pa.int64()), ("sha256", pa.string()), ("filename", pa.string()), ("duration_s", pa.float64()),
        ("fps", pa.float64()), ("width", pa.int64()), ("height", pa.int64()), ("illumination", pa.string()),
        ("source", pa.string()), ("storage_path", pa.string()), ("metadata", pa.string()),
    ]
    member = pa.struct([("role", pa.string()), ("position", pa.int64()), ("offset_s", pa.float64()),
                        *video_fields[:10], ("media_path", pa.string())])
    segment = pa.struct([("position", pa.int64()), ("video_id", pa.int64()), ("sha256", pa.string()),
                         ("filename", pa.string()), ("start_s", pa.float64()), ("end_s", pa.float64()),
                         ("virtual_start_s", pa.float64()), ("virtual_end_s", pa.float64()), ("media_path", pa.string())])
    labelled = pa.struct([("label", pa.string()), ("video_id", pa.int64()), ("role", pa.string()),
                          ("start_s", pa.float64()), ("end_s", pa.float64()), ("sha256", pa.string()),
                          ("filename", pa.string()), ("media_path", pa.string())])
    return pa.schema([
        ("id", pa.int64()), ("project", pa.string()), ("qa_type", pa.string()), ("set_kind", pa.string()),
        ("answer_kind", pa.string()), ("paired", pa.bool_()), ("question", pa.string()), ("answer", pa.string()),
        ("options", pa.list_(pa.string())), ("answer_index", pa.int64()),
        ("answer_start_s", pa.float64()), ("answer_end_s", pa.float64()),
        ("clip_start_s", pa.float64()), ("clip_end_s", pa.float64()),
        ("video", pa.struct(video_fields)), ("media_path", pa.string()), ("media_segments", pa.list_(segment)),
        ("group", pa.struct([("kind", pa.string()), ("name", pa.string()), ("params", pa.string()),
                             ("members", pa.list_(member))])),
        ("videos", pa.list_(labelled)),
        ("provenance", pa.string()),
        ("draft", pa.struct([("question", pa.string()), ("answer", pa.string()), ("pipeline", pa.string()),
                             ("model", pa.string())])),
        ("annotators", pa.list_(pa.string())), ("verifications", pa.int64()), ("verified_at", pa.string()),
    ])


def row_schema():
    """The explicit pyarrow schema of every export row (Parquet is written under it)."""
    global _ROW_SCHEMA
    if _ROW_SCHEMA is None:
        _ROW_SCHEMA = _schema()
    return _ROW_SCHEMA


_ROW_SCHEMA = None


# ---------------------------------------------------------------------------------------------
# Reading rows


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
    where, params, video_join = [], {}, ""
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
    sql = (f"SELECT count(*) FROM qa_qapair q JOIN qa_qatype t ON t.id = q.qa_type_id {video_join} "
           f"WHERE q.project_id = %(project)s AND q.status = 'verified' {where}")
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
    meta = {**extra, "difficulty": difficulty or None, "domain": domain or None, "scenario": scenario or None,
            "view": view or None}
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


def iter_rows(project: Project, filters: Filters = Filters(), *, media: Media | None = None,
              chunk_rows: int = CHUNK_ROWS) -> Iterator[dict]:
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
        if not media.enabled:  # each row built as it is read, so it dies young (cheap for the GC)
            for r in chunk:
                yield _build(r, slug, videos, groups, media, pseudonym, annotators, revisions)[0]
        else:
            built = [_build(r, slug, videos, groups, media, pseudonym, annotators, revisions) for r in chunk]
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
        for (vid, sha, filename, duration, fps, width, height, illumination, source, original, rendition, difficulty,
             domain, scenario, view, extra) in cursor.fetchall():
            public = {
                "id": vid, "sha256": sha, "filename": filename, "duration_s": _num(duration), "fps": _num(fps),
                "width": width if width is not None else NO_INT, "height": height if height is not None else NO_INT,
                "illumination": illumination or "", "source": source, "storage_path": original or "",
                "metadata": _metadata(difficulty, domain, scenario, view, extra),
            }
            # Built once per video and shared by its rows (orjson writes a shared dict like any other).
            videos[vid] = {"public": public, "member": {k: v for k, v in public.items() if k != "metadata"},
                           "source_file": rendition or original or "", "sha256": sha, "filename": filename, "id": vid,
                           "duration_s": public["duration_s"]}


def _load_groups(ids: set[int], groups: dict[int, dict]) -> None:
    if not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(_MEMBERS_SQL, [list(ids)])
        for gid, kind, name, params, role, position, offset_s, video_id in cursor.fetchall():
            group = groups.setdefault(gid, {"kind": kind, "name": name,
                                            "params": orjson.dumps(orjson.loads(params or "{}"),
                                                                   option=orjson.OPT_SORT_KEYS).decode(),
                                            "members": []})
            group["members"].append({"role": role, "position": position, "offset_s": float(offset_s),
                                     "video_id": video_id})


_EMPTY_GROUP = {"kind": "", "name": "", "params": "{}", "members": []}
_EMPTY_DRAFT = {"question": "", "answer": "", "pipeline": "", "model": ""}


def _members(group: dict, videos: dict, c_start: float, c_end: float, media: Media, paths: list) -> list[dict]:
    """The group's members for a row whose clip is ``c_start``..``c_end`` seconds, with the clip handle
    of each member's range appended to ``paths``; without media the same list serves every row."""
    if not media.enabled:
        shared = group.get("shared")
        if shared is None:
            shared = group["shared"] = [{"role": m["role"], "position": m["position"], "offset_s": m["offset_s"],
                                         **videos[m["video_id"]]["member"], "media_path": ""} for m in group["members"]]
        return shared
    life_log = group["kind"] == "life_log"
    members = []
    for m in group["members"]:
        record = videos[m["video_id"]]
        out = {"role": m["role"], "position": m["position"], "offset_s": m["offset_s"], **record["member"],
               "media_path": ""}
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
            key=lambda p: (p[0], p[1]))
        group["part_ends"] = [o + max(record["duration_s"], 0.0) for o, _, record in parts]
    out = []
    for offset, position, record in parts[bisect.bisect_right(group["part_ends"], c_start):]:
        if offset >= c_end:
            break
        a, b = max(c_start - offset, 0.0), min(c_end - offset, max(record["duration_s"], 0.0))
        if b <= a:
            continue
        segment = {"position": position, "video_id": record["id"], "sha256": record["sha256"],
                   "filename": record["filename"], "start_s": a, "end_s": b, "virtual_start_s": offset + a,
                   "virtual_end_s": offset + b, "media_path": ""}
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
        out = {"label": str(item.get("label", "")), "video_id": item.get("video_id") or NO_INT,
               "role": str(item.get("role") or ""), "start_s": start, "end_s": end,
               "sha256": record["sha256"] if record else "", "filename": record["filename"] if record else "",
               "media_path": ""}
        if record is not None and media.enabled:
            a, b = max(start, 0.0), (end if end > 0 else record["duration_s"])
            if b > a:
                paths.append((out, "media_path", media.clip(record, a, b)))
        out_list.append(out)
    return out_list


def _build(r, slug, videos, groups, media: Media, pseudonym, annotators: dict, revisions: dict) -> tuple[dict, list]:
    """One row from one SQL row, plus the media paths to fill in once clips exist:
    [(dict, key, clip handle)] (empty without media)."""
    (qa_id, qa_type, set_kind, answer_kind, paired, question, answer, options, answer_index, a_start, a_end,
     c_start, c_end, labelled, provenance, verified_at, video_id, group_id, d_question, d_answer, pipeline, model) = r
    users = revisions.get(qa_id, ())
    record = videos[video_id]
    paths: list = []
    group_out = _EMPTY_GROUP
    life_log = False
    segments: list[dict] = []
    if group_id is not None:
        group = groups[group_id]
        life_log = group["kind"] == "life_log"
        group_out = {"kind": group["kind"], "name": group["name"], "params": group["params"],
                     "members": _members(group, videos, c_start, c_end, media, paths)}
        if life_log:
            segments = _segments(group, videos, c_start, c_end, media, paths)
    key = tuple(sorted(set(users)))
    names = annotators.get(key)
    if names is None:
        names = annotators[key] = sorted({pseudonym(u) for u in key})
    row = {
        "id": qa_id, "project": slug, "qa_type": qa_type, "set_kind": set_kind or "", "answer_kind": answer_kind,
        "paired": bool(paired and group_id is not None), "question": question, "answer": answer,
        "options": orjson.loads(options) if options and options != "null" else [],
        "answer_index": answer_index if answer_index is not None else NO_INT,
        "answer_start_s": _num(a_start), "answer_end_s": _num(a_end), "clip_start_s": c_start, "clip_end_s": c_end,
        "video": record["public"], "media_path": "", "media_segments": segments, "group": group_out,
        "videos": _labelled(labelled, videos, media, paths) if labelled and labelled != "[]" else [],
        "provenance": provenance,
        "draft": {"question": d_question, "answer": d_answer, "pipeline": pipeline or "", "model": model or ""}
        if d_question is not None else _EMPTY_DRAFT,
        "annotators": names, "verifications": len(users), "verified_at": verified_at or "",
    }
    if media.enabled and not life_log:
        paths.append((row, "media_path", media.clip(record, c_start, c_end)))
    return row, paths


# ---------------------------------------------------------------------------------------------
# Media


@dataclass
class ExportResult:
    """What an export wrote: ``rows`` (QA pairs), ``items`` (rows of the written file, after
    expansion), ``files`` (paths), ``clips_cut`` / ``clips_reused``, and ``media_failures``
    (``"<clip>: <reason>"``), ``skipped`` (QA pairs a format cannot hold, with the reason)."""

    rows: int = 0
    items: int = 0
    files: list[Path] = field(default_factory=list)
    clips_cut: int = 0
    clips_reused: int = 0
    media_failures: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


def clip_name(sha256: str, start_s: float, end_s: float) -> str:
    """A clip's file name: ``<sha256[:16]>_<start_ms>-<end_ms>.mp4`` (content hash, not the
    filename, which is not unique; ms rounded)."""
    return f"{sha256[:16]}_{round(start_s * 1000)}-{round(end_s * 1000)}.mp4"


class ClipMedia(Media):
    """Clips cut by ffmpeg into ``folder`` (from the stored rendition, else the original, through
    ``media.services.local_copy``), each once: a clip already in the folder is reused. Paths in
    rows are relative to ``relative_to`` (the export's folder). Cutting runs one ffmpeg per CPU;
    ``adapters.ffmpeg.clip_args`` re-encodes frame-exact H.264 with +faststart, no audio."""

    def __init__(self, folder: Path, relative_to: Path, result: ExportResult, *, max_height: int | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.prefix = os.path.relpath(self.folder.resolve(), Path(relative_to).resolve())
        self.result = result
        self.max_height = max_height or settings.MEDIA_RENDITION_MAX_HEIGHT
        self.pending: dict[str, tuple[dict, float, float]] = {}
        self.done: dict[str, bool] = {}  # name -> cut (True) or failed (False); bounded like the caches

    enabled = True

    def clip(self, video: dict, start_s: float, end_s: float) -> str:
        name = clip_name(video["sha256"], start_s, end_s)
        if name not in self.done and name not in self.pending:
            self.pending[name] = (video, start_s, end_s)
        return name

    def resolve(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.done.get(name) else ""

    def flush(self) -> None:
        if not self.pending:
            return
        if len(self.done) > _CACHE_MAX:
            self.done = {}
        todo = []
        for name, spec in self.pending.items():
            if (self.folder / name).is_file() and (self.folder / name).stat().st_size > 0:
                self.done[name] = True
                self.result.clips_reused += 1
            else:
                todo.append((name, spec))
        self.pending = {}
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for name, error in pool.map(self._cut, todo):
                self.done[name] = error is None
                if error is None:
                    self.result.clips_cut += 1
                else:
                    self.result.media_failures.append(f"{name}: {error}")

    def _cut(self, item: tuple[str, tuple[dict, float, float]]) -> tuple[str, str | None]:
        from annotator.adapters import ffmpeg
        from annotator.media.services import local_copy

        name, (video, a, b) = item
        what = f"clip {a:.3f}-{b:.3f} s of {video['filename']} (video {video['id']})"
        if not video["source_file"]:
            return name, f"{what}: the video has no stored file"
        tmp = self.folder / f".{name}.part"
        try:
            with local_copy(video["source_file"]) as src:
                ffmpeg.run(ffmpeg.clip_args(src, tmp, start_s=a, end_s=b, max_height=self.max_height),
                           timeout_s=ffmpeg.timeout_for(b - a), what=what)
            if not tmp.is_file() or tmp.stat().st_size == 0:
                return name, f"{what}: ffmpeg wrote nothing"
            os.replace(tmp, self.folder / name)  # a reader never sees a half-written clip
            return name, None
        except (ffmpeg.MediaError, OSError) as exc:
            return name, str(exc)
        finally:
            tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# Writers


def _dumps(row: dict) -> bytes:
    return orjson.dumps(row) + b"\n"


def jsonl_chunks(rows: Iterable[dict]) -> Iterator[bytes]:
    """JSONL bytes of ``rows``, about 1 MB at a time (for files and streamed responses)."""
    buf, size = [], 0
    for row in rows:
        line = orjson.dumps(row) + b"\n"
        buf.append(line)
        size += len(line)
        if size >= 1 << 20:
            yield b"".join(buf)
            buf, size = [], 0
    if buf:
        yield b"".join(buf)


def _atomic(path: Path):
    """A temporary file beside ``path``; rename it over ``path`` once complete (see ``_commit``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.part")


def write_jsonl(rows: Iterable[dict], out: Path | io.BufferedIOBase, result: ExportResult) -> None:
    """Write ``rows`` as JSONL to the file ``out`` (atomically) or to a binary stream."""
    if not isinstance(out, Path):
        for chunk in jsonl_chunks(_counted(rows, result)):
            out.write(chunk)
        return
    tmp = _atomic(out)
    try:
        with open(tmp, "wb") as f:
            for chunk in jsonl_chunks(_counted(rows, result)):
                f.write(chunk)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    result.files.append(out)


def _counted(rows: Iterable[dict], result: ExportResult) -> Iterator[dict]:
    for row in rows:
        result.rows += 1
        result.items += 1
        yield row


def write_parquet(rows: Iterable[dict], out: Path, result: ExportResult, *, batch_rows: int = 20000) -> None:
    """Write ``rows`` as Parquet under the explicit ``row_schema()`` (zstd), atomically, in row
    groups of ``batch_rows`` (memory is bounded by one batch)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = row_schema()
    tmp = _atomic(out)
    try:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            batch = []
            for row in _counted(rows, result):
                batch.append(row)
                if len(batch) >= batch_rows:
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                    batch = []
            if batch or result.rows == 0:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    result.files.append(out)


CARD_MARK = "<!-- written by annotator export_qa -->"


def _yaml_feature(name: str | None, typ) -> dict:
    """A ``datasets`` YAML feature (dataset_info.features) for a pyarrow type: ``dtype`` for
    scalars, ``struct`` for structs and ``list`` for lists (read by datasets 2.x and current)."""
    import pyarrow as pa

    out: dict = {"name": name} if name is not None else {}
    if pa.types.is_struct(typ):
        out["struct"] = [_yaml_feature(typ.field(i).name, typ.field(i).type) for i in range(typ.num_fields)]
    elif pa.types.is_list(typ):
        inner = _yaml_feature(None, typ.value_type)
        out["list"] = inner["dtype"] if set(inner) == {"dtype"} else inner.get("struct", inner)
    else:
        out["dtype"] = {"int64": "int64", "double": "float64", "string": "string", "bool": "bool"}[str(typ)]
    return out


DATA_PATTERNS = {"jsonl": "*.jsonl", "parquet": "data/*.parquet"}


def data_fingerprint(folder: Path, pattern: str) -> str:
    """16 hex of a sha256 over the data files of an export folder that ``pattern`` matches (sorted by
    name): each file's relative path and its content's sha256. Reads every matching file once."""
    outer = hashlib.sha256()
    for path in sorted(folder.glob(pattern)):
        if not path.is_file():
            continue
        inner = hashlib.sha256()
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                inner.update(block)
        outer.update(f"{path.relative_to(folder).as_posix()}\0{inner.hexdigest()}\n".encode())
    return outer.hexdigest()[:16]


def dataset_card(project: Project, fmt: str, filters: Filters, rows: int, folder: Path) -> str:
    """README.md for an export folder: the Hugging Face ``datasets`` YAML header, then what the export
    holds. The header has one config whose ``test`` split is every ``*.jsonl`` of the folder (JSONL)
    or every ``data/*.parquet`` (Parquet, the Hub layout), the features of ``row_schema()`` (so every
    file of the folder loads under the same types, empty lists included), and a config name carrying
    the data's content hash (``qa-<data_fingerprint>``): ``datasets`` caches a folder's config by its
    name alone, so a re-export under the old name would be served the old rows from its cache."""
    import yaml

    schema = row_schema()
    pattern = DATA_PATTERNS[fmt]
    name = f"qa-{data_fingerprint(folder, pattern)}"
    header = {
        "configs": [{"config_name": name, "data_files": [{"split": "test", "path": pattern}]}],
        "dataset_info": {"config_name": name, "features": [_yaml_feature(f.name, f.type) for f in schema]},
        "tags": ["video-question-answering"],
    }
    chosen = ", ".join(f"{k}={v}" for k, v in vars(filters).items() if v) or "none"
    return (
        "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n" + CARD_MARK + "\n\n"
        f"# {project.name}: verified QA pairs\n\n"
        f"Verified QA pairs of the project `{project.slug}` ({rows} in the last export written here; filters: {chosen}).\n"
        f"Every row has every key, always of the same type and never null: absent numbers are -1 (`answer_index` "
        f"of an open-ended item, `answer_start_s`/`answer_end_s` of a non-interval item), absent text is \"\", and "
        f"free-form metadata is one JSON string (`video.metadata`, `group.params`).\n\n"
        f"The fields are documented in the platform's README (\"Export schema\"). Load with "
        f"`datasets.load_dataset(\"path/to/this/folder\", split=\"test\")`; every `{pattern}` here is part of it, "
        f"typed by the features above.\n"
    )


def write_card(folder: Path, text: str) -> Path | None:
    """Write README.md into ``folder`` unless a README.md not written by an export is there."""
    card = folder / "README.md"
    if card.exists() and CARD_MARK not in card.read_text(errors="replace"):
        return None
    card.write_text(text)
    return card


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def eval_items(rows: Iterable[dict], result: ExportResult) -> Iterator[dict]:
    """Evaluation items of export rows for the toolkit formats: a paired item (day-night group)
    becomes two, the same question of the day clip and of the night clip (EgoNight seed 000 Sec. 3.2
    and Fig. 3; Fig. 5(a) compares day and night per paired type); any other row is one item of its
    own video (a life-log item of its parts in order). Each item: the row plus ``condition``
    (``day``/``night``/``""``), ``item_video`` (the video's row fields), ``item_clip`` (start, end
    seconds of that video) and ``item_media`` (list of relative clip paths, in order)."""
    for row in rows:
        result.rows += 1
        members = row["group"]["members"]
        if row["paired"] and row["group"]["kind"] == "day_night":
            for role in ("day", "night"):
                m = next((m for m in members if m["role"] == role), None)
                if m is None:
                    continue
                yield {**row, "condition": role, "item_video": m,
                       "item_clip": (max(row["clip_start_s"] + m["offset_s"], 0.0),
                                     max(row["clip_end_s"] + m["offset_s"], 0.0)),
                       "item_media": [m["media_path"]] if m["media_path"] else []}
        elif row["group"]["kind"] == "life_log":
            yield {**row, "condition": "", "item_video": row["video"],
                   "item_clip": (row["clip_start_s"], row["clip_end_s"]),
                   "item_media": [s["media_path"] for s in row["media_segments"] if s["media_path"]]}
        else:
            yield {**row, "condition": row["video"]["illumination"], "item_video": row["video"],
                   "item_clip": (row["clip_start_s"], row["clip_end_s"]),
                   "item_media": [row["media_path"]] if row["media_path"] else []}


def _video_key(item: dict) -> str:
    a, b = item["item_clip"]
    return clip_name(item["item_video"]["sha256"], a, b)[:-4]


def write_vlmevalkit(rows: Iterable[dict], out: Path, result: ExportResult, *, max_options: int) -> None:
    """VLMEvalKit's Video-MCQ TSV (``vlmeval.smp.load`` reads it with ``pd.read_csv(sep='\\t')``):
    ``index`` (0..n-1), ``question``, one column per option letter ``A``..(``max_options`` letters,
    "" past an item's own options), ``answer`` (the letter), ``video`` (the clip's name, sha256 and
    range, without extension), ``video_path`` (relative clip path; "" without ``--with-media``),
    ``candidates`` (the lettered options "A. text" as a Python list literal, as Video-MME's TSV), ``category`` (QA
    type), ``condition`` (day/night/...), ``clip_start_s``, ``clip_end_s``, ``medias`` (for items
    whose options are videos: EgoExoBench_MCQ's list of ``{type: video, video_path, video_start,
    video_end}``, one per labelled video; else "[]"), ``qa_id``, ``provenance``.
    Only multiple-choice items: open-ended ones are counted in ``result.skipped``. Beside the TSV goes
    ``vlmevalkit_dataset.py`` (``export_files/``): the VideoBaseDataset class that hands VLMEvalKit the
    clips (its generic path would read the TSV as a text-only task)."""
    letters = LETTERS[:max(max_options, 1)]
    columns = ["index", "question", *letters, "answer", "video", "video_path", "candidates", "category", "condition",
               "clip_start_s", "clip_end_s", "medias", "qa_id", "provenance"]
    tmp = _atomic(out)
    index = 0
    try:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, delimiter="\t", lineterminator="\n")
            writer.writerow(columns)
            for item in eval_items(rows, result):
                options = item["options"]
                if not options or not 0 <= item["answer_index"] < len(options) or len(options) > len(letters):
                    result.skipped["not multiple choice"] = result.skipped.get("not multiple choice", 0) + 1
                    continue
                medias = [{"type": "video", "video_path": v["media_path"], "video_start": v["start_s"],
                           "video_end": v["end_s"]} for v in item["videos"]]
                a, b = item["item_clip"]
                writer.writerow([
                    index, item["question"], *(options[i] if i < len(options) else "" for i in range(len(letters))),
                    letters[item["answer_index"]], _video_key(item), item["item_media"][0] if item["item_media"] else "",
                    repr([f"{letters[i]}. {o}" for i, o in enumerate(options)]), item["qa_type"], item["condition"], a, b, repr(medias), item["id"],
                    item["provenance"],
                ])
                index += 1
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    shipped = out.with_name("vlmevalkit_dataset.py")
    shipped.write_bytes((FILES / "vlmevalkit_dataset.py").read_bytes())
    result.items = index
    result.files += [out, shipped]


FILES = Path(__file__).with_name("export_files")  # the files exports ship beside their data (package data)
NO_MEDIA_LMMS = ("the lmms-eval format needs the clips: give --with-media DIR (its items are videos; a task "
                 "without them fails at its first item)")


def _quoted(text: str) -> str:
    """A YAML scalar that stays a string (JSON is YAML): a task named yes or 123 stays a string."""
    return orjson.dumps(text).decode()


def write_lmms_eval(rows: Iterable[dict], folder: Path, result: ExportResult, *, task: str) -> None:
    """An lmms-eval task folder: ``<task>.jsonl`` (one evaluation item a line: ``qa_id``,
    ``qa_type``, ``condition``, ``question``, ``options``, ``answer`` (the letter for multiple
    choice, else the text), ``answer_text``, ``answer_index``, ``answer_start_s``/``answer_end_s``,
    ``clip_start_s``/``clip_end_s``, ``video`` (sha256 name), ``media`` (clip paths relative to the
    folder), ``video_labels``), ``utils.py`` (``export_files/lmms_eval_utils.py``: doc_to_visual,
    doc_to_text, process_results) and ``<task>.yaml``: ``dataset_path: json`` with
    ``dataset_kwargs.data_files`` naming the JSONL relative to the YAML (lmms-eval 0.7.3's
    ``load_yaml_config`` resolves it against the YAML's folder, so the folder can be moved), and one
    mean metric per name its items report (``lmms_eval_utils.metric_names``: overall, per QA type,
    per condition, per both)."""
    from annotator.qa.export_files.lmms_eval_utils import metric_names

    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{task}.jsonl"
    tmp = _atomic(data)
    metrics: dict[str, None] = {}  # ordered set of the metric names the items report

    def items():
        for item in eval_items(rows, result):
            options = item["options"]
            mc = bool(options) and 0 <= item["answer_index"] < len(options) <= len(LETTERS)
            a, b = item["item_clip"]
            media = item["item_media"]
            if item["videos"]:
                media = [v["media_path"] for v in item["videos"] if v["media_path"]]
            metrics.update(dict.fromkeys(metric_names(item["qa_type"], item["condition"])))
            yield {
                "qa_id": item["id"], "qa_type": item["qa_type"], "condition": item["condition"],
                "question": item["question"], "options": options if mc else [],
                "answer": LETTERS[item["answer_index"]] if mc else item["answer"], "answer_text": item["answer"],
                "answer_index": item["answer_index"] if mc else NO_INT,
                "answer_start_s": item["answer_start_s"], "answer_end_s": item["answer_end_s"],
                "clip_start_s": a, "clip_end_s": b, "video": _video_key(item), "media": media,
                "video_labels": [v["label"] for v in item["videos"]],
            }

    n = 0
    try:
        with open(tmp, "wb") as f:
            for item in items():
                f.write(_dumps(item))
                n += 1
        os.replace(tmp, data)
    finally:
        tmp.unlink(missing_ok=True)
    (folder / "utils.py").write_bytes((FILES / "lmms_eval_utils.py").read_bytes())
    names = sorted(metrics, key=lambda m: (m != "accuracy", m)) or ["accuracy"]
    config = (
        f"# lmms-eval task written by the annotator's export_qa (README: Export formats).\n"
        f"task: {_quoted(task)}\n"
        f"dataset_path: json\n"
        f"dataset_kwargs:\n"
        f"  data_files:\n"
        f"    test: {_quoted(data.name)}\n"  # relative to this YAML (lmms-eval resolves it against its folder)
        f"test_split: test\n"
        f"output_type: generate_until\n"
        f"doc_to_visual: !function utils.doc_to_visual\n"
        f"doc_to_text: !function utils.doc_to_text\n"
        f"doc_to_target: answer\n"
        f"generation_kwargs:\n"
        f"  max_new_tokens: 128\n"
        f"  temperature: 0\n"
        f"  do_sample: false\n"
        f"process_results: !function utils.process_results\n"
        f"metric_list:\n"
        + "".join(f"  - metric: {_quoted(m)}\n    aggregation: mean\n    higher_is_better: true\n" for m in names)
        + f"metadata:\n"
        f"  version: 2\n"
    )
    (folder / f"{task}.yaml").write_text(config)
    result.items = n
    result.files += [folder / f"{task}.yaml", data, folder / "utils.py"]


def max_options(project: Project, filters: Filters) -> int:
    """The most options any multiple-choice item of the export has (one query)."""
    video_join, where, params = _filters_sql(filters)
    sql = (f"SELECT coalesce(max(jsonb_array_length(q.options)), 0) FROM qa_qapair q "
           f"JOIN qa_qatype t ON t.id = q.qa_type_id {video_join} WHERE q.project_id = %(project)s "
           f"AND q.status = 'verified' AND jsonb_typeof(q.options) = 'array' {where}")
    with connection.cursor() as cursor:
        cursor.execute(sql, {**params, "project": project.pk})
        return cursor.fetchone()[0]


def export(project: Project, fmt: str, out: Path | None, *, filters: Filters = Filters(),
           media_dir: Path | None = None, stream=None, progress=None, task: str | None = None) -> ExportResult:
    """Write the export of ``project`` in format ``fmt`` (one of ``FORMATS``) to ``out`` (a file;
    for ``lmms-eval`` a folder), or JSONL to the binary ``stream`` when ``out`` is None.

    ``media_dir``: cut the rows' clips there (``ClipMedia``), paths relative to the export's folder
    (for Parquet the dataset folder above ``data/``, ``parquet_layout``).
    ``progress`` wraps the row iterator (a progress bar). Raises ValueError for an unknown format,
    a format that needs a file given none, or lmms-eval without ``media_dir`` (its items are videos),
    before anything is written. Returns an ``ExportResult``; clip failures are in it,
    never raised."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if out is None and fmt != "jsonl":
        raise ValueError(f"the {fmt} format is written to a file: give --out PATH, not '-'")
    if fmt == "lmms-eval" and media_dir is None:
        raise ValueError(NO_MEDIA_LMMS)
    result = ExportResult()
    # The objects alive before the export (Django, the libraries: hundreds of thousands) leave the
    # collector's full passes while it runs; rows die young. A 100k export took 5.4 s with them in, 5.0 s out.
    gc.freeze()
    try:
        _export(project, fmt, out, filters, media_dir, stream, progress, task, result)
    finally:
        gc.unfreeze()
    return result


def parquet_layout(out: Path) -> tuple[Path, Path]:
    """(dataset folder, file) of a Parquet export asked for at ``out``: the Hub layout, the file under
    ``data/`` of the dataset folder and the card in that folder (a pyarrow dataset over ``data/`` then
    holds only Parquet). The dataset folder is ``out``'s folder, or its parent when that is ``data``."""
    folder = out.parent.parent if out.parent.name == "data" else out.parent
    return folder, folder / "data" / out.name


def _export(project, fmt, out, filters, media_dir, stream, progress, task, result: ExportResult) -> None:
    root = None
    if fmt == "parquet":
        root, out = parquet_layout(out)
    elif out is not None:
        root = out if fmt == "lmms-eval" else out.parent
    media = ClipMedia(media_dir, root or Path.cwd(), result) if media_dir is not None else None
    rows = iter_rows(project, filters, media=media)
    if progress is not None:
        rows = progress(rows)
    if fmt == "jsonl":
        write_jsonl(rows, out if out is not None else stream, result)
    elif fmt == "parquet":
        write_parquet(rows, out, result)
    elif fmt == "vlmevalkit":
        write_vlmevalkit(rows, out, result, max_options=max_options(project, filters))
    else:
        write_lmms_eval(rows, out, result, task=task or f"{project.slug}_qa".replace("-", "_"))
    if fmt in ("jsonl", "parquet") and out is not None:
        card = write_card(root, dataset_card(project, fmt, filters, result.rows, root))
        if card is not None:
            result.files.append(card)
