"""Browser pages of model evaluation: the leaderboard (with the form that starts an evaluation), one
evaluation's page (scores broken down with intervals, failures, the re-judge sample and its
agreement), and the re-judge page (one judged answer at a time; keys R and W).

For the people who run a project (``access.OVERSEE_ROLES``); starting, cancelling and drawing a
sample are for admins and researchers. Annotators get 403, non-members 404. A refused form is
shown again with the error in plain words and what was typed (status 400 or 409).
"""

from __future__ import annotations

import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotator import access
from annotator.errors import DomainError, Invalid, status_of
from annotator.evaluation import metrics, rejudge, runs, selectors
from annotator.evaluation.models import (
    FRAMES_DEFAULT,
    FRAMES_MAX,
    FRAMES_MIN,
    Evaluation,
    RejudgeItem,
    RejudgeSample,
    Rubric,
)
from annotator.inference.models import ModelServer
from annotator.qa.models import QAType

WHOLE = re.compile(r"[0-9]{1,20}")  # ASCII digits only: str.isdigit() also takes "²", which int() refuses
DIMENSION_TITLES = {
    "qa_type": "QA type",
    "illumination": "Illumination",
    "source": "Source",
    "provenance": "Provenance",
}
DIMENSION_HEADINGS = {
    "qa_type": "By QA type",
    "illumination": "By illumination (day against night)",
    "source": "By source (real against synthetic)",
    "provenance": "By provenance (kept against modified or added)",
}
GROUP_WORDS = {"kept": "machine, kept", "modified_or_added": "machine, modified; or human, added"}


def _whole(text: str, what: str, low: int, high: int) -> int:
    """A form's whole number within [low, high]; raises Invalid in plain words."""
    text = (text or "").strip()
    if not WHOLE.fullmatch(text) or not low <= int(text) <= high:
        raise Invalid(f"{what} is a whole number from {low} to {high}", errors={what: "out of bounds"})
    return int(text)


@login_required
@require_http_methods(["GET", "POST"])
def leaderboard(request, slug: str):
    """Every evaluation of the project with its scores and intervals; POST starts one."""
    project, role = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    typed = {
        "server": "",
        "model": "",
        "frames": str(FRAMES_DEFAULT),
        "qa_type": "",
        "judge_server": "",
        "rubric": Rubric.EGONIGHT,
    }
    error, status = "", 200
    if request.method == "POST":
        if role not in access.RESEARCH_ROLES:
            raise PermissionDenied("only admins and researchers start evaluations")
        typed = {k: request.POST.get(k, v).strip() for k, v in typed.items()}
        try:
            evaluation = runs.start(
                project,
                server=typed["server"],
                model=typed["model"],
                n_frames=_whole(typed["frames"], "frames", FRAMES_MIN, FRAMES_MAX),
                qa_type=typed["qa_type"],
                judge_server=typed["judge_server"],
                rubric=typed["rubric"],
                user=request.user,
            )
        except DomainError as exc:
            error, status = f"Nothing was started: {exc}", status_of(exc)
        else:
            messages.success(
                request,
                f"Evaluation {evaluation.pk} of {evaluation.model} is queued; a worker runs it "
                "(reload its page to follow it).",
            )
            return redirect("evaluation-detail", slug=slug, pk=evaluation.pk)
    return render(
        request,
        "evaluation/leaderboard.html",
        {
            "project": project,
            "rows": selectors.leaderboard(project),
            "can_start": role in access.RESEARCH_ROLES,
            "servers": ModelServer.objects.filter(project=project).order_by("name"),
            "qa_types": QAType.objects.filter(project=project).order_by("slug"),
            "rubrics": Rubric.choices,
            "typed": typed,
            "error": error,
            "frames_min": FRAMES_MIN,
            "frames_max": FRAMES_MAX,
        },
        status=status,
    )


def _groups(report: dict, type_names: dict[str, str]) -> list[dict]:
    """The breakdown tables, each row named in words: a QA type by its name (not its slug, issue 21),
    a provenance group by ``GROUP_WORDS``; other values (day, night, real) are words already."""
    words = {"qa_type": type_names}
    return [
        {
            "dim": dim,
            "title": DIMENSION_TITLES[dim],
            "heading": DIMENSION_HEADINGS[dim],
            "rows": [
                {**g, "words": words.get(dim, GROUP_WORDS).get(g["value"], g["value"])}
                for g in report["breakdown"][dim]
            ],
        }
        for dim in metrics.DIMENSIONS
    ]


