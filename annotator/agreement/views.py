"""Browser pages of agreement: the project's dashboard (with "Compute now") and the consensus round
(the reconciliation queue and one item's page, X-LeBench seed 002 App. D.3).

For the people who run a project (``access.OVERSEE_ROLES``): annotators get 403, non-members 404.
The dashboard's data is ``dashboard.dashboard_data``, the same as the API's; the page adds only
what a table needs (shades, answers in words). A refused consensus form is shown again with the
error in plain words and what was typed.
"""

from __future__ import annotations

import math
import re
from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Case, IntegerField, Value, When
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotator import access
from annotator.agreement import dashboard, scopes, services
from annotator.agreement.models import ConsensusItem, RatingSet
from annotator.errors import DomainError, Invalid, status_of
from annotator.studies.models import Study

SHADES = 10  # heat-0 (none) .. heat-10 (full) classes in app.css (the CSP allows no inline style)
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
INTEGER = re.compile(r"[+-]?\d{1,15}")


def _shade(x: float | None, top: float = 1.0) -> int | None:
    if x is None or top <= 0 or not math.isfinite(x):
        return None
    return max(0, min(SHADES, round(SHADES * x / top)))


def shown(value) -> str:
    """An answer in words: an ordering's element ids joined, a missing answer as a dash."""
    if value is None:
        return "–"
    if isinstance(value, list):
        return " → ".join(map(str, value))
    return str(value)


def _matrix_rows(raters: dict) -> list[dict]:
    """The rater-by-rater matrix as table rows: per rater, cells of agreement, shared items and shade."""
    names = raters["raters"]
    return [
        {
            "rater": name,
            "cells": [
                {"value": v, "shared": n, "shade": _shade(v), "other": names[j]}
                for j, (v, n) in enumerate(zip(raters["agreement"][i], raters["shared"][i]))
            ],
        }
        for i, name in enumerate(names)
    ]


def _confusion_rows(confusion: dict) -> list[dict]:
    top = max((c for row in confusion["counts"] for c in row), default=0)
    return [
        {"category": cat, "cells": [{"count": c, "shade": _shade(c, top)} for c in confusion["counts"][i]]}
        for i, cat in enumerate(confusion["categories"])
    ]


def _page_scopes(data: dict) -> list[dict]:
    """What the templates show beside ``dashboard_data``: tables with shades, answers in words,
    the methods used (once each)."""
    out = []
    for s in data["scopes"]:
        subsets = []
        for sub in s["subsets"]:
            subsets.append(
                {
                    "d": sub,
                    "matrix": _matrix_rows(sub["raters"]) if sub.get("raters") else None,
                    "confusion": _confusion_rows(sub["confusion"]) if sub.get("confusion") else None,
                    "top": [
                        {
                            **t,
                            "answers_shown": [{"rater": a["rater"], "value": shown(a["value"])} for a in t["answers"]],
                        }
                        for t in sub["top"]
                    ],
                    "headline": _headline(sub),
                }
            )
        methods = sorted({(r["label"], r["method"]) for sub in s["subsets"] for r in sub["reports"]})
        out.append(
            {
                "s": s,
                "subsets": subsets,
                "methods": methods,
                "computed": _when(s["computation"]["computed_at"] if s["computation"] else None),
                "computing": _when(s["computing_since"]),
            }
        )
    return out


def _when(iso: str | None):
    return datetime.fromisoformat(iso) if iso else None


HEADLINE = ("percent_agreement", "semantic_agreement", "kendall_w_mean")


def _headline(sub: dict) -> dict | None:
    """The subset's figure shown beside its title: first-round percent agreement at its level (or
    semantic agreement, or mean W), else its first metric."""
    first = [r for r in sub["reports"] if r["round"] == "first" and r["value"] is not None]
    for metric in HEADLINE:
        for r in first:
            if r["metric"] == metric and (not sub["level"] or r["level"] in (sub["level"], "")):
                return r
    return first[0] if first else None


