"""The ``verification`` scope: the first pass and the blind overlap passes over the same QA pairs
(``qa.Verdict``; double-checks are not blind and are left out). Keep, modify and delete are nominal
decisions per QA pair, for the whole project and per QA type and per illumination of the pair's
video; subset ``answers`` is the semantic agreement of the answers proposed by people who both kept
or modified a pair."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, Max
from django.urls import reverse

from annotator.agreement.scopes.base import Dataset, ScopeKind, register
from annotator.projects.models import Project
from annotator.qa.models import QueueItem, Verdict
from annotator.qa.selectors import pseudonym

VERIFICATION = "verification"
BLIND_PASSES = (QueueItem.Kind.FIRST_PASS, QueueItem.Kind.OVERLAP)
DECISIONS = ("keep", "modify", "delete")


def _discover(project: Project) -> dict[str, dict]:
    verdicts = Verdict.objects.filter(item__project=project, item__kind__in=BLIND_PASSES)
    if not verdicts.filter(item__kind=QueueItem.Kind.OVERLAP).exists():
        return {}
    return {VERIFICATION: dict(verdicts.aggregate(n=Count("id"), last=Max("id")))}


def _verification(project: Project, unit_id: int | None = None) -> list[Dataset]:
    """The verification scope's datasets (see the module's docstring); only the QA pairs of work unit
    ``unit_id`` when given (what its blind passes decided: ``unit_decisions``)."""
    rows = Verdict.objects.filter(
        item__project=project, item__kind__in=BLIND_PASSES, qa_pair__isnull=False, action__in=DECISIONS
    )
    if unit_id is not None:
        rows = rows.filter(item__unit_id=unit_id)
    rows = rows.values_list(
        "qa_pair_id",
        "user_id",
        "action",
        "after",
        "qa_pair__qa_type__slug",
        "qa_pair__video__illumination",
        "qa_pair__question",
    ).order_by("id")
    decisions: dict[str, dict[str, str]] = defaultdict(dict)
    answers: dict[str, dict[str, str]] = defaultdict(dict)
    meta: dict[str, tuple[str, str, str]] = {}
    for pair_id, user_id, action, after, qa_type, illumination, question in rows:
        item, rater = str(pair_id), pseudonym(user_id)
        decisions[item][rater] = action  # a later pass of the same person wins
        if action in ("keep", "modify") and isinstance(after, dict) and isinstance(after.get("answer"), str):
            answers[item][rater] = after["answer"]
        else:
            answers[item].pop(rater, None)
        meta[item] = (qa_type, illumination or "unknown", question)
    judged = {item: raters for item, raters in decisions.items() if len(raters) >= 2}
    labels = {
        item: (
            f"QA {item}: {meta[item][2][:160]}",
            reverse("qa-detail", kwargs={"slug": project.slug, "pk": int(item)}),
        )
        for item in judged
    }

    def decided(keep) -> list[tuple[str, str, object]]:
        return [
            (item, rater, action) for item, raters in judged.items() if keep(item) for rater, action in raters.items()
        ]

    out = [Dataset("", "ratings", ("nominal",), decided(lambda item: True), labels=labels)]
    out.append(
        Dataset(
            "answers",
            "texts",
            texts={item: sorted(a.items()) for item, a in answers.items() if len(a) >= 2},
            labels=labels,
        )
    )
    for i, dim in ((0, "qa_type"), (1, "illumination")):
        for value in sorted({meta[item][i] for item in judged}):
            out.append(
                Dataset(
                    f"{dim}={value}",
                    "ratings",
                    ("nominal",),
                    decided(lambda item, i=i, value=value: meta[item][i] == value),
                    labels=labels,
                )
            )
    return out


def unit_decisions(project: Project, unit_id: int) -> Dataset:
    """The keep, modify and delete decisions of the blind passes (first pass and overlap) over the QA
    pairs of one work unit, as the verification scope's whole dataset holds them (issue 20: an overlap
    pass's disagreements go to the consensus round)."""
    return _verification(project, unit_id)[0]


register(
    ScopeKind(
        VERIFICATION,
        named=False,
        discover=_discover,
        exists=lambda project, name: True,
        datasets=lambda project, name: _verification(project),
        position=10,
    )
)
