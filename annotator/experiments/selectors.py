"""Reads for ordering experiments: the score table (humans beside models, per condition)."""

from __future__ import annotations

from collections import defaultdict

from annotator.experiments.models import Condition, Experiment, Prediction, Trial
from annotator.scoring.ordering import METRICS, mean_ci


def score_table(experiment: Experiment, *, include_excluded: bool = False) -> list[dict]:
    """For each condition and each respondent kind (``human``, or a model name), the mean of every
    metric with its 95% confidence interval and n (``scoring.ordering.mean_ci``), as EGO-FLIGHT's
    Table 1 reads. Humans are the scored, non-practice trials of participants not flagged for
    exclusion (all participants with ``include_excluded``). Rows are ordered by condition, then
    humans first, then models by name."""
    values: dict[tuple[int, str], dict[str, list]] = defaultdict(lambda: defaultdict(list))
    trials = Trial.objects.filter(participant__experiment=experiment, practice=False, scored_at__isnull=False)
    if not include_excluded:
        trials = trials.filter(participant__excluded=False)
    for row in trials.values("item__condition_id", *METRICS):
        for m in METRICS:
            values[(row["item__condition_id"], "human")][m].append(row[m])
    for row in Prediction.objects.filter(experiment=experiment, scored_at__isnull=False).values("item__condition_id", "model", *METRICS):
        for m in METRICS:
            values[(row["item__condition_id"], row["model"])][m].append(row[m])
    out = []
    for cond in Condition.objects.filter(experiment=experiment).order_by("number"):
        kinds = sorted({k for c, k in values if c == cond.pk}, key=lambda k: (k != "human", k))
        for kind in kinds:
            out.append({"condition": cond.variables(), "respondent": kind,
                        "metrics": {m: mean_ci(values[(cond.pk, kind)][m]) for m in METRICS}})
    return out


def unscored(experiment: Experiment) -> int:
    """Answered trials and predictions still waiting for the scoring worker."""
    return (Trial.objects.filter(participant__experiment=experiment, response__isnull=False, scored_at__isnull=True).count()
            + Prediction.objects.filter(experiment=experiment, scored_at__isnull=True).count())


def trial_payload(trial: Trial) -> dict:
    """What the page shows for a trial: the elements in the recorded shown order, each as its
    per-trial ``handle`` (``annotator.experiments.handles``), ``kind``, image ``url`` (named by the
    image's content hash) or ``text``, and ``pinned_position`` (1-based) for pinned hints; the
    condition's annotation text; where the person is; the server's ``served_at`` and ``shown_at``.

    Nothing here reveals the truth (issue 7): no element ids (they ascend with time), no times,
    video ids, file names or hashes; handles are random per trial; the free elements' true order is
    sent back only as practice feedback (``feedback_truth``), after the answer."""
    from annotator.experiments.handles import handles_of
    from annotator.experiments.models import Element
    from annotator.qa.selectors import media_url

    item = trial.item
    elements = {e.pk: e for e in Element.objects.filter(pk__in=item.shown)}
    handles = handles_of(trial.pk, item.shown)
    pinned = {item.truth[p - 1]: p for p in item.hints}
    same_kind = Trial.objects.filter(participant_id=trial.participant_id, practice=trial.practice)
    return {
        "trial_id": trial.pk,
        "practice": trial.practice,
        "number": trial.position + 1,
        "of": same_kind.count(),
        "annotation": item.annotation,
        "elements": [{"handle": handles[eid], "kind": elements[eid].kind, "url": media_url(elements[eid].image.name),
                      "text": elements[eid].text, "pinned_position": pinned.get(eid)} for eid in item.shown],
        "served_at": trial.served_at.isoformat() if trial.served_at else None,
        "shown_at": trial.shown_at.isoformat() if trial.shown_at else None,
    }


def feedback_truth(trial: Trial) -> list[str]:
    """A practice trial's true order as its handles (shown as feedback after the answer)."""
    from annotator.experiments.handles import handles_of

    handles = handles_of(trial.pk, trial.item.truth)
    return [handles[eid] for eid in trial.item.truth]


def server_rt_ms(trial: Trial) -> float | None:
    """The server's response time of an answered trial in ms: from the page's "shown" report
    (``shown_at``) to the answer (``answered_at``); None if either is missing (trials answered
    before issue 7 have no ``shown_at``)."""
    if trial.shown_at is None or trial.answered_at is None:
        return None
    return round((trial.answered_at - trial.shown_at).total_seconds() * 1000, 1)


