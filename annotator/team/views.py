"""The team page for a project's admins (issue 20, sections 5 and 6): per-annotator figures over a
period, the pay rate and the pay report, with a CSV download.

Admins only (``access.MANAGE_ROLES``): others get 403, non-members 404. The period is a named
preset (``selectors.PRESETS``, this month by default) or days ``from`` to ``to`` (``custom``); a
bad one re-renders the form with the reason in words (400) and shows no figures. A refused rate
keeps what was typed, with each field's error (400).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotator import access
from annotator.errors import Invalid
from annotator.team import pay, selectors, services, stats
from annotator.team.figures import Period
from annotator.team.models import PayRate


def _period(params) -> tuple[Period, dict]:
    """The period a query asks for, and what to show in the form. Raises Invalid."""
    name = params.get("period") or ("custom" if params.get("from") or params.get("to") else "month")
    typed = {"period": name, "from": params.get("from", ""), "to": params.get("to", "")}
    if name not in selectors.PRESETS:
        raise Invalid("unknown period", errors={"period": "one of: " + ", ".join(selectors.PRESETS)})
    if name == "custom":
        first, last = selectors.parse_day(typed["from"], "from"), selectors.parse_day(typed["to"], "to")
    else:
        first, last = selectors.preset_dates(name)
        typed.update({"from": first.isoformat() if first else "", "to": last.isoformat() if last else ""})
    return selectors.period_of(first, last), typed


def _duration(seconds) -> str:
    if seconds is None:
        return "–"
    s = round(seconds)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    return f"{s // 60} min {s % 60:02d} s"


def _share(value, n=None) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.1f}%" + (f" (n = {n})" if n is not None else "")


def _gold(g: dict) -> str:
    if g["value"] is None:
        return "–"
    ci = f" [{100 * g['ci'][0]:.1f}–{100 * g['ci'][1]:.1f}%]" if g["ci"] else ""
    n = f" (n = {g['n']})" if g["n"] is not None else ""
    return f"{100 * g['value']:.1f}%{ci}{n}"


def _shown(row: dict) -> dict:
    return {
        "user": row["user"],
        "units": row["units"],
        "qa_pairs": row["qa_pairs"],
        "active": _duration(row["active_s"]),
        "per_unit": _duration(row["time_per_unit_s"]) if row["time_per_unit_s"] is not None else "–",
        "reported": _duration(row["reported_s"]),
        "gold": _gold(row["gold_accuracy"]),
        "override": _share(row["override_rate"], row["override_n"]),
        "agreement": _share(row["agreement"], row["agreement_n"]),
        "rework": _share(row["rework_rate"]),
    }


def _rate_form(rate: PayRate | None) -> dict:
    if rate is None:
        return {
            "basis": "video",
            "amount": "",
            "currency": "EUR",
            "count_gold": True,
            "count_qualification": False,
            "count_rework": True,
        }
    return {
        "basis": rate.basis,
        "amount": str(rate.amount),
        "currency": rate.currency,
        "count_gold": rate.count_gold,
        "count_qualification": rate.count_qualification,
        "count_rework": rate.count_rework,
    }


@login_required
@require_http_methods(["GET", "POST"])
def team_page(request, slug: str):
    project, _ = access.require(request.user, access.MANAGE_ROLES, slug=slug)
    status, rate_errors, rate_typed = 200, {}, None
    if request.method == "POST":
        p = request.POST
        rate_typed = {
            "basis": p.get("basis", ""),
            "amount": p.get("amount", ""),
            "currency": p.get("currency", ""),
            "count_gold": "count_gold" in p,
            "count_qualification": "count_qualification" in p,
            "count_rework": "count_rework" in p,
        }
        try:
            rate = services.set_rate(project, **rate_typed, user=request.user)
        except Invalid as exc:
            status, rate_errors = 400, exc.errors
        else:
            messages.success(request, f"Pay rate saved: {rate}.")
            query = request.GET.urlencode()
            return redirect(reverse("team-page", kwargs={"slug": slug}) + (f"?{query}" if query else "") + "#pay")
    error, typed, rows, report = (
        None,
        {"period": request.GET.get("period", ""), "from": request.GET.get("from", ""), "to": request.GET.get("to", "")},
        None,
        None,
    )
    try:
        period, typed = _period(request.GET)
    except Invalid as exc:
        error = "The period has errors: " + "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
        status = 400
    else:
        with stats.shared():  # the people and their active time, read once for both tables
            rows = [_shown(r) for r in stats.rows(project, period)]
            report = pay.report(project, period)
    rate = pay.rate_of(project)
    return render(
        request,
        "team/team.html",
        {
            "project": project,
            "typed": typed,
            "presets": selectors.PRESETS.items(),
            "error": error,
            "rows": rows,
            "report": report,
            "rate": rate,
            "rate_form": rate_typed or _rate_form(rate),
            "rate_errors": rate_errors,
            "bases": PayRate.Basis.choices,
            "query": request.GET.urlencode(),
            "csv_url": reverse("team-pay-csv", kwargs={"slug": slug})
            + (f"?{request.GET.urlencode()}" if request.GET else ""),
        },
        status=status,
    )


@login_required
def pay_csv(request, slug: str):
    """The page's pay report as CSV (cells guarded against spreadsheet formulas); 400 in words for a
    bad period."""
    project, _ = access.require(request.user, access.MANAGE_ROLES, slug=slug)
    try:
        period, typed = _period(request.GET)
    except Invalid as exc:
        words = "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
        return HttpResponse(f"the period has errors: {words}", status=400, content_type="text/plain; charset=utf-8")
    data = pay.report(project, period)
    span = f"{typed['from'] or 'start'}-to-{typed['to'] or 'today'}"
    response = HttpResponse("".join(pay.csv_lines(data)), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-pay-{span}.csv"'
    return response
