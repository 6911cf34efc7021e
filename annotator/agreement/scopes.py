"""What agreement is measured on: each scope's inputs, read from the tables that hold the judgments.

A scope key names one body of judgments in a project:

- ``verification``: the first pass and the blind overlap passes over the same QA pairs
  (``qa.Verdict``; double-checks are not blind and are left out). Keep, modify and delete are
  nominal decisions per QA pair, for the whole project and per QA type and per illumination of the
  pair's video; subset ``answers`` is the semantic agreement of the answers proposed by people who
  both kept or modified a pair.
- ``study:<name>``: one study's answered, scored trials of participants not excluded (practice and
  attention items left out). Multiple choice: the chosen options, nominal; Likert: the scores per
  criterion and per control group, ordinal and interval; open answers: semantic agreement;
  ordering: Kendall's W across participants and mean pairwise tau-b, per item.
- ``ratings:<name>``: a rating set (external ratings, or a model judge against human re-judges).

Raters are pseudonyms (``qa.selectors.pseudonym``) for people, as in every export; a rating set's
raters are the names it came with. Each scope gives ``Dataset`` objects, one per subset; a
dataset's ``items`` key is the scope's item key (a QA pair id, a study item key, a rating set's item).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, Max, Q
from django.urls import reverse

from annotator.agreement.models import ConsensusItem, Rating, RatingSet
from annotator.projects.models import Project
from annotator.qa.models import QueueItem, Verdict
from annotator.qa.selectors import pseudonym
from annotator.studies.models import Item, Study, Trial

VERIFICATION = "verification"
BLIND_PASSES = (QueueItem.Kind.FIRST_PASS, QueueItem.Kind.OVERLAP)
DECISIONS = ("keep", "modify", "delete")
JUDGE_METRICS = ("percent_agreement", "cohen_kappa")


@dataclass
class Dataset:
    """One subset of a scope's judgments, ready for ``annotator.scoring.agreement``.

    ``kind``: ``ratings`` (``triples`` of (item, rater, value), measured at each of ``levels``),
    ``texts`` (``texts[item]`` = [(rater, text)], semantic agreement) or ``orderings``
    (``orderings[item]`` = [(rater, [element ids])]). ``metrics`` restricts the metrics (None: all
    that apply). ``labels[item]`` = (what it is, in words; link to its history or '')."""

    subset: str
    kind: str
    levels: tuple[str, ...] = ("nominal",)
    triples: list[tuple[str, str, object]] = field(default_factory=list)
    texts: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    orderings: dict[str, list[tuple[str, list]]] = field(default_factory=dict)
    metrics: tuple[str, ...] | None = None
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)

    def canonical(self) -> dict:
        """The inputs as plain sorted JSON (for the computation's fingerprint)."""
        return {
            "subset": self.subset,
            "kind": self.kind,
            "levels": list(self.levels),
            "triples": sorted([list(t) for t in self.triples], key=lambda t: (t[0], t[1])),
            "texts": {k: sorted(v) for k, v in sorted(self.texts.items())},
            "orderings": {k: sorted([[r, list(map(str, o))] for r, o in v]) for k, v in sorted(self.orderings.items())},
            "metrics": list(self.metrics) if self.metrics else None,
        }


# ------------------------------------------------------------------------------ discovery


def discover(project: Project) -> dict[str, dict]:
    """Every scope of ``project`` that has judgments, with its watermark: key -> watermark (a small
    JSON object that changes whenever the scope's inputs may have changed). A few aggregate queries."""
    out: dict[str, dict] = {}
    verdicts = Verdict.objects.filter(item__project=project, item__kind__in=BLIND_PASSES)
    if verdicts.filter(item__kind=QueueItem.Kind.OVERLAP).exists():
        out[VERIFICATION] = dict(verdicts.aggregate(n=Count("id"), last=Max("id")))
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
    for rs in RatingSet.objects.filter(project=project).annotate(n=Count("ratings"), last=Max("ratings__id")):
        out[f"ratings:{rs.name}"] = {"n": rs.n, "last": rs.last, "level": rs.level, "source": rs.source}
    decided = (
        ConsensusItem.objects.filter(scope__project=project, status=ConsensusItem.Status.DONE)
        .values("scope__key")
        .annotate(n=Count("id"), last=Max("decided_at"))
    )
    for row in decided:
        if row["scope__key"] in out:
            out[row["scope__key"]]["consensus"] = [row["n"], row["last"].isoformat()]
    return out


def exists(project: Project, key: str) -> bool:
    """Whether ``key`` names a scope of ``project`` that can be measured (it may have no data yet)."""
    if key == VERIFICATION:
        return True
    kind, _, name = key.partition(":")
    if kind == "study":
        return Study.objects.filter(project=project, name=name).exists()
    if kind == "ratings":
        return RatingSet.objects.filter(project=project, name=name).exists()
    return False


def datasets(project: Project, key: str) -> list[Dataset]:
    """The scope's datasets, whole scope first. Raises KeyError for a key that names no scope."""
    if key == VERIFICATION:
        return _verification(project)
    kind, _, name = key.partition(":")
    if kind == "study":
        return _study(Study.objects.get(project=project, name=name))
    if kind == "ratings":
        return _ratings(RatingSet.objects.get(project=project, name=name))
    raise KeyError(key)


# ------------------------------------------------------------------------------ verification


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


# ------------------------------------------------------------------------------ studies


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


# ------------------------------------------------------------------------------ rating sets


def _ratings(rs: RatingSet) -> list[Dataset]:
    triples = [
        (item, rater, value)
        for item, rater, value in Rating.objects.filter(rating_set=rs)
        .values_list("item", "rater", "value")
        .order_by("id")
    ]
    metrics = JUDGE_METRICS if rs.source == RatingSet.Source.JUDGE else None
    return [Dataset("", "ratings", (rs.level,), triples, metrics=metrics)]
