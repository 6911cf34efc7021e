"""The export page (issue 21, "Export dialog"): a format, filters and media chosen, the export run as a
job (``qa.export_jobs``) with its progress, and its zip downloaded. Admins only (``access.EXPORT_ROLES``)."""

from django.contrib.auth.decorators import login_required
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponseRedirect
from django.shortcuts import render

from annotator import access
from annotator.errors import NotFound
from annotator.media.services import on_local_disk
from annotator.qa import export_jobs, exports


@login_required
def export_page(request, slug: str):
    """The export dialog (issue 21): a format, filters and media, run as a job with its progress and a
    download link (``static/js/export.js`` over ``/api/projects/<slug>/exports/``). Admins only."""
    project, _ = access.require(request.user, access.EXPORT_ROLES, slug=slug)
    formats = [
        {"value": f, "label": exports.REGISTRY[f].label, "needs_media": bool(exports.REGISTRY[f].needs_media)}
        for f in exports.REGISTRY
    ]
    config = {"listUrl": f"/api/projects/{project.slug}/exports/", "formats": formats}
    return render(
        request,
        "qa/export.html",
        {
            "project": project,
            "formats": formats,
            "choices": export_jobs.choices(project),
            "config": config,
            "verified": exports.count_rows(project),
        },
    )


@login_required
def export_file(request, slug: str, pk: int):
    """The zip of a finished export (``qa.export_jobs``), as an attachment; 404 for none (another
    project's, not done, empty). On S3 storage, a redirect to a presigned URL."""
    project, _ = access.require(request.user, access.EXPORT_ROLES, slug=slug)
    try:
        name = export_jobs.stored_file(export_jobs.job_of(project, pk))
    except NotFound:
        name = ""
    if not name or not default_storage.exists(name):
        raise Http404("no such export: it is not finished, matched nothing, or was removed")
    if not on_local_disk():
        return HttpResponseRedirect(default_storage.url(name))
    return FileResponse(
        default_storage.open(name, "rb"),
        as_attachment=True,
        filename=name.rsplit("/", 1)[-1],
        content_type="application/zip",
    )