@login_required
@require_http_methods(["GET", "POST"])
def agreement_dashboard(request, slug: str):
    """Every scope's latest agreement with intervals, matrices, the most disputed items and a trend;
    POST ``scope`` (or nothing, for every scope) queues a computation now ("Compute now")."""
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    if request.method == "POST":
        key = request.POST.get("scope", "").strip() or None
        try:
            jobs = services.request(project, key, trigger="button")
        except DomainError as exc:
            messages.error(request, str(exc))
        else:
            what = f"scope {key}" if key else "every scope with judgments"
            if jobs:
                messages.success(
                    request,
                    f"Queued {len(jobs)} computation{'s' if len(jobs) != 1 else ''} of {what}; "
                    "the dashboard shows the result once a worker has computed it (reload the page).",
                )
            elif key is None and not scopes.discover(project):
                messages.info(request, "Nothing to compute yet: no scope has judgments.")
            else:
                messages.info(request, f"A computation of {what} is queued already.")
        return redirect(reverse("agreement-dashboard", kwargs={"slug": slug}) + (f"#scope-{key}" if key else ""))
    data = dashboard.dashboard_data(project)
    open_items = ConsensusItem.objects.filter(scope__project=project, status=ConsensusItem.Status.OPEN).count()
    return render(
        request,
        "agreement/dashboard.html",
        {"project": project, "data": data, "scopes": _page_scopes(data), "open_items": open_items},
    )


# ------------------------------------------------------------------------------ consensus round


def _titles(project) -> tuple[dict, dict]:
    return (
        {s.name: s for s in Study.objects.filter(project=project)},
        {r.name: r for r in RatingSet.objects.filter(project=project)},
    )


@login_required
@require_http_methods(["GET", "POST"])
def consensus_list(request, slug: str):
    """The reconciliation queue, open items first. POST (from the dashboard) sends a subset's items
    to it: the checked ``items``, or every item whose disagreement is at least ``threshold``."""
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    if request.method == "POST":
        return _send(request, project)
    items = (
        ConsensusItem.objects.filter(scope__project=project)
        .select_related("scope", "reviewer")
        .annotate(
            done=Case(
                When(status=ConsensusItem.Status.DONE, then=Value(1)), default=Value(0), output_field=IntegerField()
            )
        )
        .order_by("done", "-disagreement", "sent_at", "id")
    )
    page = Paginator(items, 100).get_page(request.GET.get("page"))
    studies, rating_sets = _titles(project)
    rows = [
        {
            "ci": ci,
            "scope": dashboard.scope_title(ci.scope.key, studies, rating_sets),
            "subset": dashboard.subset_title(ci.subset, ci.scope.key),
        }
        for ci in page
    ]
    return render(
        request,
        "agreement/consensus_list.html",
        {"project": project, "page": page, "rows": rows, "open": items.filter(done=0).count()},
    )


def _send(request, project):
    key, subset = request.POST.get("scope", ""), request.POST.get("subset", "")
    threshold_text, items = request.POST.get("threshold", "").strip(), request.POST.getlist("items")
    back = reverse("agreement-dashboard", kwargs={"slug": project.slug})
    try:
        if threshold_text:
            try:
                threshold = float(threshold_text)
            except ValueError:
                threshold = math.nan
            if not math.isfinite(threshold):
                raise Invalid("the threshold is a disagreement from 0 to 1, like 0.5")
            sent = services.send_to_consensus(project, key, subset=subset, threshold=threshold, user=request.user)
        elif items:
            sent = services.send_to_consensus(project, key, subset=subset, items=items, user=request.user)
        else:
            raise Invalid("check at least one item, or give a disagreement threshold")
    except DomainError as exc:
        messages.error(request, f"Nothing was sent to the consensus round: {exc}")
        return redirect(back)
    if sent:
        messages.success(request, f"Sent {len(sent)} item{'s' if len(sent) != 1 else ''} to the consensus round.")
    else:
        messages.info(
            request,
            "No new item was sent: those items are in the consensus round already, or none reaches that disagreement.",
        )
    return redirect("agreement-consensus", slug=project.slug)


def parse_value(text: str, level: str, numeric: bool):
    """A typed answer as stored: None for an empty field; a number for ordinal, interval and ratio
    levels and for nominal items whose answers are numbers (a multiple-choice option's index); text
    otherwise. Raises ValueError with the reason in plain words."""
    text = text.strip()
    if not text:
        return None
    if level == "text":  # a free-text answer
        return text
    if level != "nominal" or numeric:
        if INTEGER.fullmatch(text):
            return int(text)
        if NUMBER.fullmatch(text) and math.isfinite(float(text)):
            return float(text)
        raise ValueError(
            f"{text[:40]!r} is not a number; type a number, like 3" + ("" if level == "nominal" else " or 2.5")
        )
    return text


