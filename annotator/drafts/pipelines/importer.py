"""Import existing QA pairs or model predictions from a JSONL file as drafts, with their
provenance (issue 10, pipeline ``import``). It calls no model, so it needs no server.

``python manage.py draft --project SLUG --pipeline import --file PATH`` (the file is read on the
machine running the command; the API refuses a ``file`` parameter). One JSON object a line, UTF-8;
blank lines are skipped; at most ``MAX_ROWS`` rows and ``MAX_BYTES`` bytes. Two shapes of row:

* **The platform's own export** (``export_qa``, README "Export schema"): ``video`` is an object
  with ``sha256`` and ``filename``, ``clip`` is {start_s, end_s}, ``answer_start_s``/``answer_end_s``
  are -1.0 for an item without an interval answer; ``id``, ``project``, ``provenance`` and ``draft``
  {pipeline, model} are kept as the draft's provenance.
* **A QA pair or a prediction from elsewhere**::

      {"video": SHA256 | FILENAME | {"sha256": ..., "filename": ...},
       "qa_type": SLUG, "question": TEXT,
       "answer": TEXT  or  "prediction": TEXT (a model's answer; for a multiple-choice item its letter
                                                 "B" or the option's text),
       "options": [TEXT, ...] | null, "answer_index": INT | null,
       "clip": {"start_s": S, "end_s": S} | "clip_start_s"/"clip_end_s" (seconds; default the whole video),
       "answer_start_s": S, "answer_end_s": S (the interval answer of an interval QA type; then
                                                 "answer"/"prediction" may be "" or absent),
       "set_kind": "" | "ego_exo" | "life_log", "answer_kind": "text" | "interval" (optional: the kinds
                                                 of a QA type the import creates),
       "id": the original id, "model": the model that wrote it,
       "videos": [{"label": "Video 1", "video": SHA256 | FILENAME | {...}  or  "video_id": ID,
                   "role": "query" | "reference" | "candidate", "start_s": S, "end_s": S}, ...] | absent}

``videos`` are the labelled videos of an item whose options are videos (EgoExoBench seed 001 Fig. 2:
a query or reference video and candidates "Video 1", "Video 2", ...): at most
``MAX_LABELLED_VIDEOS``, labels unique, each a video of the project, its range (default the whole
video) within it. When some are candidates, ``options`` are exactly the candidates' labels in the
order listed and the answer names one of them; otherwise the options are free text that may
mention the labels ("In Video 1 ..."). They are kept on the draft (``params["videos"]``) and on its
QA pair (``QAPair.videos``, with ``video_id``) as [{label, video_id, role, start_s, end_s}].

A row names its video by SHA-256 of content (64 hex digits; decides when given) or by file name
within the project. Every draft keeps its provenance in ``Draft.params``: ``imported_from`` (the
file's name), ``file_sha256``, ``line`` (1-based), ``kind`` (``qa`` or ``prediction``),
``original_id``, ``model`` and, for export rows, ``original`` {project, provenance, pipeline,
verified_at}. Imported pairs are machine drafts (status ``draft``), served to the first pass like
any other. Unknown QA types are created (whole-video clip policy) with the ``set_kind`` and
``answer_kind`` their rows declare (default one video, text answers).

**Interval answers** (temporal localisation, X-LeBench seed 002 App. C.1): a row of a QA type whose
``answer_kind`` is ``interval`` must give ``answer_start_s`` < ``answer_end_s`` (seconds from 0 in the
unit's time base, within the unit), and a row of a text QA type must not give one. They are kept in
the draft's ``params["answer_start_s"/"answer_end_s"]``, which become the QA pair's interval when
its unit opens (``qa.services.open_units_for_drafts``); without text, the answer reads
"12.00-15.50 s". **Life logs**: a row of a life-log QA type (``set_kind`` life_log) names the log's
first part as its video, as the export does; its clip and interval are virtual seconds after the
log's start and must lie within the log's span (from 0 to the end of its last part; the shortest
log when that video leads several, as each gets the draft), and its draft opens a unit over the
whole log. A row of a life-log type whose video leads no life log is malformed.

Validation, all at start (``clean_params``), before anything is written:

* A malformed line (not JSON, not an object, a missing or wrong field, bad options, a clip outside
  its video or log, an interval answer missing, outside the unit, or given to a text QA type,
  ``set_kind``/``answer_kind`` other than the project's QA type's) refuses the whole file: Invalid
  naming each bad line by number (the first ``MAX_ERRORS_SHOWN``) and how many there are. Nothing
  is written, not even QA types.
* A row naming an unknown video (no such sha256 or file name in the project, a file name shared by
  several videos, a video that failed to ingest) is reported per line in the run's
  ``params["unknown_videos"]`` (the first ``MAX_UNKNOWN_SHOWN``; ``unknown_rows`` counts them all)
  and left out; the other rows are imported. If no row names a usable video, Invalid.

The rows are stored per video in Django storage under ``imports/<project id>/<random>/`` (the
run's ``params["stored"]``; ``index.json`` maps video ids to row counts), where each video's job
reads its own. Each video's drafts are written in one transaction (whole or not at all). A line of
the same file (by its SHA-256) already imported into the project is not imported again, so
re-running an import, or resuming it, adds only what is missing (``already_imported``).

Summary per video: ``imported``, ``predictions`` (of them), ``already_imported``.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotator.drafts.models import Draft
from annotator.drafts.pipelines.base import JobContext, PipelineDef, Result, register, require
from annotator.drafts.templates import DraftSpec
from annotator.errors import Invalid
from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.qa import services as qa_services
from annotator.qa.models import QAType
from annotator.qa.services import MAX_TEXT, check_options, interval_answer_text, life_log_span

MAX_ROWS = 100_000
MAX_BYTES = 256 * 1024 * 1024
MAX_ERRORS_SHOWN = 20
MAX_UNKNOWN_SHOWN = 100
SHA256 = re.compile(r"^[0-9a-f]{64}$")
SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,64}$")
LETTER = re.compile(r"^\(?([A-Za-z])\)?[.):]?$")
MAX_LABELLED_VIDEOS = 10
LABEL_MAX = 40
VIDEO_ROLES = ("query", "reference", "candidate")
SET_KINDS = tuple(QAType.SetKind.values)
ANSWER_KINDS = tuple(QAType.AnswerKind.values)


class RowError(ValueError):
    """What is wrong with one row, in plain words (the caller adds the line number)."""


def _text(row: dict, key: str, *, required: bool = True) -> str | None:
    value = row.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise RowError(f"{key} must be a non-empty text")
    if len(value) > MAX_TEXT:
        raise RowError(f"{key} is longer than {MAX_TEXT} characters")
    return value.strip()


def _seconds(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e7:
        raise RowError(f"{what} must be a number of seconds from 0")
    return float(value)


def _video_ref(value) -> dict:
    """{"sha256": ...} or {"filename": ...} from a row's ``video``."""
    if isinstance(value, str) and value.strip():
        value = value.strip()
        return {"sha256": value.lower()} if SHA256.match(value.lower()) else {"filename": value}
    if isinstance(value, dict):
        sha, name = value.get("sha256"), value.get("filename")
        if isinstance(sha, str) and SHA256.match(sha.strip().lower()):
            return {"sha256": sha.strip().lower()}
        if isinstance(name, str) and name.strip():
            return {"filename": name.strip()}
    raise RowError("video must be a SHA-256, a file name, or an object with sha256 or filename")


