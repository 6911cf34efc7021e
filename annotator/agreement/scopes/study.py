"""The ``study:<name>`` scopes: one study's answered, scored trials of participants not excluded
(practice and attention items left out). Multiple choice: the chosen options, nominal; Likert: the
scores per criterion and per control group, ordinal and interval; open answers: semantic agreement;
ordering: Kendall's W across participants and mean pairwise tau-b, per item."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, Max, Q
from django.urls import reverse

from annotator.agreement.scopes.base import Dataset, ScopeKind, register
from annotator.projects.models import Project
from annotator.qa.selectors import pseudonym
from annotator.studies.models import Item, Study, Trial


def _discover(project: Project) -> dict[str, dict]:
    out = {}
    for study in (
        Study.objects.filter(project=project)
        .annotate(
            n=Count("participants__trials", filter=Q(participants__trials__answered_at__isnull=False)),
            last=Max("participants__trials__answered_at"),
            excluded=Count("participants", filter=Q(participants__excluded=True), distinct=True),
        )
        .filter(n__gt=0)
    ):
        out[f"study:{study.name}"] = {"n": study.n, "last": study.last.isoformat(), "excluded": study.excluded}
    return out


def _study(study: Study) -> list[Dataset]:
    rows = (
        Trial.objects.filter(
            participant__study=study,
            practice=False,
            item__role=Item.Role.SCORED,
            answered_at__isnull=False,
            participant__excluded=False,
            participant__kind="person",
        )
        .values_list(
            "item_id",
            "item__key",
            "item__condition__label",
            "item__group",
            "item__qa_pair_id",
            "item__payload",
            "participant__user_id",
            "response",
            "timed_out",
        )
        .order_by("id")
    )
    project = study.project
    results = reverse("study-results", kwargs={"slug": project.slug, "name": study.name})

    def label(item_key: str, payload: dict, qa_pair_id) -> tuple[str, str]:
        words = payload.get("question") or payload.get("title") or payload.get("text") or ""
        link = reverse("qa-detail", kwargs={"slug": project.slug, "pk": qa_pair_id}) if qa_pair_id else results
        return (f"{item_key}: {str(words)[:160]}" if words else item_key, link)

    labels: dict[str, tuple[str, str]] = {}
    if study.kind == "ordering":
        orders: dict[str, list] = defaultdict(list)
        for item_id, key, cond, _group, qa_pair_id, payload, user_id, response, timed_out in rows:
            name = f"{cond}/{key or item_id}"
            labels.setdefault(name, label(name, payload, qa_pair_id))
            if isinstance(response, list) and not timed_out:
                orders[name].append((pseudonym(user_id), response))
        return [Dataset("", "orderings", orderings=dict(orders), labels=labels)]
    if study.kind == "open_answer":
        texts: dict[str, list] = defaultdict(list)
        for item_id, key, _cond, _group, qa_pair_id, payload, user_id, response, timed_out in rows:
            name = key or str(item_id)
            labels.setdefault(name, label(name, payload, qa_pair_id))
            if isinstance(response, str) and response.strip() and not timed_out:
                texts[name].append((pseudonym(user_id), response))
        return [Dataset("", "texts", texts=dict(texts), labels=labels)]
    if study.kind == "mcq":
        # The same QA pair in two time-limit conditions is one item (its options are shuffled once, from
        # the pair's recorded seed, so an index means the same option in both): pooled, and per condition.
        pooled, per_condition = [], defaultdict(list)
        for item_id, key, cond, _group, qa_pair_id, payload, user_id, response, timed_out in rows:
            name = key or str(item_id)
            labels.setdefault(name, label(name, payload, qa_pair_id))
            if isinstance(response, int) and not timed_out:
                triple = (name, pseudonym(user_id), response)
                pooled.append(triple)
                per_condition[cond].append(triple)
        return [
            Dataset("", "ratings", ("nominal",), pooled, labels=labels),
            *(
                Dataset(f"condition={c}", "ratings", ("nominal",), t, labels=labels)
                for c, t in sorted(per_condition.items())
            ),
        ]
    if study.kind == "likert":
        # Each criterion is a condition (seed 002 App. D: realism, contextual consistency; seed 004 Sec. 4.5:
        # relevance, correctness). Kendall's W and alpha at the ordinal level, alpha and the ICC at the interval one.
        per: dict[str, list] = defaultdict(list)
        for item_id, _key, cond, group, qa_pair_id, payload, user_id, response, timed_out in rows:
            name = str(item_id)  # a real and a random-matched item of one pair share a key: not the same item
            labels.setdefault(name, label(f"item {item_id}", payload, qa_pair_id))
            score = response.get("score") if isinstance(response, dict) else None
            if isinstance(score, int) and not isinstance(score, bool) and not timed_out:
                triple = (name, pseudonym(user_id), score)
                per[f"criterion={cond}"].append(triple)
                if group:
                    per[f"criterion={cond}/group={group}"].append(triple)
        metrics = ("krippendorff_alpha", "kendall_w", "icc", "percent_agreement")
        return [
            Dataset(subset, "ratings", ("ordinal", "interval"), triples, metrics=metrics, labels=labels)
            for subset, triples in sorted(per.items())
        ]
    return []


register(
    ScopeKind(
        "study",
        named=True,
        discover=_discover,
        exists=lambda project, name: Study.objects.filter(project=project, name=name).exists(),
        datasets=lambda project, name: _study(Study.objects.get(project=project, name=name)),
        position=20,
    )
)