def trials_export(experiment: Experiment):
    """Per-trial rows for the JSONL and CSV exports: participant (pseudonymous id), excluded flag and
    reasons, condition variables, item, shown, response, truth, hints, practice, client response time
    (ms), server times (ISO 8601 UTC: served, shown, answered) and the server's response time
    (``server_rt_ms``, shown to answered), and the six metrics (null until scored)."""
    from annotator.qa.selectors import pseudonym

    rows = (Trial.objects.filter(participant__experiment=experiment, response__isnull=False)
            .select_related("participant", "item__condition").order_by("participant_id", "-practice", "position"))
    for t in rows.iterator(chunk_size=2000):
        yield {
            "participant": pseudonym(t.participant.user_id), "excluded": t.participant.excluded,
            "exclusion_reasons": t.participant.exclusion_reasons, "condition": t.item.condition.variables(),
            "item_id": t.item_id, "practice": t.practice, "position": t.position + 1, "shown": t.item.shown,
            "response": t.response, "truth": t.item.truth, "hints": t.item.hints, "client_rt_ms": t.client_rt_ms,
            "served_at": t.served_at.isoformat() if t.served_at else None,
            "shown_at": t.shown_at.isoformat() if t.shown_at else None,
            "answered_at": t.answered_at.isoformat() if t.answered_at else None,
            "server_rt_ms": server_rt_ms(t),
            **{m: getattr(t, m) for m in METRICS},
        }


def rt_histogram(experiment: Experiment, bins: int = 20) -> dict:
    """Response times (s) of scored trials: numpy histogram with ``bins`` equal bins, per kept and
    excluded participants, plus the median."""
    import numpy as np

    rts = list(Trial.objects.filter(participant__experiment=experiment, practice=False, client_rt_ms__isnull=False)
               .values_list("client_rt_ms", "participant__excluded"))
    if not rts:
        return {"edges": [], "kept": [], "excluded": [], "median_s": None, "n": 0}
    values = np.array([r / 1000 for r, _ in rts])
    edges = np.histogram_bin_edges(values, bins=bins)
    kept = np.histogram([r / 1000 for r, ex in rts if not ex], bins=edges)[0]
    excluded = np.histogram([r / 1000 for r, ex in rts if ex], bins=edges)[0]
    return {"edges": [float(e) for e in edges], "kept": [int(x) for x in kept], "excluded": [int(x) for x in excluded],
            "median_s": float(np.median(values)), "n": len(rts)}


def participant_scores(experiment: Experiment) -> dict[int, dict]:
    """Per participant id: Kendall's tau-b over their scored, non-practice trials (mean, 95% CI, n),
    their median client response time and median server response time (``shown_at`` to
    ``answered_at``) in seconds, and when their latest trial was shown (``last_shown_at``)."""
    import statistics

    taus: dict[int, list] = defaultdict(list)
    rts: dict[int, list] = defaultdict(list)
    server_rts: dict[int, list] = defaultdict(list)
    last_shown: dict[int, object] = {}
    for pid, tau, rt, shown_at, answered_at in Trial.objects.filter(
            participant__experiment=experiment, practice=False, response__isnull=False).values_list(
            "participant_id", "kendall_tau_b", "client_rt_ms", "shown_at", "answered_at"):
        if tau is not None:
            taus[pid].append(tau)
        if rt is not None:
            rts[pid].append(rt / 1000)
        if shown_at is not None and answered_at is not None:
            server_rts[pid].append((answered_at - shown_at).total_seconds())
        if shown_at is not None and (pid not in last_shown or shown_at > last_shown[pid]):
            last_shown[pid] = shown_at
    return {pid: {"tau": mean_ci(taus.get(pid, [])), "median_rt_s": statistics.median(rts[pid]) if rts.get(pid) else None,
                  "median_server_rt_s": statistics.median(server_rts[pid]) if server_rts.get(pid) else None,
                  "last_shown_at": last_shown.get(pid)}
            for pid in set(taus) | set(rts)}


def footage_seen_in_queues(user, project_id: int) -> set[int]:
    """Ids of the source footage ``user`` could play in a verification queue of the project: the videos
    of units whose queue item they hold or held (and the other videos of those units' day-night pairs),
    each mapped to the video it was derived from, if any (a night rendition shows the same route).
    A participant must never be asked to order frames of footage they could download (issue 7)."""
    from django.db.models import Q

    from annotator.media.models import Video
    from annotator.qa.models import QueueItem

    units = QueueItem.objects.filter(Q(leased_by=user) | Q(completed_by=user), project_id=project_id).values("unit_id")
    videos = Video.objects.filter(Q(units__in=units) | Q(memberships__group__units__in=units)).values_list("id", "derived_from_id")
    return {root or vid for vid, root in videos}


def footage_in_open_trials(user) -> set[int]:
    """Ids of the videos whose frames ``user`` still has to order (unanswered trials, any experiment):
    while a trial is open, its source video and the videos derived from it are not served to them."""
    return set(Trial.objects.filter(participant__user=user, response__isnull=True)
               .values_list("item__clip__video_id", flat=True).distinct())