def _prefill(value) -> str:
    return "" if value is None else str(value)


@login_required
@require_http_methods(["GET", "POST"])
def consensus_item(request, slug: str, pk: int):
    """One item of the consensus round: every rater's round-1 answer and, while open, a form for
    each rater's re-evaluated answer (prefilled with round 1), the consensus and a note
    (``services.record_consensus``). Once reconciled, both rounds side by side."""
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    ci = get_object_or_404(
        ConsensusItem.objects.select_related("scope", "reviewer", "sent_by"), pk=pk, scope__project=project
    )
    numeric = bool(ci.answers) and all(
        isinstance(a["value"], (int, float)) and not isinstance(a["value"], bool)
        for a in ci.answers
        if a["value"] is not None
    )
    typed = {"consensus": "", "note": "", "revised": [_prefill(a["value"]) for a in ci.answers]}
    errors, error, status = {}, "", 200
    if request.method == "POST" and ci.status == ConsensusItem.Status.OPEN:
        typed = {
            "consensus": request.POST.get("consensus", ""),
            "note": request.POST.get("note", ""),
            "revised": [request.POST.get(f"revised-{i}", "") for i in range(len(ci.answers))],
        }
        values = {}
        for field, text in [
            ("consensus", typed["consensus"]),
            *((f"revised-{i}", t) for i, t in enumerate(typed["revised"])),
        ]:
            try:
                values[field] = parse_value(text, ci.level, numeric)
            except ValueError as exc:
                errors[field] = str(exc)
        if not errors:
            try:
                services.record_consensus(
                    ci.pk,
                    project,
                    request.user,
                    consensus=values["consensus"],
                    note=typed["note"],
                    revised={a["rater"]: values[f"revised-{i}"] for i, a in enumerate(ci.answers)},
                )
            except DomainError as exc:
                error, status = f"Nothing was recorded: {exc}", status_of(exc)
                errors = {"consensus": str(exc)} if "consensus" in exc.errors else {}
            else:
                messages.success(
                    request,
                    "Consensus recorded; the scope's agreement is being computed again with "
                    "the re-evaluated answers (both rounds are kept).",
                )
                return redirect("agreement-consensus-item", slug=slug, pk=ci.pk)
        else:
            error, status = (
                "Nothing was recorded: "
                + "; ".join(
                    f"{'the consensus' if k == 'consensus' else 'the answer of ' + ci.answers[int(k[8:])]['rater']}: {v}"
                    for k, v in errors.items()
                ),
                400,
            )
        ci.refresh_from_db()
    elif request.method == "POST":
        error, status = "This item was reconciled already; nothing was changed.", 409
    revised = {r.rater: r.value for r in ci.ratings.all()}
    rows = [
        {
            "index": i,
            "rater": a["rater"],
            "first": shown(a["value"]),
            "typed": typed["revised"][i],
            "error": errors.get(f"revised-{i}", ""),
            "revised": shown(revised.get(a["rater"])),
            "changed": ci.status == ConsensusItem.Status.DONE and revised.get(a["rater"]) != a["value"],
        }
        for i, a in enumerate(ci.answers)
    ]
    categories = (
        []
        if ci.level == "text"
        else sorted(
            {str(a["value"]) for a in ci.answers if a["value"] is not None}
            | (
                set(scopes.DECISIONS)
                if ci.scope.key == scopes.VERIFICATION and not ci.subset.startswith("answers")
                else set()
            )
        )
    )
    studies, rating_sets = _titles(project)
    return render(
        request,
        "agreement/consensus_item.html",
        {
            "project": project,
            "ci": ci,
            "rows": rows,
            "typed": typed,
            "errors": errors,
            "error": error,
            "categories": categories,
            "numeric": ci.level != "text" and (numeric or ci.level != "nominal"),
            "texts": ci.level == "text",
            "scope_title": dashboard.scope_title(ci.scope.key, studies, rating_sets),
            "subset_title": dashboard.subset_title(ci.subset, ci.scope.key),
            "consensus_shown": shown(ci.consensus),
        },
        status=status,
    )
