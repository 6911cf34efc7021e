"""Browser pages of pipeline runs (issue 10, "Progress"): a project's runs with their progress and a
form to start one, and one run's page with calls per stage, failures, the latest failed calls and
Cancel / Resume.

For the people who run a project (``access.OVERSEE_ROLES``) to read; admins and researchers
(``access.RESEARCH_ROLES``) start, cancel and resume. Annotators get 403, non-members 404. Runs that
are queued or running refresh their figures by polling the API from ``static/js/drafts/runs.js``
(the CSP forbids inline script; its configuration comes through ``json_script``). A refused start
form is shown again with the reason on the field concerned and what was typed.
"""

from __future__ import annotations

import json
import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotator import access
from annotator.core.params import PARAMS_MAX_KEYS, check_params
from annotator.drafts import runs, selectors
from annotator.drafts.models import DraftRun
from annotator.drafts.pipelines import PIPELINES, stage_names
from annotator.drafts.templatetags.drafts_tags import stage_words
from annotator.errors import Conflict, DomainError, Invalid, status_of
from annotator.qa.models import QAType

PAGE_SIZE = 25
POLL_MS = 2000  # how often a page with a queued or running run asks the API for its progress
ACTIVE = (DraftRun.Status.QUEUED, DraftRun.Status.RUNNING)
FIELDS = ("pipeline", "server", "qa_type", "frames", "questions", "more")


def _pipelines() -> list[dict]:
    """The pipelines the start form offers: value, label and stages (model stages only)."""
    return [{"value": p.name, "label": p.label, "stages": list(p.stages)} for p in PIPELINES.values() if p.in_form]


def _stages(pipelines: list[dict]) -> list[dict]:
    """Every stage of the offered pipelines, in first-seen order, with the pipelines that use it."""
    seen: dict[str, list[str]] = {}
    for p in pipelines:
        for stage in p["stages"]:
            seen.setdefault(stage, []).append(p["value"])
    return [{"name": s, "pipelines": ps} for s, ps in seen.items()]


def in_stage_order(stages) -> list[str]:
    """Stage names in pipeline order (``pipelines.stage_names``; a stored run's keys come back sorted)."""
    order = stage_names()
    return sorted(stages, key=lambda s: (order.index(s) if s in order else len(order), s))


def server_groups(servers: dict[str, dict]) -> list[str]:
    """A run's servers in words, stages sharing a server together, each stage by its words
    (``drafts_tags.STAGE_WORDS``, issue 21): ["Captioning the clip, Writing questions: gpt (gpt-4o)", ...]."""
    groups: dict[tuple[str, str], list[str]] = {}
    for stage in in_stage_order(servers):
        snap = servers[stage]
        groups.setdefault((snap.get("server", ""), snap.get("model", "")), []).append(stage_words(stage))
    return [
        f"{', '.join(stages)}: {server} ({model})" if server else f"{', '.join(stages)}: {model}"
        for (server, model), stages in groups.items()
    ]