def _clip(row: dict) -> tuple[float, float] | None:
    clip = row.get("clip")
    if clip is not None:
        if not isinstance(clip, dict):
            raise RowError("clip must be an object with start_s and end_s")
        start, end = clip.get("start_s"), clip.get("end_s")
    else:
        start, end = row.get("clip_start_s"), row.get("clip_end_s")
        if start is None and end is None:
            return None
    start, end = _seconds(start, "clip start_s"), _seconds(end, "clip end_s")
    if end <= start:
        raise RowError("the clip must end after it starts")
    return start, end


def _interval(row: dict) -> tuple[float, float] | None:
    """A row's interval answer ``answer_start_s``/``answer_end_s`` (seconds in the unit's time base),
    or None when absent (missing, null, or the export's -1.0 for a non-interval item). Raises RowError
    for one without the other, a value that is not a number of seconds from 0, or end <= start."""
    start, end = row.get("answer_start_s"), row.get("answer_end_s")
    if (
        start in (None, -1, -1.0)
        and end in (None, -1, -1.0)
        and not isinstance(start, bool)
        and not isinstance(end, bool)
    ):
        return None
    if start is None or end is None:
        raise RowError("an interval answer needs both answer_start_s and answer_end_s")
    start, end = _seconds(start, "answer_start_s"), _seconds(end, "answer_end_s")
    if end <= start:
        raise RowError("the answer interval must end after it starts (answer_end_s > answer_start_s)")
    return start, end


