"""Pages of onboarding and gold checks: the tutorial (every member reads it; admins write it and pick
its examples) and the admins' page (policy, sets, people, every attempt and pause, lifting one)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotator import access, markdown
from annotator.errors import DomainError, Invalid, status_of
from annotator.exposure import ledger
from annotator.exposure.models import Exposure
from annotator.gold import selectors, services
from annotator.gold.models import Source
from annotator.media.urls import media_urls
from annotator.qa.models import QAPair, WorkUnit

REASONS = dict(QAPair.DeleteReason.choices)


def _int(value: str) -> int | None:
    """A positive id from a form field, or None."""
    return int(value) if value.isascii() and value.isdigit() and 0 < len(value) < 19 else None


def _float(value: str) -> float | None:
    try:
        return float(value) if value.strip() else None
    except ValueError:
        return float("nan")  # refused by the service, naming the field


def _record_tutorial(user, project, examples: list[Source]) -> None:
    """Put each example's footage and its QA pairs' answers in the reader's exposure ledger, once per
    example (a gold copy of what a tutorial showed would be known to them)."""
    person = ledger.person_key(user_id=user.pk)
    units = [s.copy_unit_id for s in examples if s.copy_unit_id]
    done = set(
        Exposure.objects.filter(person=person, project_id=project.pk, ref__in=[f"unit:{u}" for u in units]).values_list(
            "ref", flat=True
        )
    )
    for s in examples:
        if s.copy_unit_id and f"unit:{s.copy_unit_id}" not in done:
            ledger.record(
                person,
                project.pk,
                [ledger.Shown(ledger.FOOTAGE, v) for v in s.footage]
                + [ledger.Shown(ledger.ANSWER, qa_pair_id=k.qa_pair_id) for k in s.known_list],
                source=Exposure.Source.QUEUE,
                ref=f"unit:{s.copy_unit_id}",
            )


def _tutorial_post(request, project) -> None:
    """One admin action on the tutorial page; raises DomainError with the reason."""
    action = request.POST.get("action", "")
    if action == "markdown":
        services.set_tutorial(project, request.POST.get("tutorial", ""))
        messages.success(request, "tutorial saved")
    elif action == "add-example":
        unit = _int(request.POST.get("unit", ""))
        if unit is None:
            raise Invalid("give the id of a verified unit", errors={"unit": "a unit id"})
        services.add_example(project, unit, request.user)
        messages.success(request, f"unit {unit} added as an example")
    elif action == "remove-example":
        services.remove_example(project, _int(request.POST.get("source", "")) or 0)
        messages.success(request, "example removed")
    elif action == "explain":
        services.set_explanation(project, _int(request.POST.get("known", "")) or 0, request.POST.get("explanation", ""))
        messages.success(request, "explanation saved")
    else:
        raise Invalid("unknown action")


@login_required
@require_http_methods(["GET", "POST"])
def tutorial(request, slug: str):
    """The project's tutorial: its Markdown (sanitised, ``annotator.markdown``) and example units, each
    QA pair with the expected decision (keep, modify and what into, delete and why) and an explanation.
    Every member reads it; admins edit the Markdown, add examples from verified units, explain each
    pair and remove examples. Reading it adds the examples to the reader's exposure ledger."""
    project, role = access.require(request.user, access.ALL_ROLES, slug=slug)
    manage = role in access.MANAGE_ROLES
    status = 200
    if request.method == "POST":
        if not manage:
            raise PermissionDenied("only admins change the tutorial")
        try:
            _tutorial_post(request, project)
            return redirect("gold-tutorial", slug=slug)
        except DomainError as exc:
            messages.error(request, str(exc))
            status = status_of(exc)
    policy = services.policy_of(project)
    examples = selectors.sets(project)[Source.Role.EXAMPLE]
    units = WorkUnit.objects.select_related("video").in_bulk([s.copy_unit_id for s in examples if s.copy_unit_id])
    for s in examples:
        unit = units.get(s.copy_unit_id)
        s.unit = unit
        s.media = media_urls(unit.video) if unit else {}
        for k in s.known_list:
            k.reason_label = REASONS.get(k.reason, k.reason)
            k.changed = {
                key: k.expected.get(key)
                for key in ("question", "answer")
                if k.action == "modify" and k.expected.get(key) != k.shown.get(key)
            }
    _record_tutorial(request.user, project, examples)
    return render(
        request,
        "gold/tutorial.html",
        {
            "project": project,
            "manage": manage,
            "policy": policy,
            "examples": examples,
            "tutorial_html": markdown.render(policy.tutorial or "No tutorial yet."),
        },
        status=status,
    )


def _admin_post(request, project) -> None:
    """One admin action on the gold page; raises DomainError with the reason."""
    action = request.POST.get("action", "")
    if action == "policy":
        p = request.POST
        services.set_policy(
            project,
            gold_rate=_float(p.get("gold_rate", "")),
            threshold=_float(p.get("threshold", "")),
            tries=_int(p.get("tries", "")) or (0 if p.get("tries") else None),
            window=_int(p.get("window", "")) or (0 if p.get("window") else None),
            qualification_required=p.get("qualification_required") == "on",
        )
        messages.success(request, "policy saved")
    elif action == "lift":
        services.lift_pause(
            _int(request.POST.get("pause", "")) or 0, request.user, request.POST.get("note", ""), project=project
        )
        messages.success(request, "pause lifted")
    elif action == "grant":
        services.grant_try(project, _int(request.POST.get("user", "")) or 0)
        messages.success(request, "one more try granted")
    elif action == "make":
        n = _int(request.POST.get("n", "")) or 0
        role = request.POST.get("role", "")
        made = services.make_sources(project, role, n, user=request.user)
        messages.success(
            request,
            f"{len(made)} verified units added to the {role} set"
            + (f" (only {len(made)} of {n} were left)" if len(made) < n else ""),
        )
    else:
        raise Invalid("unknown action")


@login_required
@require_http_methods(["GET", "POST"])
def gold_admin(request, slug: str):
    """Onboarding and gold checks of the project, for its admins: the policy, the qualification and
    gold sets (and making more from verified units), each annotator's qualification and gold accuracy
    with its 95% interval, every pause (lifting one) and every qualification attempt."""
    project, _ = access.require(request.user, access.MANAGE_ROLES, slug=slug)
    status = 200
    if request.method == "POST":
        try:
            _admin_post(request, project)
            return redirect("gold-admin", slug=slug)
        except DomainError as exc:
            messages.error(request, str(exc) + "".join(f" {k}: {v}." for k, v in exc.errors.items()))
            status = status_of(exc)
    sets = selectors.sets(project)
    return render(
        request,
        "gold/admin.html",
        {
            "project": project,
            "policy": services.policy_of(project),
            "people": selectors.people(project),
            "qualification_set": sets[Source.Role.QUALIFICATION],
            "gold_set": sets[Source.Role.GOLD],
            "examples": sets[Source.Role.EXAMPLE],
            "pauses": Paginator(selectors.pauses(project), 100).get_page(request.GET.get("pauses")),
            "attempts": Paginator(selectors.attempts(project), 100).get_page(request.GET.get("attempts")),
            "verified_left": services.verified_units(project).count(),
            "roles": Source.Role.choices,
        },
        status=status,
    )