@login_required
@require_http_methods(["GET", "POST"])
def detail(request, slug: str, pk: int):
    """One evaluation's report; POST ``action=cancel`` cancels it, ``action=sample`` draws the
    re-judge sample (``size``, optional ``seed``, ``replace``)."""
    project, role = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    evaluation = get_object_or_404(Evaluation.objects.select_related("created_by"), pk=pk, project=project)
    typed = {"size": str(rejudge.SIZE_DEFAULT), "seed": ""}
    error, status = "", 200
    if request.method == "POST":
        if role not in access.RESEARCH_ROLES:
            raise PermissionDenied("only admins and researchers cancel evaluations and draw samples")
        action = request.POST.get("action", "")
        try:
            if action == "cancel":
                runs.cancel(evaluation)
                messages.success(
                    request,
                    "Cancelled: items not started will not be; items in flight stop before their next model call.",
                )
            elif action == "sample":
                typed = {"size": request.POST.get("size", "").strip(), "seed": request.POST.get("seed", "").strip()}
                seed = _whole(typed["seed"], "the seed", 0, rejudge.SEED_MAX) if typed["seed"] else None
                sample = rejudge.create_sample(
                    evaluation,
                    size=_whole(typed["size"], "the sample size", rejudge.SIZE_MIN, rejudge.SIZE_MAX),
                    seed=seed,
                    replace=request.POST.get("replace") == "1",
                    user=request.user,
                )
                messages.success(request, f"Drew {sample.n_items} judged answers to re-judge (seed {sample.seed}).")
            else:
                raise Invalid("choose cancel or sample")
        except DomainError as exc:
            error, status = f"Nothing was changed: {exc}", status_of(exc)
        else:
            return redirect("evaluation-detail", slug=slug, pk=pk)
        evaluation.refresh_from_db()
    report = selectors.report(evaluation)
    return render(
        request,
        "evaluation/detail.html",
        {
            "project": project,
            "e": evaluation,
            "r": report,
            "groups": _groups(report, dict(QAType.objects.filter(project=project).values_list("slug", "name"))),
            "can_start": role in access.RESEARCH_ROLES,
            "active": evaluation.status in (Evaluation.Status.QUEUED, Evaluation.Status.RUNNING),
            "typed": typed,
            "error": error,
            "size_max": rejudge.SIZE_MAX,
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def rejudge_page(request, slug: str, pk: int):
    """The re-judge queue of one evaluation: the answer the person holds with the judge's label,
    score and reason, and two buttons (keys R and W). POST ``action=next`` takes the next answer;
    ``verdict`` (right or wrong) with ``item`` records it and takes the next one."""
    project, _ = access.require(request.user, access.OVERSEE_ROLES, slug=slug)
    evaluation = get_object_or_404(Evaluation, pk=pk, project=project)
    sample = RejudgeSample.objects.filter(evaluation=evaluation).first()
    here = reverse("evaluation-rejudge", kwargs={"slug": slug, "pk": pk})
    if request.method == "POST":
        if sample is None:
            messages.error(request, "This evaluation has no re-judge sample yet.")
            return redirect(here)
        try:
            if request.POST.get("verdict"):
                item = rejudge.item_for(project, _whole(request.POST.get("item", ""), "item", 1, 2**63 - 1))
                if item.sample_id != sample.pk:
                    raise Invalid("that answer is not in this evaluation's sample")
                rejudge.record(item.pk, request.user, request.POST["verdict"])
            if rejudge.next_item(sample, request.user) is None and sample.items.filter(verdict="").exists():
                messages.info(
                    request,
                    "Every answer left is being re-judged by someone else right now; try again in a few minutes.",
                )
        except DomainError as exc:
            messages.error(request, f"Nothing was recorded: {exc}")
        return redirect(here)
    item = rejudge.held_item(sample, request.user) if sample else None
    counts = sample.items.exclude(verdict="").count() if sample else 0
    left = sample.items.filter(verdict="").count() if sample else 0
    return render(
        request,
        "evaluation/rejudge.html",
        {
            "project": project,
            "e": evaluation,
            "sample": sample,
            "item": item,
            "p": item.prediction if item else None,
            "judged": counts,
            "left": left,
            "status": rejudge.status(evaluation),
            "verdicts": RejudgeItem.Verdict,
        },
    )
