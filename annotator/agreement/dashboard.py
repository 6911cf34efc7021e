"""The agreement dashboard's data, built once for the page and the API (``dashboard_data``), and the
stored report rows as CSV (``csv_response``).

Everything is ready to plot: the page hands it to ``static/js/agreement/dashboard.js`` through
``json_script`` (the CSP forbids inline script), which draws it with the vendored Chart.js
(``static/vendor/chartjs-4.6.1``), its error-bar plugin (``chartjs-chart-error-bars-4.4.5``) and the
matrix plugin (``chartjs-chart-matrix-3.1.0``). Per scope: the latest computation's metrics per
subset as bars with their 95% intervals (first round and after the consensus round side by side),
the rater-by-rater agreement matrix, the confusion matrix of nominal judgments, the items with the
most disagreement, why some metrics were not measured, and a trend of every metric over the stored
computations. A fixed number of queries whatever the number of scopes' reports.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict

from django.db.models import Count
from django.http import StreamingHttpResponse

from annotator.agreement import scopes, services
from annotator.agreement.models import Computation, ConsensusItem, RatingSet, Report, Scope
from annotator.projects.models import Project
from annotator.studies.models import Study

# The trend draws at most this many of a scope's latest computations (all of them are in the CSV).
TREND_MAX = 100
CSV_COLUMNS = (
    "scope",
    "subset",
    "metric",
    "level",
    "round",
    "value",
    "ci_low",
    "ci_high",
    "n_items",
    "n_raters",
    "method",
    "fingerprint",
    "computed_at",
)
METRIC_LABELS = {
    "krippendorff_alpha": "Krippendorff's α",
    "percent_agreement": "Percent agreement",
    "fleiss_kappa": "Fleiss' κ",
    "cohen_kappa": "Cohen's κ",
    "kendall_w": "Kendall's W",
    "gwet_ac1": "Gwet's AC1",
    "icc": "ICC",
    "semantic_agreement": "Semantic agreement",
    "kendall_w_mean": "Kendall's W (mean per item)",
    "tau_b_mean": "Kendall's τ-b (mean per pair)",
}
ROUND_LABELS = {"first": "first round", "consensus": "after the consensus round"}
SUBSET_WORDS = {
    "qa_type": "QA type",
    "illumination": "illumination",
    "condition": "condition",
    "criterion": "criterion",
    "group": "group",
}
KIND_WORDS = {"ratings": "judgments", "texts": "free-text answers", "orderings": "orderings"}


def metric_label(metric: str, level: str = "") -> str:
    """A metric's name in words, with its level of measurement when it has one: "Krippendorff's α (ordinal)"."""
    name = METRIC_LABELS.get(metric, metric.replace("_", " ").capitalize())
    return f"{name} ({level})" if level else name


def subset_title(subset: str, key: str = "") -> str:
    """A subset key in words: "" is every item, ``qa_type=counting/group=real`` is "QA type counting · group real"."""
    if not subset:
        return "All QA pairs" if key == scopes.VERIFICATION else "All items"
    if subset == "answers":
        return "Answers proposed by people who both kept or modified a pair (semantic agreement)"
    parts = []
    for part in subset.split("/"):
        name, _, value = part.partition("=")
        parts.append(f"{SUBSET_WORDS.get(name, name)} {value}" if value else name)
    text = " · ".join(parts)
    return text[:1].upper() + text[1:]


def scope_title(key: str, studies: dict[str, Study], rating_sets: dict[str, RatingSet]) -> str:
    """What a scope measures, in words."""
    if key == scopes.VERIFICATION:
        return "Verification overlap: keep, modify and delete decisions on the same QA pairs"
    kind, _, name = key.partition(":")
    if kind == "study":
        study = studies.get(name)
        return f"Study {name}" + (f" ({study.get_kind_display()})" if study else "")
    if kind == "ratings":
        rs = rating_sets.get(name)
        return f"Rating set {name}" + (f" ({rs.get_source_display()}, {rs.level})" if rs else "")
    return key


def _skipped_what(what: str) -> str:
    """A ``skipped`` key in words: ``cohen_kappa (nominal)`` -> "Cohen's κ (nominal)", ``*`` -> "Every metric"."""
    if what == "*":
        return "Every metric"
    metric, _, rest = what.partition(" (")
    return metric_label(metric, rest.rstrip(")"))


def _skipped(why: dict[str, str]) -> list[dict]:
    """What was not measured and why, in words; an "after consensus" entry only where its reason
    differs from the first round's."""
    out = []
    for what, reason in sorted(why.items()):
        first = what.replace(", after consensus)", ")")
        if first != what and why.get(first) == reason:
            continue
        out.append({"what": _skipped_what(what), "reason": reason})
    return out


def _iso(dt) -> str | None:
    return dt.isoformat() if dt is not None else None