def _param_value(text: str):
    """A typed parameter value: JSON when it parses (numbers, true/false, lists), else the text
    (as ``draft --param``)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested deeper than Python recurses
        return text


MORE_MAX_CHARS = 4000  # the "other parameters" text area; check_params bounds what it parses to
WHOLE = re.compile(r"[0-9]{1,9}")  # ASCII digits only: str.isdigit() accepts "²", which int() refuses


def _whole(text: str, name: str, low: int, high: int, errors: dict) -> int | None:
    text = text.strip()
    if not text:
        return None
    if not WHOLE.fullmatch(text) or not low <= int(text) <= high:
        errors[name] = f"{name} must be a whole number from {low} to {high}"  # as the pipelines say it
        return None
    return int(text)


def parse_start(post, pipelines: list[dict]) -> tuple[dict, dict, dict]:
    """The start form's fields: (typed, request, errors). ``typed`` is what was typed (shown
    again on refusal), ``request`` the arguments of ``runs.start``, ``errors`` field -> message."""
    typed = {name: post.get(name, "") for name in FIELDS}
    typed["cache"] = post.get("cache") == "on"
    typed["stage_servers"] = {s["name"]: post.get(f"stage-{s['name']}", "") for s in _stages(pipelines)}
    errors: dict[str, str] = {}
    pipeline = typed["pipeline"].strip()
    chosen = next((p for p in pipelines if p["value"] == pipeline), None)
    if chosen is None:
        errors["pipeline"] = "choose a pipeline from the list"
    params: dict = {}
    for name, high in (("frames", 32), ("questions", 10)):
        value = _whole(typed[name], name, 1, high, errors)
        if value is not None:
            params[name] = value
    if len(typed["more"]) > MORE_MAX_CHARS:
        errors["more"] = f"the other parameters are at most {MORE_MAX_CHARS} characters"
    for n, line in enumerate(typed["more"].splitlines() if "more" not in errors else [], 1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip() or not value.strip():
            errors["more"] = f"line {n}: write one parameter a line as NAME=VALUE, like k=3 (not {line.strip()[:40]!r})"
            break
        params[key.strip()] = _param_value(value.strip())
    if not typed["cache"]:
        params["cache"] = False
    if "more" not in errors:
        try:
            check_params(params)
        except Invalid as exc:
            errors["more"] = str(exc)
    # Overrides of stages the chosen pipeline does not have are ignored (the script hides them).
    stage_servers = {
        stage: name for stage, name in typed["stage_servers"].items() if name and chosen and stage in chosen["stages"]
    }
    qa_type = typed["qa_type"].strip()  # blank: the pipeline's default (llm: open_ended)
    request = {
        "pipeline": pipeline,
        "server": typed["server"].strip(),
        "stage_servers": stage_servers,
        "qa_type": qa_type,
        "params": params,
    }
    return typed, request, errors


# Which form field a domain error of ``runs.start`` is about, by the key of its ``errors``.
ERROR_FIELDS = {
    "pipeline": "pipeline",
    "server": "server",
    "stage_servers": "stage_servers",
    "qa_type": "qa_type",
    "params": "more",
    "frames": "frames",
    "questions": "questions",
}


def _field_of(exc: DomainError) -> str:
    for key in exc.errors:
        if key in ERROR_FIELDS:
            return ERROR_FIELDS[key]
    return "more" if isinstance(exc, Invalid) else ""


@login_required
@require_http_methods(["GET", "POST"])
def run_list(request, slug: str):
    """The project's runs, newest first, 25 a page, and (for admins and researchers) the start form;
    POST starts a run (``runs.start``) and goes to its page."""
    project, role = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    can_run = role in access.RESEARCH_ROLES
    pipelines = _pipelines()
    typed = {
        "pipeline": "egonight" if "egonight" in PIPELINES else pipelines[0]["value"],
        "server": "",
        "qa_type": "",
        "frames": "",
        "questions": "",
        "more": "",
        "cache": True,
        "stage_servers": {},
    }
    errors: dict[str, str] = {}
    error, status = "", 200
    if request.method == "POST":
        access.require(request.user, access.RESEARCH_ROLES, slug=slug)
        typed, args, errors = parse_start(request.POST, pipelines)
        if errors:
            error, status = "Nothing was started: " + "; ".join(errors.values()), 400
        else:
            try:
                launch = runs.start(project, args.pop("pipeline"), **args, user=request.user)
                if launch.run is None:
                    why = (
                        ", ".join(f"{n} {reason}" for reason, n in launch.skipped.items()) or "the project has no video"
                    )
                    raise Conflict(f"no video needs this pipeline's work ({why})")
            except DomainError as exc:
                error, status = f"Nothing was started: {exc}", status_of(exc)
                field = _field_of(exc)
                if field:
                    errors[field] = str(exc)
            else:
                skipped = ", ".join(f"{n} {reason}" for reason, n in launch.skipped.items())
                messages.success(
                    request,
                    f"Run {launch.run.pk} started: {launch.queued} video{'s' if launch.queued != 1 else ''} "
                    f"queued{f'; left out: {skipped}' if skipped else ''}.",
                )
                return redirect("draft-run", slug=slug, pk=launch.run.pk)
    try:
        page = max(1, min(int(request.GET.get("page", "1")), 10**6))
    except ValueError:
        page = 1
    count, rows = selectors.run_rows(project, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
    for row in rows:
        v = row["videos"]
        row["finished"] = v["done"] + v["failed"] + v["cancelled"]
        row["server_groups"] = server_groups(row["servers"])
        row["active"] = row["status"] in ACTIVE
    servers = list(selectors.model_servers(project))
    if not typed["server"] and servers:
        typed["server"] = servers[0].name
    stages = [{**s, "chosen": typed["stage_servers"].get(s["name"], "")} for s in _stages(pipelines)]
    pages = max(1, -(-count // PAGE_SIZE))
    return render(
        request,
        "drafts/run_list.html",
        {
            "project": project,
            "rows": rows,
            "count": count,
            "page": page,
            "pages": pages,
            "can_run": can_run,
            "pipelines": pipelines,
            "stages": stages,
            "servers": servers,
            "typed": typed,
            "errors": errors,
            "error": error,
            "params_max": PARAMS_MAX_KEYS,
            "server_known": any(s.name == typed["server"] for s in servers),
            "qa_types": list(QAType.objects.filter(project=project).order_by("slug").values_list("slug", flat=True)),
            "config": {
                "kind": "list",
                "poll_ms": POLL_MS,
                "api": reverse("api-runs", kwargs={"slug": slug})
                + f"?limit={PAGE_SIZE}&offset={(page - 1) * PAGE_SIZE}",
                "pipelines": {p["value"]: p["stages"] for p in pipelines},
            },
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def run_detail(request, slug: str, pk: int):
    """One run: its servers, parameters and progress, calls per stage, failed videos and the latest
    failed calls. POST ``action`` cancel or resume (admins and researchers)."""
    project, role = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    run = get_object_or_404(DraftRun.objects.select_related("created_by"), pk=pk, project=project)
    if request.method == "POST":
        access.require(request.user, access.RESEARCH_ROLES, slug=slug)
        action = request.POST.get("action", "")
        if action not in ("cancel", "resume"):
            return HttpResponseBadRequest("action must be cancel or resume")
        try:
            if action == "cancel":
                runs.cancel(run)
                messages.success(
                    request,
                    f"Run {run.pk} cancelled: videos not started will not be, and videos in flight "
                    "stop before their next model call and write nothing.",
                )
            else:
                n = runs.resume(run)
                messages.success(
                    request,
                    f"Run {run.pk} resumed: {n} video{'s' if n != 1 else ''} queued again; stages "
                    "that succeeded before come from the cache.",
                )
        except DomainError as exc:
            messages.error(request, f"Nothing was changed: {exc}")
        return redirect("draft-run", slug=slug, pk=run.pk)
    report = selectors.run_report(run)
    report["calls"] = {stage: report["calls"][stage] for stage in in_stage_order(report["calls"])}
    v = report["videos"]
    return render(
        request,
        "drafts/run_detail.html",
        {
            "project": project,
            "run": run,
            "report": report,
            "can_run": role in access.RESEARCH_ROLES,
            "finished": v["done"] + v["failed"] + v["cancelled"],
            "active": run.status in ACTIVE,
            "can_cancel": run.status in ACTIVE,
            "can_resume": run.status in (DraftRun.Status.FAILED, DraftRun.Status.CANCELLED),
            "server_groups": server_groups(report["servers"]),
            # Pairs, not dicts: a template's ``summary.items`` would read a count named "items" (VUDG's).
            "summary_rows": sorted(report["summary"].items()),
            "call_rows": list(report["calls"].items()),
            "params": json.dumps(report["params"], indent=1, ensure_ascii=False, sort_keys=True),
            "config": {
                "kind": "detail",
                "poll_ms": POLL_MS,
                "api": reverse("api-run", kwargs={"pk": run.pk}),
                "stage_order": list(stage_names()),
            },
        },
    )
