"""The participant's page of a study: instructions, practice items with feedback, then the
assigned trials one at a time, in the widget of the study's kind (``static/js/studies/``)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import capfirst
from django.views.decorators.http import require_http_methods

from annotator import access, markdown
from annotator.errors import DomainError, Forbidden
from annotator.studies import instructions, links, services
from annotator.studies.kinds import kind_module
from annotator.studies.models import Study


def _study(request, slug, name, roles):
    project, _ = access.require(request.user, roles, slug=slug)
    return get_object_or_404(Study, project=project, name=name)


def _study_of_author(request, slug, name, doing: str) -> Study:
    """The study, for the project's admins and researchers and superusers (others: 403 saying so)."""
    project, role = access.require(request.user, access.ALL_ROLES, slug=slug)
    if not (request.user.is_superuser or role in access.RESEARCH_ROLES):
        raise PermissionDenied(f"only admins and researchers {doing}")
    return get_object_or_404(Study, project=project, name=name)


@login_required
def take(request, slug: str, name: str):
    """Take part in a study. A reload resumes the same trial, with the time already spent.

    Only the project's annotators take part: anyone else who is a member (who can see or export the
    truth) gets this page with status 403 and the reason in plain words, and no trial script. The
    page's configuration reaches its script through ``json_script`` (the CSP forbids inline script).
    """
    study = _study(request, slug, name, access.ALL_ROLES)
    module = kind_module(study.kind)
    title = capfirst(module.TITLE)
    try:
        services.require_participant_role(request.user, study.project)
    except Forbidden as exc:
        return render(request, "studies/take.html", {"study": study, "title": title, "refusal": str(exc)}, status=403)
    # ``kind`` names the page's widget module (static/js/studies/<kind>.js).
    config = {
        "kind": study.kind,
        "enrollUrl": f"/api/studies/{study.pk}/enroll/",
        "currentUrl": f"/api/studies/{study.pk}/current/",
        "shownUrl": "/api/trials/{id}/shown/",
        "answerUrl": "/api/trials/{id}/answer/",
    }
    return render(
        request,
        "studies/take.html",
        {
            "study": study,
            "title": title,
            "config": config,
            "instructions_html": markdown.render(instructions.text(study)),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def preview(request, slug: str, name: str):
    """Take the study as a participant would, in preview (admins and researchers, and superusers):
    the same page and endpoints (with ``?preview=1``), answers kept apart as a ``preview``
    participant that no score, export or quota counts. POST starts again (the old preview and its
    trials are deleted)."""
    study = _study_of_author(request, slug, name, "preview a study")
    if request.method == "POST":
        try:
            links.preview_participant(study, request.user, restart=True)
        except DomainError as exc:
            messages.error(request, str(exc))
        return redirect("study-preview", slug=slug, name=name)
    module = kind_module(study.kind)
    q = "?preview=1"
    config = {
        "kind": study.kind,
        "enrollUrl": f"/api/studies/{study.pk}/enroll/{q}",
        "currentUrl": f"/api/studies/{study.pk}/current/{q}",
        "shownUrl": "/api/trials/{id}/shown/",
        "answerUrl": "/api/trials/{id}/answer/",
    }
    return render(
        request,
        "studies/take.html",
        {
            "study": study,
            "title": capfirst(module.TITLE),
            "config": config,
            "preview": True,
            "project": study.project,
            "instructions_html": markdown.render(instructions.text(study)),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def edit_instructions(request, slug: str, name: str):
    """What the study's participants read before the first item, editable by the project's admins
    and researchers (issue 21): the study's own Markdown, or, while it has none, the text made from
    its settings (``studies.instructions``), shown to start from. POST saves ``instructions`` (an
    empty text goes back to the made one; longer than ``instructions.TEXT_MAX``: refused in words,
    nothing lost) and returns here; the page shows what participants will read."""
    study = _study_of_author(request, slug, name, "edit a study's instructions")
    if request.method == "POST":
        text = request.POST.get("instructions", "")
        try:
            # The made text saved as it was stays the made one, so it follows the settings.
            instructions.set_text(study, "" if text.strip() == instructions.made(study).strip() else text)
        except DomainError as exc:
            return render(
                request,
                "studies/instructions.html",
                {
                    "study": study,
                    "project": study.project,
                    "text": text,
                    "own": bool(study.instructions),
                    "made": instructions.made(study),
                    "shown_html": markdown.render(instructions.text(study)),
                    "title": capfirst(kind_module(study.kind).TITLE),
                    "error": str(exc),
                },
                status=400,
            )
        messages.success(
            request,
            "Instructions saved."
            if study.instructions
            else "Instructions reset: participants read the text made from the study's settings.",
        )
        return redirect("study-instructions", slug=slug, name=name)
    made = instructions.made(study)
    return render(
        request,
        "studies/instructions.html",
        {
            "study": study,
            "project": study.project,
            "text": study.instructions or made,
            "own": bool(study.instructions),
            "made": made,
            "shown_html": markdown.render(study.instructions or made),
            "title": capfirst(kind_module(study.kind).TITLE),
        },
    )


@login_required
def ordering_alias(request, slug: str, name: str, rest: str = ""):
    """The pages' old addresses (``/projects/SLUG/ordering/NAME/...``) lead to the study's."""
    return redirect(f"/projects/{slug}/studies/{name}/{rest}")
