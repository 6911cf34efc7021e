"""Browser pages for verification, progress, QA types, QA pair and unit histories, and export.

The verify page drives the same API as scripts. Every page checks the role through
``annotator.access``: 404 for non-members, 403 for a role that may not.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotator import access, markdown
from annotator.core.validators import MARKDOWN_MAX
from annotator.errors import DomainError, status_of
from annotator.qa import selectors, services
from annotator.qa.downloads import jsonl_export_response
from annotator.qa.inputs import PolicyIO, QATypeIO, export_filters
from annotator.qa.models import QAPair, QAType, WorkUnit
from annotator.qa.presets import PRESETS


@login_required
def verify(request, slug: str):
    """The verification page: video player(s), QA pairs, keep / modify / delete / add, all by keyboard."""
    project, _ = access.require(request.user, access.ANNOTATE_ROLES, slug=slug)
    api = "/api/units/{id}/"
    config = {
        "project": project.slug,
        "nextUrl": f"/api/projects/{project.slug}/queue/next/",
        "submitUrl": api + "submit/",
        "heartbeatUrl": api + "heartbeat/",
        "skipUrl": api + "skip/",
        "autosaveUrl": api + "autosave/",
        "typesUrl": f"/api/projects/{project.slug}/qa-types/",
        # For the add form: no type is preselected (the person must choose one), and an interval
        # type's card gets answer start / end fields.
        "qaTypes": [
            {"slug": t.slug, "name": t.name, "answer_kind": t.answer_kind, "set_kind": t.set_kind}
            for t in QAType.objects.filter(project=project).order_by("name")
        ],
    }
    types = [
        {"name": t.name, "description": t.description, "html": markdown.render(t.guidelines)}
        for t in QAType.objects.filter(project=project).exclude(guidelines="")
    ]
    return render(
        request,
        "qa/verify.html",
        {
            "project": project,
            "config": config,
            # Empty: the page says where an admin writes them (the QA types page), issue 21.
            "guidelines_html": markdown.render(project.guidelines) if project.guidelines.strip() else "",
            "type_guidelines": types,
        },
    )


@login_required
def progress(request, slug: str):
    """Progress per pass kind, annotator, QA type and video, with the live kept share, and the kept
    work of people who lost their unit (linking to the unit's history; ``?unit=N`` opens unit N's)."""
    project, role = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    unit = request.GET.get("unit", "")
    if unit.isascii() and unit.isdigit() and len(unit) < 19:
        return redirect("unit-detail", slug=slug, pk=int(unit))
    return render(
        request,
        "qa/progress.html",
        {"project": project, "p": selectors.progress(project), "can_manage": role in access.MANAGE_ROLES},
    )


@login_required
def unit_detail(request, slug: str, pk: int):
    """A unit's history for admins, reviewers and researchers: its passes, submissions, skips and
    all saved work, including the kept work of people whose lease lapsed and who did not finish
    (on a blind overlap pass, the only place that work is shown)."""
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    unit = get_object_or_404(WorkUnit.objects.select_related("video", "group"), pk=pk, project=project)
    selectors.refuse_during_blind_pass(request.user, unit.pk)
    return render(request, "qa/unit_detail.html", {"project": project, "unit": unit, "h": selectors.unit_history(unit)})


@login_required
@require_http_methods(["GET", "POST"])
def qa_types(request, slug: str):
    """The project's QA types; admins add types, apply the EgoNight preset, write the project's and
    each type's guidelines (markdown) and set the queue policy."""
    project, role = access.require(request.user, access.ALL_ROLES, slug=slug)
    manage = role in access.MANAGE_ROLES
    form = {}
    if request.method == "POST":
        if not manage:
            raise PermissionDenied("only admins change QA types")
        action = request.POST.get("action")
        if action == "preset":
            n = services.apply_preset(project, request.POST.get("preset", ""))
            messages.success(request, f"added {n} QA types from the preset")
            return redirect("qa-types", slug=slug)
        if action in ("guidelines", "type-guidelines") and len(request.POST.get("guidelines", "")) > MARKDOWN_MAX:
            messages.error(request, f"guidelines not saved: longer than {MARKDOWN_MAX:,} characters")
            return redirect("qa-types", slug=slug)
        if action == "guidelines":
            project.guidelines = request.POST.get("guidelines", "")
            project.save(update_fields=["guidelines"])
            messages.success(request, "project guidelines saved")
            return redirect("qa-types", slug=slug)
        if action == "type-guidelines":
            updated = QAType.objects.filter(project=project, slug=request.POST.get("slug", "")).update(
                guidelines=request.POST.get("guidelines", "")
            )
            if updated:
                messages.success(request, f"guidelines of {request.POST.get('slug')} saved")
            else:
                messages.error(request, "no such QA type")
            return redirect("qa-types", slug=slug)
        if action == "policy":
            # The API's serializer (``qa.inputs``), so the page has the same bounds (overlap_k at most 20).
            data = PolicyIO(data={k: request.POST.get(k) for k in ("double_check_share", "overlap_share", "overlap_k")})
            if not data.is_valid():
                problems = "; ".join(f"{k}: {v[0]}" for k, v in data.errors.items())
                messages.error(request, f"queue policy not changed: {problems}")
            else:
                services.set_queue_policy(project, **data.validated_data)
                messages.success(request, "queue policy saved")
            return redirect("qa-types", slug=slug)
        form = {
            k: request.POST.get(k, "") for k in ("slug", "name", "description", "clip_policy", "window_s", "guidelines")
        }
        form["paired"] = bool(request.POST.get("paired"))
        errors = _qa_type_errors(project, form)
        checked = QATypeIO(data={**form, "window_s": form["window_s"] or None}, context={"project": project})
        if not checked.is_valid():  # the API's bounds: lengths, a finite window of at most an hour
            for field, problems in checked.errors.items():
                errors.setdefault(field, str(problems[0]))
        if not errors:
            QAType.objects.create(
                project=project,
                slug=form["slug"],
                name=form["name"],
                description=form["description"],
                paired=form["paired"],
                clip_policy=form["clip_policy"],
                window_s=float(form["window_s"]) if form["window_s"] else None,
                guidelines=form["guidelines"],
            )
            messages.success(request, f"QA type {form['slug']} added")
            return redirect("qa-types", slug=slug)
        form["errors"] = errors  # the form is shown again with what was typed
    return render(
        request,
        "qa/qa_types.html",
        {
            "project": project,
            "types": QAType.objects.filter(project=project),
            "manage": manage,
            "form": form,
            "presets": sorted(PRESETS),
            "policies": QAType.ClipPolicy.choices,
        },
        status=400 if form.get("errors") else 200,
    )


