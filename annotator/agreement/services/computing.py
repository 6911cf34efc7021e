"""Computing and reading agreement reports: ``compute(project, key)`` measures one scope
(``scopes``) with ``annotator.scoring.agreement`` and stores one ``Computation`` with its ``Report``
rows; one computation per scope runs at a time (a PostgreSQL advisory lock on the scope's row; a
second caller returns None at once). ``schedule()`` (Celery beat) queues a computation for every
scope whose inputs changed since its last one."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from contextlib import contextmanager

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from annotator import jobs
from annotator.agreement import scopes
from annotator.agreement.models import (
    Computation,
    ConsensusItem,
    Report,
    Scope,
)
from annotator.errors import NotFound
from annotator.projects.models import Project
from annotator.scoring import agreement as metrics

log = logging.getLogger(__package__)  # the package's name, as before the split

LOCK_CLASS = 0x4147  # "AG": advisory-lock namespace of agreement scopes
TOP_ITEMS = 20


# ------------------------------------------------------------------------------ computing


@contextmanager
def _scope_lock(scope_id: int):
    """Hold PostgreSQL's session advisory lock (LOCK_CLASS, scope id) for the block; yields whether
    it was had (False: another computation of the scope is running)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_CLASS, scope_id])
        got = cursor.fetchone()[0]
    try:
        yield got
    finally:
        if got:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_CLASS, scope_id])


def scope_for(project: Project, key: str) -> Scope:
    """The scope row of ``key`` (created on first use). Raises NotFound for a key naming no scope."""
    if not scopes.exists(project, key):
        raise NotFound(f"no agreement scope {key!r} in this project (verification, study:<name> or ratings:<name>)")
    return Scope.objects.get_or_create(project=project, key=key)[0]


