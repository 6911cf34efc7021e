"""The console's pages (issue 20, section 7): home grouped by task, the units list for admins, and
"My work" for annotators."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotator import access
from annotator.console import home as home_rows
from annotator.console import mywork, units
from annotator.core import handles
from annotator.errors import Conflict, Forbidden, Invalid, NotFound
from annotator.qa.models import QueueItem, WorkUnit
from annotator.review import services as review_services
from annotator.review.models import ReviewState


@login_required
def home(request):
    """The projects the user belongs to, each with its pages grouped by task (verify, studies,
    models, results, export, team) as the user's role allows."""
    return render(request, "console/home.html", {"rows": home_rows.rows_for(request.user)})


@login_required
@require_http_methods(["GET"])
def unit_list(request, slug: str):
    """The project's passes over units (admins): filters, newest first, 50 a page."""
    project, _ = access.require(request.user, access.MANAGE_ROLES, slug=slug)
    filters, errors = units.parse_filters(request.GET)
    try:
        before = units.parse_before(request.GET.get("before"))
    except Invalid as exc:
        errors["before"], before = str(exc), None
    rows, older = units.items_page(project, filters, before)
    query = filters.query()
    return render(
        request,
        "console/units.html",
        {
            "project": project,
            "rows": rows,
            "filters": filters,
            "errors": errors,
            "first_page": before is None,
            "older": urlencode({**query, "before": older}) if older else "",
            "newest": urlencode(query),
            "kinds": QueueItem.Kind.choices,
            "statuses": QueueItem.Status.choices,
            "purposes": WorkUnit.Purpose.choices,
            "review_states": ReviewState.State.choices,
            "qa_types": units.qa_types(project),
            "back": request.get_full_path(),
        },
        status=400 if errors else 200,
    )


@login_required
@require_POST
def unit_action(request, slug: str):
    """Assign, release or reopen one pass (admins); back to the list with a message saying what was done."""
    project, _ = access.require(request.user, access.MANAGE_ROLES, slug=slug)
    back = request.POST.get("back") or ""
    if not back.startswith(f"/projects/{project.slug}/units/"):
        back = f"/projects/{project.slug}/units/"
    action = request.POST.get("action")
    username = (request.POST.get("username") or "").strip()[:150]
    try:
        item_id = units.whole_id(request.POST.get("item"), "the queue item", "item")
        if action == "assign":
            item = units.assign(project, item_id, username)
            messages.success(
                request,
                f"pass {item.pk} of unit {item.unit_id} is now served to "
                f"{username + ' only, first' if username else 'anyone'}",
            )
        elif action == "release":
            item = units.release(project, item_id)
            messages.success(request, f"pass {item.pk} of unit {item.unit_id} is back in the queue (saved work kept)")
        elif action == "reopen":
            item = units.reopen(project, item_id, username)
            messages.success(
                request, f"unit {item.unit_id} reopened: a rework pass is served first to {item.assigned_to.username}"
            )
        else:
            raise Invalid("choose assign, release or reopen")
    except (Invalid, Conflict, NotFound) as exc:
        messages.error(request, f"nothing done: {exc}")
    return redirect(back)


@login_required
@require_http_methods(["GET"])
def my_work(request, slug: str):
    """The annotator's own submitted passes with their review state and comments, reopen where
    allowed, and their own figures and pay."""
    project, _ = access.require(request.user, access.ANNOTATE_ROLES, slug=slug)
    period = request.GET.get("period") or "month"
    errors = {}
    before = None
    if (raw := request.GET.get("before")) not in (None, ""):  # an item's handle (issue 20)
        if (before := handles.decode("item", raw)) is None:
            errors["before"] = "not a page of this list: start from the first"
    if period not in mywork.PERIODS:
        errors["period"], period = "one of " + ", ".join(mywork.PERIODS), "month"
    try:
        page = mywork.page(project, request.user, before, period)
    except Invalid as exc:  # not one of their own passes: the same words as a handle that is none
        errors["before"] = str(exc)
        page = mywork.page(project, request.user, None, period)
    return render(
        request, "console/my_work.html", {"project": project, "errors": errors, **page}, status=400 if errors else 200
    )


@login_required
@require_POST
def my_work_reopen(request, slug: str):
    """Reopen one's own submitted unit before it is reviewed (``review.services.reopen_unit``)."""
    project, _ = access.require(request.user, access.ANNOTATE_ROLES, slug=slug)
    try:
        unit_id = handles.decode("unit", request.POST.get("unit"))  # the unit's handle (issue 20)
        if unit_id is None or not WorkUnit.objects.filter(pk=unit_id, project=project).exists():
            raise NotFound("no such unit in this project")
        review_services.reopen_unit(unit_id, request.user)
        messages.success(request, f"unit {request.POST['unit']} reopened: it comes first when you verify")
    except (Invalid, Conflict, NotFound, Forbidden) as exc:
        messages.error(request, f"not reopened: {exc}")
    return redirect("my-work", slug=project.slug)
