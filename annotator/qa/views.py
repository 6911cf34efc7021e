"""Browser pages for verification and export. The verify page drives the same API as scripts."""

import json

import markdown
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from annotator.projects import access
from annotator.projects.models import Membership, Project
from annotator.qa import selectors
from api.views import jsonl_export_response


def _project_with(request, slug, check) -> Project:
    project = get_object_or_404(Project, slug=slug)
    if access.role_in(request.user, project) is None:
        raise Http404("no such project")
    if not check(request.user, project):
        raise PermissionDenied("your role in this project does not allow this")
    return project


@login_required
def home(request):
    """The projects the user belongs to, with their role and queue counts."""
    if request.user.is_superuser:
        projects = [(p, "admin") for p in Project.objects.all()]
    else:
        projects = [(m.project, m.role) for m in Membership.objects.filter(user=request.user).select_related("project")]
    rows = [
        {"project": p, "role": role, "counts": selectors.queue_counts(p),
         "can_export": role == "admin", "can_annotate": role in access.ANNOTATE_ROLES}
        for p, role in projects
    ]
    return render(request, "qa/home.html", {"rows": rows})


@login_required
def verify(request, slug: str):
    """The verification page: video player, drafts, keep / modify / delete / add, all by keyboard."""
    project = _project_with(request, slug, access.can_annotate)
    config = {"project": project.slug, "nextUrl": f"/api/projects/{project.slug}/queue/next/",
              "submitUrl": "/api/units/{id}/submit/"}
    return render(request, "qa/verify.html", {
        "project": project,
        "config_json": json.dumps(config),
        "guidelines_html": markdown.markdown(project.guidelines or "No guidelines yet.", extensions=["extra"]),
    })


@login_required
def export_download(request, slug: str):
    """Stream the verified QA of the project as a JSONL download (admins only)."""
    project = _project_with(request, slug, access.can_export)
    return jsonl_export_response(project, request.GET)