def _fingerprint(data: list[scopes.Dataset], overrides: dict) -> str:
    payload = {
        "datasets": [d.canonical() for d in data],
        "consensus": sorted([list(k), sorted(v.items(), key=lambda kv: kv[0])] for k, v in overrides.items()),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _overrides(scope: Scope) -> dict[tuple[str, str], dict[str, object]]:
    """(subset, item) -> rater -> re-evaluated value, from the scope's reconciled items."""
    out: dict[tuple[str, str], dict[str, object]] = {}
    for ci in scope.consensus_items.filter(status=ConsensusItem.Status.DONE).prefetch_related("ratings"):
        out[(ci.subset, ci.item)] = {r.rater: r.value for r in ci.ratings.all()}
    return out


def _finite(x) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _report(comp: Computation, subset: str, name: str, level: str, round_: str, result) -> Report:
    ci = result.ci or (None, None)
    return Report(
        computation=comp,
        project_id=comp.scope.project_id,
        scope=comp.scope.key,
        subset=subset,
        metric=name,
        level=level,
        round=round_,
        value=float(result.value),
        ci_low=_finite(ci[0]),
        ci_high=_finite(ci[1]),
        n_items=result.n_items,
        n_raters=result.n_raters,
        method=result.method,
        library_versions=comp.library_versions,
        fingerprint=comp.fingerprint,
        computed_at=comp.computed_at,
    )


def _answers(triples) -> dict[str, list[dict]]:
    """Every rater's answer per item: item -> [{"rater", "value"}], in the triples' order."""
    out: dict[str, list[dict]] = {}
    for item, rater, value in triples:
        out.setdefault(item, []).append({"rater": rater, "value": value})
    return out


def _top(labels: dict, items, disagreement, answers: dict) -> list[dict]:
    """The items with the most disagreement (> 0), most first: item, label, link, disagreement, answers."""
    scored = [(float(d), item) for item, d in zip(items, disagreement) if d is not None and np.isfinite(d) and d > 0]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [
        {
            "item": item,
            "label": labels.get(item, (item, ""))[0],
            "link": labels.get(item, ("", ""))[1],
            "disagreement": round(d, 4),
            "answers": answers.get(item, []),
        }
        for d, item in scored[:TOP_ITEMS]
    ]


def _measure(
    comp: Computation, ds: scopes.Dataset, overrides: dict, n_resamples: int, seed: int
) -> tuple[list[Report], dict, dict]:
    """Reports, details and skipped reasons of one dataset (both rounds where the consensus round has
    re-evaluated answers on it)."""
    reports: list[Report] = []
    skipped: dict[str, str] = {}
    details: dict = {"kind": ds.kind}
    mine = {item: raters for (subset, item), raters in overrides.items() if subset == ds.subset}
    if ds.kind == "ratings":
        if not ds.triples:
            return (
                [],
                {},
                {
                    "*": "no judgments to compare yet (practice and attention items, and participants "
                    "flagged for exclusion, are left out)"
                },
            )
        answers = _answers(ds.triples)
        for i, level in enumerate(ds.levels):
            ratings = metrics.Ratings.from_triples(ds.triples, level)
            results, why = metrics.agreement(ratings, n_resamples=n_resamples, seed=seed, metrics=ds.metrics)
            skipped.update({f"{name} ({level})": reason for name, reason in why.items()})
            reports += [_report(comp, ds.subset, name, level, Report.Round.FIRST, r) for name, r in results.items()]
            if mine:
                after = ratings.with_overrides(
                    {(item, rater): v for item, raters in mine.items() for rater, v in raters.items()}
                )
                results2, why2 = metrics.agreement(after, n_resamples=n_resamples, seed=seed, metrics=ds.metrics)
                skipped.update({f"{name} ({level}, after consensus)": reason for name, reason in why2.items()})
                reports += [
                    _report(comp, ds.subset, name, level, Report.Round.CONSENSUS, r) for name, r in results2.items()
                ]
            if i == 0:
                details["level"] = level
                details["raters"] = metrics.rater_pairs(ratings)
                if level in ("nominal", "ordinal"):
                    details["confusion"] = metrics.confusion(ratings)
                details["top"] = _top(ds.labels, ratings.items, metrics.item_disagreement(ratings), answers)
    elif ds.kind == "texts":
        items = sorted(k for k, v in ds.texts.items() if len(v) >= 2)
        if not items:
            return [], {}, {"semantic_agreement": "no item has two answers yet"}
        result, per_item = metrics.semantic_agreement(
            [[t for _, t in ds.texts[k]] for k in items], n_resamples=n_resamples, seed=seed
        )
        reports.append(_report(comp, ds.subset, "semantic_agreement", "", Report.Round.FIRST, result))
        if mine:
            after = [[t for r, t in ((r, mine.get(k, {}).get(r, t)) for r, t in ds.texts[k]) if t] for k in items]
            kept = [a for a in after if len(a) >= 2]
            if kept:
                result2, _ = metrics.semantic_agreement(kept, n_resamples=n_resamples, seed=seed)
                reports.append(_report(comp, ds.subset, "semantic_agreement", "", Report.Round.CONSENSUS, result2))
        answers = {k: [{"rater": r, "value": t} for r, t in ds.texts[k]] for k in items}
        details["top"] = _top(ds.labels, items, 1 - np.asarray(per_item, dtype=float), answers)
    elif ds.kind == "orderings":
        items = sorted(k for k, v in ds.orderings.items() if len(v) >= 2)
        if not items:
            return [], {}, {"kendall_w_mean": "no item has two orders yet"}
        results, per_item_w = metrics.ordering_agreement(
            [[o for _, o in ds.orderings[k]] for k in items], n_resamples=n_resamples, seed=seed
        )
        reports += [_report(comp, ds.subset, name, "ordinal", Report.Round.FIRST, r) for name, r in results.items()]
        answers = {k: [{"rater": r, "value": o} for r, o in ds.orderings[k]] for k in items}
        details["top"] = _top(ds.labels, items, 1 - np.asarray(per_item_w, dtype=float), answers)
    return reports, details, skipped


def compute(
    project: Project, key: str, *, trigger: str = "schedule", n_resamples: int | None = None, seed: int | None = None
) -> Computation | None:
    """Measure scope ``key`` of ``project`` now and store the computation and its reports.

    Every dataset of the scope (``scopes.datasets``) is measured at each of its levels, with a
    percentile bootstrap over items (``AGREEMENT_RESAMPLES`` resamples, seed ``AGREEMENT_SEED``);
    where the consensus round reconciled items, the ``consensus`` round is measured too. Returns the
    computation, or None when another computation of the scope holds its lock. Raises NotFound for
    a key that names no scope, ``metrics.AgreementError`` for judgments the metrics refuse.
    """
    scope = scope_for(project, key)
    n_resamples = settings.AGREEMENT_RESAMPLES if n_resamples is None else n_resamples
    seed = settings.AGREEMENT_SEED if seed is None else seed
    with _scope_lock(scope.pk) as got:
        if not got:
            return None
        started = timezone.now()
        t0 = time.perf_counter()
        Scope.objects.filter(pk=scope.pk).update(computing_since=started)
        try:
            watermark = scopes.discover(project).get(key)
            data = scopes.datasets(project, key)
            overrides = _overrides(scope)
            comp = Computation(
                scope=scope,
                trigger=trigger,
                watermark=watermark,
                seed=seed,
                n_resamples=n_resamples,
                library_versions=metrics.library_versions(),
                fingerprint=_fingerprint(data, overrides),
                started_at=started,
                computed_at=started,
            )
            reports, details, skipped = [], {}, {}
            for ds in data:
                r, d, s = _measure(comp, ds, overrides, n_resamples, seed)
                reports += r
                if d:
                    details[ds.subset] = d
                if s:
                    skipped[ds.subset] = s
            comp.details, comp.skipped = details, skipped
            comp.computed_at = timezone.now()
            comp.seconds = round(time.perf_counter() - t0, 3)
            with transaction.atomic():
                comp.save()
                for r in reports:
                    r.computation = comp
                    r.computed_at = comp.computed_at
                Report.objects.bulk_create(reports)
                Scope.objects.filter(pk=scope.pk).update(
                    watermark=watermark, computed_at=comp.computed_at, computing_since=None, last_error=""
                )
            return comp
        except metrics.AgreementError as exc:
            Scope.objects.filter(pk=scope.pk).update(
                computing_since=None, last_error=f"the judgments were refused: {exc}"[:4000]
            )
            raise
        except Exception:
            log.exception("agreement computation of %s/%s failed", project.slug, key)
            Scope.objects.filter(pk=scope.pk).update(
                computing_since=None, last_error="the computation failed; the worker's log has the details"
            )
            raise


def request(project: Project, key: str | None = None, *, trigger: str = "api") -> list[int]:
    """Queue a computation (Celery, job ``agreement.compute``) of scope ``key``, or of every scope
    of the project with judgments when ``key`` is None. Returns the queued job ids (a scope already
    queued is not queued twice). Raises NotFound for an unknown key."""
    keys = [key] if key else sorted(scopes.discover(project))
    out = []
    for k in keys:
        scope = scope_for(project, k)
        job = jobs.enqueue("agreement.compute", scope.pk, trigger, key=f"agreement.compute:{scope.pk}")
        if job is not None:
            out.append(job)
    return out


def compute_job(scope_id: int, trigger: str = "schedule") -> str:
    """The body of job ``agreement.compute``: measure the scope (see ``compute``)."""
    scope = Scope.objects.select_related("project").filter(pk=scope_id).first()
    if scope is None:
        return "scope gone"
    comp = compute(scope.project, scope.key, trigger=trigger)
    if comp is None:
        return "another computation of this scope is running"
    return f"{Report.objects.filter(computation=comp).count()} reports in {comp.seconds} s"


def schedule() -> list[int]:
    """Queue a computation for every scope, in every project, whose watermark differs from the one
    its last computation stored (new responses since its last report; never-measured scopes too).
    Returns the job ids queued. Run by Celery beat every ``AGREEMENT_SCHEDULE_EVERY_S``."""
    queued = []
    for project in Project.objects.all():
        stored = dict(Scope.objects.filter(project=project).values_list("key", "watermark"))
        for key, watermark in scopes.discover(project).items():
            if watermark_changed(stored.get(key), watermark):
                queued += request(project, key, trigger="schedule")
    return queued


def watermark_changed(stored, current) -> bool:
    """Whether a scope's watermark differs from the one its last computation stored (compared as
    JSON, times as ISO text): it has new responses since its last report."""
    return json.dumps(stored, sort_keys=True, default=str) != json.dumps(current, sort_keys=True, default=str)


# ------------------------------------------------------------------------------ reading


def latest(project: Project, key: str | None = None) -> list[Computation]:
    """The latest computation of each scope of the project (or of ``key``), scopes in key order; one query."""
    latest_first = (
        Computation.objects.filter(scope__project=project, **({"scope__key": key} if key else {}))
        .select_related("scope")
        .order_by("scope_id", "-computed_at", "-id")
        .distinct("scope_id")
    )
    return sorted(latest_first, key=lambda c: c.scope.key)


def report_dict(r: Report) -> dict:
    """A report row as JSON: scope, subset, metric, level, round, value, ci [lo, hi] (nulls when
    none), n_items, n_raters, method, library_versions, fingerprint, computed_at (ISO 8601)."""
    return {
        "scope": r.scope,
        "subset": r.subset,
        "metric": r.metric,
        "level": r.level,
        "round": r.round,
        "value": r.value,
        "ci": [r.ci_low, r.ci_high],
        "n_items": r.n_items,
        "n_raters": r.n_raters,
        "method": r.method,
        "library_versions": r.library_versions,
        "fingerprint": r.fingerprint,
        "computed_at": r.computed_at.isoformat(),
    }
