"""Exports run as background jobs (issue 21, "Export dialog"): a format, filters and media chosen on
the export page, written by a worker with its progress, then downloaded as one zip.

A job is a ``core.Job`` row (``annotator.jobs``) of task ``qa.export`` whose key is
``qa.export:<token>`` (16 random hex digits) and whose args are ``[token, project id, user id,
format, with media (0 or 1), qa type, provenance, source, illumination]`` (an empty string for no
filter). While it runs, the row's ``result`` holds the progress as JSON ``{"done": rows written,
"total": rows to write}`` (no extra table); once done, ``result`` is the summary ``{"rows",
"items", "file", "size", "clips", "media_failures", "skipped"}``, with ``file`` the storage name of
the zip (``exports/<token>/<slug>-<format>.zip``) or ``""`` when no QA pair matched (nothing is
written then). The zip holds what ``manage.py export_qa`` writes in that format (the dataset card,
the toolkit's files, ``media/`` with the clips when asked).
"""

from __future__ import annotations

import json
import secrets
import time
import zipfile

from django.core.files import File
from django.core.files.storage import default_storage

from annotator import jobs
from annotator.core.models import Job
from annotator.errors import Conflict, Invalid, NotFound
from annotator.projects.models import Project

TASK = "qa.export"
FILTERS = ("qa_type", "provenance", "source", "illumination")
MAX_OPEN_PER_PROJECT = 3  # queued or running exports of one project at once
PROGRESS_EVERY_S = 1.0  # how often a running export writes its progress to its row, seconds
KEPT = 20  # the newest exports a project's page lists


def _open(project: Project):
    return Job.objects.filter(task=TASK, args__1=project.pk)


def start(project: Project, user, fmt: str, filters: dict[str, str | None], *, with_media: bool) -> int:
    """Queue an export of ``project``'s verified QA pairs in ``fmt`` (a name in ``qa.exports.REGISTRY``) with
    ``filters`` (``FILTERS`` keys, None or "" for none), the clips cut when ``with_media``. Returns the
    job's id. Raises Invalid for an unknown format or lmms-eval without media (its items are
    videos), Conflict when ``MAX_OPEN_PER_PROJECT`` exports of the project are queued or running."""
    from annotator.qa import exports

    if fmt not in exports.REGISTRY:
        raise Invalid(
            f"unknown format {fmt!r}: choose one of {', '.join(exports.REGISTRY)}", errors={"format": "unknown"}
        )
    if exports.REGISTRY[fmt].needs_media and not with_media:
        raise Invalid("lmms-eval tasks play video files: export it with media", errors={"with_media": "needed"})
    if _open(project).filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).count() >= MAX_OPEN_PER_PROJECT:
        raise Conflict(
            f"{MAX_OPEN_PER_PROJECT} exports of this project are already waiting or running: wait for one to finish"
        )
    token = secrets.token_hex(8)
    args = [token, project.pk, user.pk, fmt, int(with_media)] + [(filters.get(k) or "") for k in FILTERS]
    return jobs.enqueue(TASK, *args, key=f"{TASK}:{token}")


