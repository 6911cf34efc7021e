"""Computing and storing agreement reports, the schedule, rating sets and the consensus round.

``compute(project, key)`` measures one scope (``scopes``) with ``annotator.scoring.agreement`` and
stores one ``Computation`` with its ``Report`` rows; one computation per scope runs at a time (a
PostgreSQL advisory lock on the scope's row; a second caller returns None at once). ``schedule()``
(Celery beat) queues a computation for every scope whose inputs changed since its last one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from annotator import jobs
from annotator.agreement import scopes
from annotator.agreement.models import (
    LEVELS,
    Computation,
    ConsensusItem,
    ConsensusRating,
    Rating,
    RatingSet,
    Report,
    Scope,
)
from annotator.errors import Conflict, Invalid, NotFound
from annotator.projects.models import Project
from annotator.scoring import agreement as metrics

log = logging.getLogger(__name__)

LOCK_CLASS = 0x4147  # "AG": advisory-lock namespace of agreement scopes
TOP_ITEMS = 20
RATINGS_MAX = 200_000
CONSENSUS_SEND_MAX = 2_000  # items one request may send to the consensus round


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


# ------------------------------------------------------------------------------ rating sets

TEXT_MAX = 4000


def _check_value(value, level: str, where: str):
    if value is None:
        return None
    if level == "text":  # a free-text answer (open answers, proposed answers): semantic agreement
        if not isinstance(value, str) or not value.strip() or len(value) > TEXT_MAX:
            raise Invalid(f"{where}: an answer is a text of 1 to {TEXT_MAX:,} characters")
        return value.strip()
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise Invalid(f"{where}: a value is a number, a text or null")
    if isinstance(value, float) and not math.isfinite(value):
        raise Invalid(f"{where}: a value must be a finite number")
    if isinstance(value, str):
        if level != "nominal":
            raise Invalid(f"{where}: {level} ratings must be numbers, not {value[:40]!r}")
        if not value.strip() or len(value) > 200:
            raise Invalid(f"{where}: a category is a text of 1 to 200 characters")
    return value


def _check_label(value, field: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise Invalid(f"{where}: {field} must be a text of 1 to 200 characters")
    if "\x00" in value or not _storable(value):
        raise Invalid(f"{where}: {field} must not contain NUL characters or lone surrogates")
    return value


def _storable(text: str) -> bool:
    """Whether PostgreSQL can hold ``text``: UTF-8 encodable (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_ratings(ratings: Iterable[dict], level: str) -> Iterator[tuple[str, str, object]]:
    """The (item, rater, value) of each rating of ``ratings`` (any iterable, read once, as it
    arrives), checked one by one with plain checks: item and rater texts of 1 to 200 characters, the
    value by the level (``_check_value``), no rater twice on an item, at most RATINGS_MAX ratings
    (refused at rating RATINGS_MAX + 1, before reading further). Null values (missing ratings) are
    checked and counted but not yielded. Raises Invalid naming the first bad rating by its 1-based
    position ("rating 7: ..."), or the limit."""
    # One text per (item, rater): NUL is refused above, so "item\0rater" is unambiguous and about half
    # the memory of a tuple (200,000 of them: ~20 MB).
    seen: set[str] = set()
    limit = RATINGS_MAX
    for n, r in enumerate(ratings, 1):
        if n > limit:
            raise Invalid(too_many(limit))
        where = f"rating {n}"
        if not isinstance(r, dict):
            raise Invalid(f"{where}: each rating is an object with item, rater and value")
        item = _check_label(r.get("item"), "item", where)
        rater = _check_label(r.get("rater"), "rater", where)
        value = _check_value(r.get("value"), level, where)
        key = f"{item}\x00{rater}"
        if key in seen:
            raise Invalid(f"{where}: rater {rater!r} already rated item {item!r}")
        seen.add(key)
        if value is not None:
            yield item, rater, value


def too_many(limit: int) -> str:
    """The refusal of a rating set over ``limit`` ratings, in plain words."""
    return f"more than {limit:,} ratings: a rating set holds at most {limit:,}; send the rest as another set"


def import_ratings(
    project: Project,
    name: str,
    level: str,
    ratings: Iterable[dict],
    *,
    source: str = "external",
    description: str = "",
    replace: bool = False,
) -> RatingSet:
    """Store ``ratings`` (``{"item": str, "rater": str, "value": number|str|null}`` each, at most
    RATINGS_MAX; a list or any iterable, e.g. a request body being read) as rating set ``name`` of
    the project; null values are missing ratings and are not stored. ``replace``: an existing set of
    that name is replaced, else Conflict (raised before a rating is read). Raises Invalid (plain
    words, naming the first bad rating by its 1-based position, or the limit: ``check_ratings``).

    Steps, in one transaction (all or nothing: a bad rating at any position, or an error of the
    iterable itself, rolls back the set and every rating written before it):
    1. lock the set of that name if any (``SELECT ... FOR UPDATE``); Conflict, or delete it (and its
       consensus round) when replacing; create the new set;
    2. read the ratings one at a time, check each (``check_ratings``) and write it through one
       ``COPY ... FROM STDIN`` (psycopg sends it in batches as it fills), so neither the ratings nor
       model instances are held in memory: 200,000 ratings take a few seconds, not the ORM's ~30 s.
    The stored count is ``rs.ratings.count()``."""
    if level not in dict(LEVELS):
        raise Invalid(f"level must be one of {', '.join(dict(LEVELS))}")
    if source not in RatingSet.Source.values:
        raise Invalid("source must be external or judge")
    with transaction.atomic():
        existing = RatingSet.objects.select_for_update().filter(project=project, name=name).first()
        if existing is not None:
            if not replace:
                raise Conflict(f"a rating set named {name!r} exists; replace it or choose another name")
            existing.delete()
            # The old set's consensus round was about other ratings: it goes with them.
            ConsensusItem.objects.filter(scope__project=project, scope__key=f"ratings:{name}").delete()
        rs = RatingSet.objects.create(project=project, name=name, level=level, source=source, description=description)
        table = connection.ops.quote_name(Rating._meta.db_table)
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY {table} (rating_set_id, item, rater, value) FROM STDIN") as copy,
        ):
            for item, rater, value in check_ratings(ratings, level):
                # The value column is jsonb: its text form, as Django's JSONField writes it (json.dumps).
                copy.write_row((rs.pk, item, rater, json.dumps(value)))
    return rs


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
