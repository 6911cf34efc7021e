"""The consensus round: items sent to it (by hand, or an overlap pass's disagreements), and the
decisions recorded there."""

from __future__ import annotations

import numpy as np
from django.db import transaction
from django.utils import timezone

from annotator import jobs
from annotator.agreement import scopes
from annotator.agreement.models import (
    ConsensusItem,
    ConsensusRating,
    Scope,
)
from annotator.agreement.services.computing import _answers, request, scope_for
from annotator.agreement.services.ratings import _check_value
from annotator.errors import Conflict, Invalid, NotFound
from annotator.projects.models import Project
from annotator.scoring import agreement as metrics

CONSENSUS_SEND_MAX = 2_000  # items one request may send to the consensus round


# ------------------------------------------------------------------------------ consensus round


def send_to_consensus(
    project: Project,
    key: str,
    *,
    subset: str = "",
    threshold: float | None = None,
    items: list[str] | None = None,
    user=None,
) -> list[ConsensusItem]:
    """Send items of a scope's subset to the reconciliation queue (X-LeBench seed 002 App. D.3):
    those whose disagreement (``metrics.item_disagreement``, 0 to 1) is at least ``threshold`` (and
    above 0), or the listed ``items``; at most ``CONSENSUS_SEND_MAX`` at once. Decisions, choices, scores and
    free-text answers (level ``text``; disagreement 1 - semantic agreement) can be reconciled, not orders. Each
    item keeps a snapshot of every rater's answer. Items already sent are left as they are. Returns
    the new queue items, most disagreement first. Raises Invalid or NotFound in plain words."""
    scope_for(project, key)
    data = {ds.subset: ds for ds in scopes.datasets(project, key)}
    ds = data.get(subset)
    if ds is None:
        raise NotFound(f"no subset {subset!r} in {key}")
    if ds.kind == "orderings":
        raise Invalid("orders cannot go to a consensus round; decisions, choices, scores and free-text answers can")
    if (threshold is None) == (items is None):
        raise Invalid("give either a disagreement threshold (0 to 1) or a list of items")
    if threshold is not None and not 0 <= threshold <= 1:
        raise Invalid("the threshold is a disagreement from 0 to 1")
    if ds.kind == "texts":
        # Disagreement of free-text answers: 1 - their semantic agreement (mean pairwise similarity, 0-1).
        level = "text"
        keys = sorted(k for k, v in ds.texts.items() if len(v) >= 2)
        per_item = (
            metrics.semantic_agreement([[t for _, t in ds.texts[k]] for k in keys], n_resamples=0)[1] if keys else []
        )
        disagreement = {k: float(np.clip(1 - sim, 0, 1)) for k, sim in zip(keys, per_item)}
        triples = [(k, r, t) for k in keys for r, t in ds.texts[k]]
    else:
        level = ds.levels[0]
        ratings = metrics.Ratings.from_triples(ds.triples, level)
        disagreement = dict(zip(ratings.items, metrics.item_disagreement(ratings)))
        triples = ds.triples
    if items is not None:
        unknown = [i for i in items if i not in disagreement]
        if unknown:
            raise NotFound(f"no item {unknown[0]!r} in this scope")
        chosen = [i for i in items if np.isfinite(disagreement[i])]
    else:  # items on which everyone agrees have nothing to reconcile, whatever the threshold
        chosen = [i for i, d in disagreement.items() if np.isfinite(d) and d >= threshold and d > 0]
    if len(chosen) > CONSENSUS_SEND_MAX:
        raise Invalid(f"{len(chosen)} items pass; send at most {CONSENSUS_SEND_MAX} at once (raise the threshold)")
    return _send(
        Scope.objects.get(project=project, key=key),
        subset,
        level,
        chosen,
        disagreement,
        _answers(triples),
        ds.labels,
        user,
    )


def _send(
    scope: Scope,
    subset: str,
    level: str,
    chosen: list[str],
    disagreement: dict[str, float],
    answers: dict[str, list[dict]],
    labels: dict,
    user,
) -> list[ConsensusItem]:
    """Create the consensus items of ``chosen`` (most disagreement first); items already sent are
    left as they are. Returns the new ones."""
    created = []
    with transaction.atomic():
        for item in sorted(chosen, key=lambda i: (-disagreement[i], i)):
            label, link = labels.get(item, (item, ""))
            ci, made = ConsensusItem.objects.get_or_create(
                scope=scope,
                subset=subset,
                item=item,
                defaults={
                    "label": label,
                    "link": link,
                    "level": level,
                    "disagreement": float(disagreement[item]),
                    "answers": answers.get(item, []),
                    "sent_by": user,
                },
            )
            if made:
                created.append(ci)
    return created


