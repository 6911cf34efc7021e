"""Pages of life logs (X-LeBench, seed 002 Sec. 3): the list of a project's life logs and one log's
day timeline, played across its parts in virtual time (``static/js/lifelog.js`` with
``static/js/virtual_player.js``). For the people who run the project (``access.OVERSEE_ROLES``)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render

from annotator import access
from annotator.media.lifelogs import clock, log_start, parts_of, timeline
from annotator.media.models import VideoGroup


@login_required
def lifelog_list(request, slug: str):
    """The project's life logs: name, start, number of parts, span and recorded hours."""
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    rows = []
    for group in VideoGroup.objects.filter(project=project, kind=VideoGroup.Kind.LIFE_LOG).order_by("name"):
        parts = parts_of(group)
        span = parts[-1].end_s if parts else 0.0
        rows.append(
            {
                "group": group,
                "n_parts": len(parts),
                "span_h": span / 3600,
                "recorded_h": sum(p.duration_s for p in parts) / 3600,
                "start": group.params.get("start", ""),
                "end": clock(log_start(group), span),
            }
        )
    return render(request, "media/lifelog_list.html", {"project": project, "rows": rows})


@login_required
def lifelog_detail(request, slug: str, pk: int):
    """One life log's day timeline: parts as blocks at their wall-clock times, gaps with their
    durations, hour ticks; click or keys to play from a virtual time, across parts."""
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    group = VideoGroup.objects.filter(project=project, kind=VideoGroup.Kind.LIFE_LOG, pk=pk).first()
    if group is None:
        raise Http404("no such life log")
    return render(request, "media/lifelog_detail.html", {"project": project, "group": group, "config": timeline(group)})