def run(token: str, project_id: int, user_id: int, fmt: str, with_media: int, *filter_values: str) -> str:
    """The job's body: write the export into a work folder, zip it, store the zip, return the summary
    JSON (module docstring). A project gone meanwhile: ``"gone"``. Progress is written to the job's row
    at most every ``PROGRESS_EVERY_S`` seconds and at the end."""
    from annotator.media.services import work_dir
    from annotator.qa import exports

    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return "gone"
    key = f"{TASK}:{token}"
    filters = exports.Filters(**{k: v or None for k, v in zip(FILTERS, filter_values)})
    total = exports.count_rows(project, filters)
    Job.objects.filter(key=key).update(result=json.dumps({"done": 0, "total": total}))
    if total == 0:
        return json.dumps(
            {"rows": 0, "items": 0, "file": "", "size": 0, "clips": 0, "media_failures": [], "skipped": {}}
        )

    def progress(rows):
        last = time.monotonic()
        for done, row in enumerate(rows, 1):
            yield row
            if time.monotonic() - last >= PROGRESS_EVERY_S:
                Job.objects.filter(key=key, status=Job.Status.RUNNING).update(
                    result=json.dumps({"done": done, "total": total})
                )
                last = time.monotonic()

    with work_dir(f"export-{token}-") as work:
        folder = work / f"{project.slug}-{fmt}"
        folder.mkdir()
        spec = exports.REGISTRY[fmt]
        out = folder if spec.folder else folder / f"{project.slug}.{spec.suffix}"
        result = exports.export(
            project,
            fmt,
            out,
            filters=filters,
            media_dir=folder / "media" if with_media else None,
            progress=progress,
            task=f"{project.slug.replace('-', '_')}_qa",
        )
        archive = work / "export.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
                # Clips are already compressed: stored as they are.
                kind = zipfile.ZIP_STORED if path.suffix == ".mp4" else zipfile.ZIP_DEFLATED
                zf.write(path, path.relative_to(work).as_posix(), compress_type=kind)
        with archive.open("rb") as fh:
            name = default_storage.save(f"exports/{token}/{project.slug}-{fmt}.zip", File(fh))
        size = archive.stat().st_size
    return json.dumps(
        {
            "rows": result.rows,
            "items": result.items,
            "file": name,
            "size": size,
            "clips": result.clips_cut + result.clips_reused,
            "media_failures": result.media_failures[:20],
            "skipped": result.skipped,
        }
    )


def job_of(project: Project, job_id: int) -> Job:
    """The export job ``job_id`` of ``project``. Raises NotFound when it is not one (another
    project's, another task's, none)."""
    job = _open(project).filter(pk=job_id).first()
    if job is None:
        raise NotFound("no such export in this project")
    return job


def recent(project: Project) -> list[Job]:
    """The project's newest ``KEPT`` export jobs, newest first."""
    return list(_open(project).order_by("-id")[:KEPT])


def describe(job: Job) -> dict:
    """What the export page shows of ``job``: ``{"id", "status" (queued, running, done, failed),
    "format", "label", "with_media", "filters" {key: value}, "done", "total" (rows; None until
    counted), "rows", "empty", "size" (bytes), "media_failures", "error", "created_at" (ISO)}``.
    ``empty`` is true for a finished export that matched no QA pair (nothing to download)."""
    from annotator.qa import exports

    _token, _project, _user, fmt, with_media, *values = job.args
    spec = exports.REGISTRY.get(fmt)
    info = {
        "id": job.pk,
        "status": job.status,
        "format": fmt,
        "label": spec.label if spec is not None else fmt,
        "with_media": bool(with_media),
        "filters": {k: v for k, v in zip(FILTERS, values) if v},
        "done": 0,
        "total": None,
        "rows": None,
        "empty": False,
        "size": 0,
        "media_failures": [],
        "error": job.error if job.status == Job.Status.FAILED else "",
        "created_at": job.created_at.isoformat(),
    }
    try:
        data = json.loads(job.result) if job.result else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    if job.status == Job.Status.DONE:
        rows = int(data.get("rows", 0))
        info.update(
            done=rows,
            total=rows,
            rows=rows,
            empty=not data.get("file"),
            size=int(data.get("size", 0)),
            media_failures=list(data.get("media_failures", [])),
        )
    elif "total" in data:
        info.update(done=int(data.get("done", 0)), total=int(data["total"]))
    return info


def stored_file(job: Job) -> str:
    """The storage name of a done export's zip; "" when it has none (empty, not done)."""
    if job.status != Job.Status.DONE:
        return ""
    try:
        data = json.loads(job.result)
    except ValueError:
        return ""
    name = data.get("file", "") if isinstance(data, dict) else ""
    return name if isinstance(name, str) and name.startswith("exports/") else ""


def choices(project: Project) -> dict[str, list[tuple[str, str]]]:
    """The export page's filter choices: ``{filter: [(value, label), ...]}``: the project's QA types
    (slug, name) and the provenance, source and illumination choices."""
    from annotator.media.models import Video
    from annotator.qa.models import QAPair, QAType

    types = QAType.objects.filter(project=project).order_by("name")
    return {
        "qa_type": [(t.slug, t.name) for t in types],
        "provenance": list(QAPair.Provenance.choices),
        "source": list(Video.Source.choices),
        "illumination": list(Video.Illumination.choices),
    }