def _finite(x) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def _point(r: Report | None) -> dict:
    """A bar (or a trend point) with its 95% interval; without an interval, a zero-width one."""
    if r is None:
        return {"y": None, "yMin": None, "yMax": None, "n_items": 0, "n_raters": 0}
    y = _finite(r.value)
    lo, hi = _finite(r.ci_low), _finite(r.ci_high)
    return {
        "y": y,
        "yMin": y if lo is None else lo,
        "yMax": y if hi is None else hi,
        "n_items": r.n_items,
        "n_raters": r.n_raters,
    }


def _order(metric: str, level: str) -> tuple:
    """Metrics in ``METRIC_LABELS`` order (unknown ones last), then by level."""
    return (list(METRIC_LABELS).index(metric) if metric in METRIC_LABELS else len(METRIC_LABELS), metric, level)


def _bars(reports: list[Report]) -> dict:
    """The subset's metrics as bar categories (metric and level), one series per round present."""
    levels = {r.level for r in reports}
    keys = sorted({(r.metric, r.level) for r in reports}, key=lambda k: _order(*k))
    rounds = [rd for rd in ROUND_LABELS if any(r.round == rd for r in reports)]
    cells = {(r.metric, r.level, r.round): r for r in reports}
    values = [v for r in reports for v in (r.value, r.ci_low, r.ci_high) if v is not None and math.isfinite(v)]
    low = min([0.0, *values])
    return {
        "categories": [metric_label(m, lv if len(levels) > 1 else "") for m, lv in keys],
        "series": [
            {"round": rd, "label": ROUND_LABELS[rd], "points": [_point(cells.get((m, lv, rd))) for m, lv in keys]}
            for rd in rounds
        ],
        "low": math.floor(low * 5) / 5,  # a multiple of 0.2, where the axis' ticks fall
        "high": max(1.0, *values) if values else 1.0,
    }


def _report_dict(r: Report) -> dict:
    return {
        "metric": r.metric,
        "label": metric_label(r.metric, r.level),
        "level": r.level,
        "round": r.round,
        "value": _finite(r.value),
        "ci": [_finite(r.ci_low), _finite(r.ci_high)],
        "n_items": r.n_items,
        "n_raters": r.n_raters,
        "method": r.method,
    }


def _subsets(key: str, comp: Computation, reports: list[Report], sent: dict) -> list[dict]:
    by_subset: dict[str, list[Report]] = defaultdict(list)
    for r in reports:
        by_subset[r.subset].append(r)
    names = sorted(set(by_subset) | set(comp.details) | set(comp.skipped), key=lambda s: (s != "", s))
    out = []
    for subset in names:
        details = comp.details.get(subset) or {}
        rows = sorted(by_subset.get(subset, []), key=lambda r: (*_order(r.metric, r.level), r.round != "first"))
        kind = details.get("kind") or ("texts" if any(r.metric == "semantic_agreement" for r in rows) else "ratings")
        top = [{**t, "consensus": sent.get((subset, t["item"]))} for t in details.get("top") or []]
        out.append(
            {
                "subset": subset,
                "title": subset_title(subset, key),
                "kind": kind,
                "kind_words": KIND_WORDS.get(kind, kind),
                "level": details.get("level", ""),
                "reports": [_report_dict(r) for r in rows],
                "bars": _bars(rows),
                "raters": details.get("raters"),
                "confusion": details.get("confusion"),
                "top": top,
                "can_reconcile": kind in ("ratings", "texts"),
                "skipped": _skipped(comp.skipped.get(subset) or {}),
            }
        )
    return out


def _trend(key: str, reports: list[Report]) -> dict:
    """Per subset, one series per metric, level and round: a point per computation (x: epoch ms)."""
    series: dict[str, dict[tuple, list]] = defaultdict(lambda: defaultdict(list))
    for r in sorted(reports, key=lambda r: (r.computed_at, r.pk)):
        series[r.subset][(r.metric, r.level, r.round)].append(
            {"x": int(r.computed_at.timestamp() * 1000), "t": r.computed_at.isoformat(), **_point(r)}
        )
    return {
        "subsets": [
            {
                "subset": subset,
                "title": subset_title(subset, key),
                "series": [
                    {
                        "metric": m,
                        "level": lv,
                        "round": rd,
                        "label": metric_label(m, lv) + ("" if rd == "first" else " · " + ROUND_LABELS[rd]),
                        "points": points,
                    }
                    for (m, lv, rd), points in sorted(per.items())
                ],
            }
            for subset, per in sorted(series.items(), key=lambda kv: (kv[0] != "", kv[0]))
        ]
    }