def _qa_type_errors(project, form) -> dict:
    from django.utils.text import slugify

    errors = {}
    if not form["slug"] or slugify(form["slug"]).replace("-", "_") != form["slug"]:
        errors["slug"] = "use lower-case letters, digits and underscores"
    elif QAType.objects.filter(project=project, slug=form["slug"]).exists():
        errors["slug"] = "this project already has a QA type with this slug"
    if not form["name"].strip():
        errors["name"] = "give the type a name"
    if form["clip_policy"] not in QAType.ClipPolicy.values:
        errors["clip_policy"] = "choose a clip policy"
    try:
        window = float(form["window_s"]) if form["window_s"] else None
    except ValueError:
        window, errors["window_s"] = None, "a number of seconds"
    if form["clip_policy"] == QAType.ClipPolicy.WINDOW and not (window and window > 0):
        errors.setdefault("window_s", "a window clip policy needs a length in seconds")
    return errors


@login_required
def qa_list(request, slug: str):
    """QA pairs of the project, filterable by status and QA type, each linking to its history. The
    pairs of a unit the person verifies blind (an overlap pass they hold) are left out until they
    submit it, and the page says how many (all of the unit's, whatever the filters)."""
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    blind = selectors.units_held_blind(request.user, project)
    qs = (
        QAPair.objects.filter(project=project, unit__purpose=WorkUnit.Purpose.REAL)
        .exclude(unit_id__in=blind)
        .select_related("qa_type", "video")
        .order_by("-updated_at")
    )
    status, qa_type = request.GET.get("status", ""), request.GET.get("qa_type", "")
    if status:
        qs = qs.filter(status=status)
    if qa_type:
        qs = qs.filter(qa_type__slug=qa_type)
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "qa/qa_list.html",
        {
            "project": project,
            "page": page,
            "status": status,
            "qa_type": qa_type,
            "hidden_blind": QAPair.objects.filter(unit_id__in=blind).count() if blind else 0,
            "statuses": QAPair.Status.values,
            "types": QAType.objects.filter(project=project),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def qa_detail(request, slug: str, pk: int):
    """One QA pair: its current text, its history from the machine draft, and (for admins and
    reviewers) an edit form with optimistic locking: a conflicting edit is refused, the current
    text is shown, and what the editor typed is kept in the form."""
    project, role = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    pair = get_object_or_404(QAPair.objects.select_related("qa_type", "video"), pk=pk, project=project)
    selectors.refuse_during_blind_pass(request.user, pair.unit_id)
    can_edit = role in access.EDIT_QA_ROLES
    typed, conflict, errors, status = None, None, {}, 200
    if request.method == "POST":
        if not can_edit:
            raise PermissionDenied("your role may not edit QA pairs")
        typed = {
            "question": request.POST.get("question", ""),
            "answer": request.POST.get("answer", ""),
            "version": request.POST.get("version", ""),
        }
        try:
            version = int(typed["version"]) if typed["version"].isdigit() and len(typed["version"]) < 10 else -1
            services.edit_qa_pair(
                pair.pk,
                request.user,
                version=version,
                question=typed["question"],
                answer=typed["answer"] if pair.options is None else None,
            )
        except DomainError as exc:
            errors, conflict, status = exc.errors, (exc.conflicts[0] if exc.conflicts else None), status_of(exc)
            messages.error(request, str(exc))
            pair.refresh_from_db()
        else:
            messages.success(request, "saved")
            return redirect("qa-detail", slug=slug, pk=pk)
    return render(
        request,
        "qa/qa_detail.html",
        {
            "project": project,
            "pair": pair,
            "h": selectors.history(pair),
            "can_edit": can_edit,
            "typed": typed,
            "conflict": conflict,
            "errors": errors,
        },
        status=status,
    )


@login_required
def export_download(request, slug: str):
    """Stream the verified QA of the project as a JSONL download (admins only)."""
    project, _ = access.require(request.user, access.EXPORT_ROLES, slug=slug)
    try:
        filters = export_filters(request.GET)
    except DomainError as exc:  # a filter too long, or with a NUL character
        return HttpResponseBadRequest(
            f"{exc}: " + "; ".join(f"{k}: {v}" for k, v in exc.errors.items()), content_type="text/plain; charset=utf-8"
        )
    return jsonl_export_response(project, filters)