def send_overlap_disagreements(unit_id: int) -> list[ConsensusItem]:
    """Send to the consensus round the QA pairs of work unit ``unit_id`` on which its blind passes
    (the first pass and the overlap passes) made different decisions (issue 20, section 4: an
    overlap pass's edits are not dropped; X-LeBench seed 002 App. D.3 for the round). Pairs judged
    by one pass so far, or on which every pass agrees, are left; pairs already sent are left as
    they are. Returns the new consensus items (nothing for an unknown unit)."""
    from annotator.qa.models import WorkUnit

    unit = WorkUnit.objects.select_related("project").filter(pk=unit_id).first()
    if unit is None:
        return []
    ds = scopes.unit_decisions(unit.project, unit_id)
    if not ds.triples:
        return []
    ratings = metrics.Ratings.from_triples(ds.triples, "nominal")
    disagreement = {item: float(d) for item, d in zip(ratings.items, metrics.item_disagreement(ratings))}
    chosen = [item for item, d in disagreement.items() if np.isfinite(d) and d > 0]
    if not chosen:
        return []
    scope = Scope.objects.get_or_create(project=unit.project, key=scopes.VERIFICATION)[0]
    return _send(scope, "", "nominal", chosen, disagreement, _answers(ds.triples), ds.labels, None)


def overlap_submitted(item, unit, user, result) -> None:
    """``qa.services.after_submit`` hook: a blind pass over a unit with overlap passes queues the
    check of its disagreements (``send_overlap_disagreements``, a job run after the commit)."""
    from annotator.qa.models import QueueItem

    if item.kind not in scopes.BLIND_PASSES:
        return
    if (
        item.kind == QueueItem.Kind.OVERLAP
        or QueueItem.objects.filter(unit_id=unit.pk, kind=QueueItem.Kind.OVERLAP).exists()
    ):
        jobs.enqueue("agreement.overlap_consensus", unit.pk)


def record_consensus(
    ci_id: int, project: Project, reviewer, *, consensus, revised: dict[str, object], note: str = ""
) -> ConsensusItem:
    """Record a reviewer's consensus on reconciliation item ``ci_id``: the agreed value and each
    rater's re-evaluated answer (``revised``: rater -> value; raters not named keep their round-1
    answer). Values are checked against the item's level. Queues a computation of the scope so the
    after-consensus round is reported. Raises NotFound, Conflict (already reconciled) or Invalid."""
    with transaction.atomic():
        ci = (
            ConsensusItem.objects.select_for_update()
            .select_related("scope")
            .filter(pk=ci_id, scope__project=project)
            .first()
        )
        if ci is None:
            raise NotFound("no such item in the consensus queue")
        if ci.status == ConsensusItem.Status.DONE:
            raise Conflict("this item was reconciled already")
        if consensus is None:
            raise Invalid("record the consensus value", errors={"consensus": "required"})
        consensus = _check_value(consensus, ci.level, "the consensus")
        first = {a["rater"]: a["value"] for a in ci.answers}
        if ci.scope.key == scopes.VERIFICATION and ci.level == "nominal":  # a verdict: one of three decisions
            for who, v in [("the consensus", consensus), *((f"the answer of {r}", v) for r, v in revised.items())]:
                if v is not None and v not in scopes.DECISIONS:
                    raise Invalid(f"{who} must be keep, modify or delete")
        unknown = sorted(set(revised) - set(first))
        if unknown:
            raise Invalid(f"{unknown[0]!r} did not rate this item")
        values = {
            rater: _check_value(revised.get(rater, value), ci.level, f"the answer of {rater}")
            for rater, value in first.items()
        }
        if len(note) > 4000:
            raise Invalid("the note is at most 4,000 characters")
        ConsensusRating.objects.bulk_create(
            [ConsensusRating(consensus_item=ci, rater=r, value=v) for r, v in values.items()]
        )
        ci.consensus, ci.note, ci.reviewer = consensus, note, reviewer
        ci.status, ci.decided_at = ConsensusItem.Status.DONE, timezone.now()
        ci.save()
        request(project, ci.scope.key, trigger="consensus")
    return ci