def dashboard_data(project: Project, key: str | None = None) -> dict:
    """Every scope of the project (or scope ``key``): those with judgments (``scopes.discover``) and
    those measured before, each with its latest computation, ready to plot.

    ``scopes[]``: ``key``, ``title``, ``computed_at``, ``computing_since``, ``last_error``,
    ``new_responses`` (inputs changed since the last computation, or never computed), ``computation``
    (id, trigger, seed, n_resamples, seconds, fingerprint, library_versions, computed_at; null when
    never computed), ``consensus`` (open and reconciled items), ``subsets[]`` and ``trend``.
    ``subsets[]``: ``subset``, ``title``, ``kind``, ``level``, ``reports`` (metric, label, level,
    round, value, ci, n_items, n_raters, method), ``bars`` (categories, one series per round of
    points y, yMin, yMax, n_items, n_raters; low and high of the value axis), ``raters`` (names,
    pairwise agreement and shared items, n x n), ``confusion`` (categories, counts), ``top`` (the
    items with the most disagreement: item, label, link, disagreement, answers, consensus {id,
    status} if sent), ``can_reconcile`` and ``skipped`` (what was not measured and why, in words).
    """
    discovered = scopes.discover(project)
    rows = {s.key: s for s in Scope.objects.filter(project=project)}
    keys = sorted(set(discovered) | set(rows))
    if key is not None:
        keys = [k for k in keys if k == key]
    latest = {c.scope_id: c for c in services.latest(project, key)}
    latest_reports: dict[int, list[Report]] = defaultdict(list)
    for r in Report.objects.filter(computation__in=[c.pk for c in latest.values()]):
        latest_reports[r.computation_id].append(r)
    # The trend: the scope's latest TREND_MAX computations.
    trend_ids = []
    for k in keys:
        if k in rows and rows[k].pk in latest:
            trend_ids += list(Computation.objects.filter(scope=rows[k]).values_list("id", flat=True)[:TREND_MAX])
    trend_reports: dict[str, list[Report]] = defaultdict(list)
    for r in Report.objects.filter(computation__in=trend_ids).only(
        "scope",
        "subset",
        "metric",
        "level",
        "round",
        "value",
        "ci_low",
        "ci_high",
        "n_items",
        "n_raters",
        "computed_at",
    ):
        trend_reports[r.scope].append(r)
    counts: dict[int, dict[str, int]] = defaultdict(lambda: {"open": 0, "done": 0})
    for scope_id, status, n in (
        ConsensusItem.objects.filter(scope__project=project)
        .values_list("scope_id", "status")
        .annotate(n=Count("id"))
        .order_by()
    ):
        counts[scope_id][status] = n
    sent: dict[int, dict] = defaultdict(dict)
    for scope_id, subset, item, pk, status in ConsensusItem.objects.filter(scope__project=project).values_list(
        "scope_id", "subset", "item", "id", "status"
    ):
        sent[scope_id][(subset, item)] = {"id": pk, "status": status}
    studies = {s.name: s for s in Study.objects.filter(project=project)}
    rating_sets = {rs.name: rs for rs in RatingSet.objects.filter(project=project)}

    out = []
    for k in keys:
        scope = rows.get(k)
        comp = latest.get(scope.pk) if scope else None
        stored = scope.watermark if scope else None
        out.append(
            {
                "key": k,
                "title": scope_title(k, studies, rating_sets),
                "computed_at": _iso(scope.computed_at) if scope else None,
                "computing_since": _iso(scope.computing_since) if scope else None,
                "last_error": scope.last_error if scope else "",
                "new_responses": k in discovered
                and (comp is None or services.watermark_changed(stored, discovered[k])),
                "computation": None
                if comp is None
                else {
                    "id": comp.pk,
                    "trigger": comp.trigger,
                    "seed": comp.seed,
                    "n_resamples": comp.n_resamples,
                    "seconds": comp.seconds,
                    "fingerprint": comp.fingerprint,
                    "library_versions": comp.library_versions,
                    "computed_at": comp.computed_at.isoformat(),
                },
                "consensus": dict(counts[scope.pk]) if scope else {"open": 0, "done": 0},
                "subsets": _subsets(k, comp, latest_reports[comp.pk], sent[scope.pk]) if comp else [],
                "trend": _trend(k, trend_reports[k]) if comp else {"subsets": []},
            }
        )
    return {"project": {"slug": project.slug, "name": project.name}, "scopes": out}


# ------------------------------------------------------------------------------ CSV


def report_rows(project: Project, key: str | None = None):
    """Every stored report row of the project (or scope ``key``), oldest computation first, as
    tuples in ``CSV_COLUMNS`` order (streamed from the database)."""
    qs = Report.objects.filter(project=project, **({"scope": key} if key else {}))
    return (
        qs.order_by("scope", "computed_at", "computation_id", "subset", "metric", "level", "round")
        .values_list(*CSV_COLUMNS)
        .iterator(chunk_size=2000)
    )


def csv_response(project: Project, key: str | None = None) -> StreamingHttpResponse:
    """The report rows as a streamed CSV download with a header (``CSV_COLUMNS``)."""

    def lines():
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(CSV_COLUMNS)
        for row in report_rows(project, key):
            writer.writerow([v.isoformat() if hasattr(v, "isoformat") else ("" if v is None else v) for v in row])
            if buf.tell() > 64_000:
                yield buf.getvalue()
                buf.seek(0)
                buf.truncate()
        yield buf.getvalue()

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    name = project.slug + (f"-{key.replace(':', '-')}" if key else "")
    response["Content-Disposition"] = f'attachment; filename="{name}-agreement.csv"'
    return response