def _kind(row: dict, key: str, allowed: tuple[str, ...]) -> str | None:
    value = row.get(key)
    if value is None:
        return None
    if value not in allowed:
        raise RowError(f"{key} must be one of {', '.join(repr(a) for a in allowed)}")
    return value


def _labelled_videos(value, options) -> list[dict] | None:
    """A row's ``videos`` (see the module docstring) as [{label, video (a ref as ``_video_ref``) or
    video_id, role, range: [start_s, end_s] | None}], checked for shape; None when absent. The
    videos and their ranges are checked against the project in ``Import._resolve``."""
    if value is None or value == []:  # the export writes [] for items without labelled videos
        return None
    if not isinstance(value, list) or len(value) > MAX_LABELLED_VIDEOS:
        raise RowError(f"videos must be a list of at most {MAX_LABELLED_VIDEOS} labelled videos")
    out, seen = [], set()
    for k, entry in enumerate(value, start=1):
        if not isinstance(entry, dict):
            raise RowError(f"videos[{k}] must be an object with label, video, role")
        label = entry.get("label")
        if not isinstance(label, str) or not label.strip() or len(label.strip()) > LABEL_MAX:
            raise RowError(f"videos[{k}].label must be a non-empty text of at most {LABEL_MAX} characters")
        label = label.strip()
        if " ".join(label.lower().split()) in seen:
            raise RowError(f"videos: the label {label!r} is used twice")
        seen.add(" ".join(label.lower().split()))
        if entry.get("role") not in VIDEO_ROLES:
            raise RowError(f"videos[{k}].role must be one of {', '.join(VIDEO_ROLES)}")
        vid = entry.get("video_id")
        if entry.get("video") is None and isinstance(vid, int) and not isinstance(vid, bool) and 0 < vid < 2**63:
            ref = {"id": vid}
        else:
            try:
                ref = _video_ref(entry.get("video"))
            except RowError:
                raise RowError(
                    f"videos[{k}] ({label}) must name its video: video (a SHA-256 or file name) or video_id"
                ) from None
        span = None
        if entry.get("start_s") is not None or entry.get("end_s") is not None:
            span = (_seconds(entry.get("start_s"), f"{label} start_s"), _seconds(entry.get("end_s"), f"{label} end_s"))
            if span[1] <= span[0]:
                raise RowError(f"{label} must end after it starts")
        out.append({"label": label, "video": ref, "role": entry["role"], "range": span})
    candidates = [v["label"] for v in out if v["role"] == "candidate"]
    if candidates and (options is None or [o.strip() for o in options] != candidates):
        raise RowError("options must be the candidate videos' labels in the order listed: " + ", ".join(candidates))
    return out


