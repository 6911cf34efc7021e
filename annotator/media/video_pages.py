"""The videos page (issue 21, "Videos page"): posters that open a preview player, filters, upload with a
progress bar per file (``static/js/videos.js`` over the API's upload), and failed videos with their
reason and a Retry. For the project's admins, reviewers and researchers; upload and Retry for admins."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotator import access
from annotator.errors import DomainError
from annotator.media.models import Video
from annotator.media.retries import retry_transcode
from annotator.media.urls import media_urls

VIDEO_FILTERS = ("status", "illumination", "source")
NAME_QUERY_MAX = 200  # characters of the file-name search
VIDEOS_SHOWN = 300  # cards on one page; filters narrow a larger project down


@login_required
def video_list(request, slug: str):
    """The project's videos (issue 21, "Videos page"): posters that open a preview player, filters
    (status, illumination, source, a part of the file name; GET parameters, an unknown value is no
    filter), upload with progress for admins (``static/js/videos.js`` over ``POST
    /api/projects/<slug>/videos/``), and for a failed video its reason and, when its original is
    stored, a Retry (``video_retry``)."""
    project, role = access.require(request.user, access.VIEW_VIDEOS_ROLES, slug=slug)
    fields = {name: dict(Video._meta.get_field(name).choices) for name in VIDEO_FILTERS}
    chosen = {name: request.GET.get(name, "") for name in VIDEO_FILTERS}
    chosen = {k: v for k, v in chosen.items() if v in fields[k]}
    query = request.GET.get("q", "")[:NAME_QUERY_MAX].strip().replace("\x00", "")
    videos = Video.objects.filter(project=project, **chosen)
    if query:
        videos = videos.filter(filename__icontains=query)
    rows = [
        {"video": v, "media": media_urls(v), "retry": v.status == Video.Status.FAILED and bool(v.original.name)}
        for v in videos.order_by("id")[:VIDEOS_SHOWN]
    ]
    filters = [
        {"name": name, "label": name.capitalize(), "choices": list(fields[name].items()), "value": chosen.get(name, "")}
        for name in VIDEO_FILTERS
    ]
    return render(
        request,
        "media/video_list.html",
        {
            "project": project,
            "rows": rows,
            "filters": filters,
            "query": query,
            "filtered": bool(chosen or query),
            "matching": videos.count() if len(rows) == VIDEOS_SHOWN else len(rows),
            "total": Video.objects.filter(project=project).count(),
            "can_manage": role in access.MANAGE_ROLES,
            "config": {"uploadUrl": f"/api/projects/{project.slug}/videos/"},
        },
    )


@login_required
@require_POST
def video_retry(request, slug: str, pk: int):
    """Queue a failed video's transcode again (``media.retries.retry_transcode``) and go back to the
    videos page with a message saying so, or why not. Admins only."""
    project, _ = access.require(request.user, access.MANAGE_ROLES, slug=slug)
    video = Video.objects.filter(project=project, pk=pk).first()
    if video is None:
        raise Http404("no such video in this project")
    try:
        retry_transcode(video)
    except DomainError as exc:
        messages.error(request, f"{video.filename}: {exc}")
    else:
        messages.success(request, f"{video.filename}: its transcode is queued again.")
    return redirect("video-list", slug=project.slug)