def parse_row(row) -> dict:
    """One line's object as the normalized row the jobs read; raises RowError saying what is wrong.

    Returns {"video": {"sha256"} | {"filename"}, "qa_type", "question", "answer", "options",
    "answer_index", "clip": [start_s, end_s] | None, "interval": [start_s, end_s] | None, "set_kind"
    and "answer_kind" (as the row declares them, or None), "kind": "qa" | "prediction",
    "original_id", "model", "original": {...} | None}. Whether the interval suits the QA type and lies
    within the unit is checked in ``Import._resolve``."""
    if not isinstance(row, dict):
        raise RowError("a row must be a JSON object")
    video = _video_ref(row.get("video"))
    qa_type = row.get("qa_type")
    if not isinstance(qa_type, str) or not SLUG.match(qa_type.strip()):
        raise RowError("qa_type must be a slug (letters, digits, - and _; at most 64)")
    question = _text(row, "question")
    interval = _interval(row)
    kind = "prediction" if row.get("prediction") is not None else "qa"
    key = "prediction" if kind == "prediction" else "answer"
    if interval is not None and row.get(key) in (None, ""):  # an interval answer needs no text
        answer = interval_answer_text(*interval)
    else:
        answer = _text(row, key)
    options, index = row.get("options"), row.get("answer_index")
    if options == [] and index in (None, -1):  # the export's open item (it writes no nulls: [] and -1)
        options, index = None, None
    truth_index = None
    if options is not None:
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise RowError("options must be a list of texts")
        options = [o.strip() for o in options]
        if any(len(o) > MAX_TEXT for o in options):
            raise RowError(f"an option is longer than {MAX_TEXT} characters")
        if kind == "prediction":  # the row's answer_index is the truth; the draft is the model's choice
            truth_index, index = index, None
        if index is None:  # the choice named by its text or letter
            letter = LETTER.match(answer)
            by_text = [
                i for i, o in enumerate(options) if " ".join(o.lower().split()) == " ".join(answer.lower().split())
            ]
            if by_text:
                index = by_text[0]
            elif letter and ord(letter.group(1).upper()) - 65 < len(options):
                index = ord(letter.group(1).upper()) - 65
            else:
                raise RowError(
                    f"the {'prediction' if kind == 'prediction' else 'answer'} is neither an option's "
                    f"letter nor one of the options"
                )
    errors: dict[str, str] = {}
    check_options(options, index, "row", errors)
    if options is None and index is not None:
        errors["row.options"] = "answer_index needs options"
    if errors:
        raise RowError("; ".join(errors.values()))
    if options is not None:
        if kind == "qa" and " ".join(answer.lower().split()) != " ".join(options[index].lower().split()):
            raise RowError(f"answer is not the option at answer_index {index}")
        answer = options[index]
    videos = _labelled_videos(row.get("videos"), options)
    original_id = row.get("id")
    if isinstance(original_id, bool) or not (
        original_id is None
        or isinstance(original_id, int)
        or (isinstance(original_id, str) and len(original_id) <= 200)
    ):
        raise RowError("id must be a number or a text of at most 200 characters")
    draft = row.get("draft") if isinstance(row.get("draft"), dict) else None
    model = row.get("model", draft.get("model") if draft else None)
    if model == "":  # the export writes "" for no model
        model = None
    if model is not None and (not isinstance(model, str) or len(model) > 200):
        raise RowError("model must be a text of at most 200 characters")
    exported = isinstance(row.get("video"), dict) and "provenance" in row
    original = None
    if exported:
        original = {
            "project": row.get("project"),
            "provenance": row.get("provenance"),
            "pipeline": (draft.get("pipeline") or None) if draft else None,
            "verified_at": row.get("verified_at"),
        }
    elif isinstance(truth_index, int) and not isinstance(truth_index, bool):
        original = {"truth_index": truth_index}
    return {
        "video": video,
        "qa_type": qa_type.strip(),
        "question": question,
        "answer": answer,
        "options": options,
        "answer_index": index,
        "clip": _clip(row),
        "interval": interval,
        "set_kind": _kind(row, "set_kind", SET_KINDS),
        "answer_kind": _kind(row, "answer_kind", ANSWER_KINDS),
        "kind": kind,
        "original_id": original_id,
        "model": model,
        "original": original,
        "videos": videos,
    }


def _lines(path: Path, digest):
    """(line number, text) of the file's non-blank lines (text None for a line that is not UTF-8),
    feeding every byte to ``digest``."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            digest.update(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield number, None
                continue
            if text.strip():
                yield number, text


def _resolve_labelled(videos, project, by_sha, by_name, by_id) -> list[dict] | None:
    """A row's labelled videos (``_labelled_videos``) as stored: [{label, video_id, role, start_s,
    end_s}], each a usable video of ``project`` with its range within it (default the whole video).
    Raises RowError naming the label."""
    if not videos:
        return None
    out = []
    for v in videos:
        ref, label = v["video"], v["label"]
        if "id" in ref:
            video, shown = by_id.get(ref["id"]), f"id {ref['id']}"
        elif "sha256" in ref:
            video, shown = by_sha.get(ref["sha256"]), ref["sha256"]
        else:
            named = by_name.get(ref["filename"], [])
            if len(named) > 1:
                raise RowError(f"{label}: {len(named)} videos are named {ref['filename']}: name it by its sha256")
            video, shown = (named[0] if named else None), ref["filename"]
        if video is None:
            raise RowError(f"{label}: no video {shown} in project {project.slug}")
        if video.status == Video.Status.FAILED or not video.duration_s:
            raise RowError(f"{label}: video {video.filename} has no usable footage (failed or not probed)")
        start, end = v["range"] or (0.0, video.duration_s)
        if end > video.duration_s + 1e-6:
            raise RowError(f"{label}: {start:g}-{end:g} s is not within {video.filename} ({video.duration_s:g} s)")
        out.append({"label": label, "video_id": video.pk, "role": v["role"], "start_s": start, "end_s": end})
    return out


def _type_kinds(types: dict[str, tuple[str, str, int | None]], row: dict, number: int) -> tuple[str, str]:
    """(set_kind, answer_kind) of the row's QA type: the project's QA type's, else as the row declares
    them (the export's ``set_kind``/``answer_kind``; default one video, text answers), the same for
    every row of a new type (``types`` learns new types, with the line that declared them). Raises
    RowError when the row declares kinds other than the type's."""
    slug, declared = row["qa_type"], (row["set_kind"], row["answer_kind"])
    if slug not in types:
        types[slug] = (declared[0] or QAType.SetKind.VIDEO, declared[1] or QAType.AnswerKind.TEXT, number)
    set_kind, answer_kind, line = types[slug]
    where = f"as line {line} declares it" if line is not None else "in this project"
    shown = {"": "one video", "ego_exo": "an ego-exo set", "life_log": "a life log"}
    if declared[0] is not None and declared[0] != set_kind:
        raise RowError(f"qa_type {slug} is asked of {shown[set_kind]} {where}, not of {shown[declared[0]]}")
    if declared[1] is not None and declared[1] != answer_kind:
        raise RowError(f"qa_type {slug} has {answer_kind} answers {where}, not {declared[1]} answers")
    return set_kind, answer_kind


class Import(PipelineDef):
    name = "import"
    label = "import QA pairs or predictions from JSONL"
    position = 60
    in_form = False  # the draft command's: it reads a JSONL file on the server
    stages = ()

    def clean_params(self, project, params: dict) -> dict:
        """Read and check the whole file, resolve its videos and store its rows per video; see the
        module docstring. Raises Invalid (bad file, malformed lines, no usable row)."""
        name = params.get("file")
        require(isinstance(name, str) and name.strip(), "the import pipeline needs --file PATH (a JSONL file)", "file")
        path = Path(name)
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise Invalid(f"cannot read {name}: {exc.strerror}", errors={"file": "unreadable"}) from None
        require(path.is_file(), f"{name} is not a file", "file")
        require(size <= MAX_BYTES, f"{name} is larger than {MAX_BYTES // (1024 * 1024)} MiB", "file")
        digest = hashlib.sha256()
        rows, errors, n_errors = [], [], 0
        for number, text in _lines(path, digest):
            if len(rows) + n_errors >= MAX_ROWS:
                raise Invalid(f"{path.name} has more than {MAX_ROWS} rows; split it", errors={"file": "too many rows"})
            try:
                if text is None:
                    raise RowError("not UTF-8 text")
                try:
                    data = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise RowError(f"not JSON ({exc.msg} at column {exc.colno})") from None
                rows.append((number, parse_row(data)))
            except RowError as exc:
                n_errors += 1
                if len(errors) < MAX_ERRORS_SHOWN:
                    errors.append((number, str(exc)))
        rows, unknown, late = self._resolve(project, rows)
        n_errors += len(late)
        if n_errors:
            shown = "; ".join(f"line {n}: {why}" for n, why in sorted(errors + late)[:MAX_ERRORS_SHOWN])
            more = f" (the first {MAX_ERRORS_SHOWN} shown)" if n_errors > MAX_ERRORS_SHOWN else ""
            raise Invalid(
                f"{path.name}: {n_errors} malformed line{'s' if n_errors > 1 else ''}{more}; nothing was "
                f"imported: {shown}",
                errors={"file": shown},
            )
        if not rows:
            shown = "; ".join(f"line {u['line']}: {u['reason']}" for u in unknown[:MAX_ERRORS_SHOWN])
            raise Invalid(
                f"{path.name}: no row names a usable video of project {project.slug}"
                + (f": {shown}" if shown else " (the file has no rows)"),
                errors={"file": "no usable rows"},
            )

        by_video: dict[int, list[dict]] = {}
        for number, row in rows:
            by_video.setdefault(row["video_id"], []).append({**row, "line": number})
        stored = f"imports/{project.pk}/{uuid.uuid4().hex}/"
        for video_id, video_rows in by_video.items():
            default_storage.save(f"{stored}{video_id}.json", ContentFile(json.dumps(video_rows).encode()))
        default_storage.save(
            f"{stored}index.json", ContentFile(json.dumps({str(v): len(r) for v, r in by_video.items()}).encode())
        )
        kinds = {row["qa_type"]: (row["set_kind"], row["answer_kind"]) for _, row in rows}
        for slug in sorted(kinds):
            qa_type = qa_services.ensure_qa_type(project, slug)
            if (qa_type.set_kind, qa_type.answer_kind) != kinds[slug]:  # just created: the kinds its rows declare
                QAType.objects.filter(pk=qa_type.pk).update(set_kind=kinds[slug][0], answer_kind=kinds[slug][1])
        return {
            **params,
            "file": name,
            "imported_from": path.name,
            "file_sha256": digest.hexdigest(),
            "stored": stored,
            "rows": len(rows) + len(unknown),
            "importable_rows": len(rows),
            "videos": len(by_video),
            "unknown_rows": len(unknown),
            "unknown_videos": unknown[:MAX_UNKNOWN_SHOWN],
        }

    @staticmethod
    def _resolve(
        project, rows: list[tuple[int, dict]]
    ) -> tuple[list[tuple[int, dict]], list[dict], list[tuple[int, str]]]:
        """Rows with ``video_id``, their clip and interval answer checked against the unit they will
        open (the video, or for a life-log QA type the logs the video leads as first part, in virtual
        seconds); the unknown-video reports ({line, video, reason}); and the errors (line, why): clips
        starting after their unit, interval answers outside it or given to a text QA type, kinds that
        contradict the project's QA type."""
        by_sha, by_name, by_id = {}, {}, {}
        for video in Video.objects.filter(project=project).only("id", "sha256", "filename", "duration_s", "status"):
            by_sha[video.sha256] = video
            by_name.setdefault(video.filename, []).append(video)
            by_id[video.pk] = video
        types = {
            t.slug: (t.set_kind, t.answer_kind, None)
            for t in QAType.objects.filter(project=project).only("slug", "set_kind", "answer_kind")
        }
        log_spans: dict[int, list[tuple[str, float]]] = {}
        known, unknown, errors = [], [], []
        for number, row in rows:
            ref = row["video"]
            if "sha256" in ref:
                video, shown = by_sha.get(ref["sha256"]), ref["sha256"]
                reason = None if video else f"no video with SHA-256 {shown} in project {project.slug}"
            else:
                shown = ref["filename"]
                named = by_name.get(shown, [])
                video = named[0] if len(named) == 1 else None
                reason = (
                    None
                    if video
                    else f"no video named {shown} in project {project.slug}"
                    if not named
                    else f"{len(named)} videos are named {shown}: name it by its sha256"
                )
            if video is not None and (video.status == Video.Status.FAILED or not video.duration_s):
                video, reason = (
                    None,
                    f"video {video.filename} "
                    + ("failed to ingest" if video.status == Video.Status.FAILED else "has not been probed yet"),
                )
            if video is None:
                unknown.append({"line": number, "video": shown, "reason": reason})
                continue
            try:
                set_kind, answer_kind = _type_kinds(types, row, number)
                if set_kind == QAType.SetKind.LIFE_LOG:
                    if video.pk not in log_spans:
                        log_spans[video.pk] = [
                            (g.name, life_log_span(g))
                            for g in qa_services.groups_led_by(
                                video, VideoGroup.Kind.LIFE_LOG, VideoGroupMember.Role.PART
                            )
                        ]
                    if not log_spans[video.pk]:
                        raise RowError(
                            f"{video.filename} is not the first part of a life log, and rows of the life-log "
                            f"QA type {row['qa_type']} name the log's first part (times are virtual seconds)"
                        )
                    name, span = min(log_spans[video.pk], key=lambda g: g[1])
                    unit = f"life log {name} ({span:g} virtual s)"
                else:
                    span, unit = video.duration_s, f"{video.filename} ({video.duration_s:g} s)"
                clip = row["clip"] or (0.0, span)
                if clip[0] >= span:
                    raise RowError(f"the clip starts at {clip[0]:g} s, after the end of {unit}")
                interval = row["interval"]
                if interval is not None and answer_kind != QAType.AnswerKind.INTERVAL:
                    raise RowError(
                        f"qa_type {row['qa_type']} has text answers, not a time interval: drop answer_start_s "
                        f"and answer_end_s, or import it into an interval QA type"
                    )
                if interval is None and answer_kind == QAType.AnswerKind.INTERVAL:
                    raise RowError(
                        f"qa_type {row['qa_type']} answers with a time interval: give answer_start_s and answer_end_s"
                    )
                if interval is not None and interval[1] > span + 1e-6:
                    raise RowError(f"the answer interval {interval[0]:g}-{interval[1]:g} s is not within {unit}")
                labelled = _resolve_labelled(row.get("videos"), project, by_sha, by_name, by_id)
            except RowError as exc:
                errors.append((number, str(exc)))
                continue
            known.append(
                (
                    number,
                    {
                        **row,
                        "video_id": video.pk,
                        "clip": [clip[0], min(clip[1], span)],
                        "interval": list(interval) if interval else None,
                        "videos": labelled,
                        "set_kind": set_kind,
                        "answer_kind": answer_kind,
                    },
                )
            )
        return known, unknown, errors

    def select(self, run):
        with default_storage.open(f"{run.params['stored']}index.json") as fh:
            ids = [int(v) for v in json.load(fh)]
        return list(Video.objects.filter(project=run.project, pk__in=ids).order_by("id")), {}

    def work(self, ctx: JobContext) -> Result:
        p, video = ctx.params, ctx.video
        with default_storage.open(f"{p['stored']}{video.pk}.json") as fh:
            rows = json.load(fh)
        done = set(
            Draft.objects.filter(
                job__run__project_id=ctx.run.project_id, job__video=video, params__file_sha256=p["file_sha256"]
            ).values_list("params__line", flat=True)
        )
        specs = []
        for row in rows:
            if row["line"] in done:
                continue
            provenance = {
                "imported_from": p["imported_from"],
                "file_sha256": p["file_sha256"],
                "line": row["line"],
                "kind": row["kind"],
                "original_id": row["original_id"],
                "model": row["model"],
            }
            if row["original"] is not None:
                provenance["original"] = row["original"]
            if row.get("videos"):
                provenance["videos"] = row["videos"]  # copied to the QA pair's videos when its unit opens
            if row.get("interval"):  # the QA pair's interval answer when its unit opens (qa.services._draft_interval)
                provenance["answer_start_s"], provenance["answer_end_s"] = row["interval"]
            specs.append(
                DraftSpec(
                    row["qa_type"],
                    row["question"],
                    row["answer"],
                    *row["clip"],
                    source_key=f"line-{row['line']}",
                    options=row["options"],
                    answer_index=row["answer_index"],
                    params=provenance,
                )
            )
        summary = {
            "imported": len(specs),
            "predictions": sum(s.params["kind"] == "prediction" for s in specs),
            "already_imported": len(rows) - len(specs),
        }
        return Result(specs=specs, summary=summary)


register(Import())
