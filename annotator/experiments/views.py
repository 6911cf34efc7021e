"""Pages of the frame-ordering human baseline: taking part, and the researchers' dashboard with exports."""

import csv
import io
import json

from django.contrib.auth.decorators import login_required
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, render

from annotator import markdown
from annotator.experiments import selectors
from annotator.experiments.models import Experiment, Participant
from annotator.projects import access
from annotator.scoring.ordering import METRICS


def _experiment(request, slug, name, roles):
    project, _ = access.require(request.user, roles, slug=slug)
    return get_object_or_404(Experiment, project=project, name=name)


@login_required
def take(request, slug: str, name: str):
    """Instructions, then practice items with feedback, then the assigned trials, one at a time; by
    drag and drop or by keyboard. A reload resumes the same trial in the same order.

    Only the project's annotators take part: anyone else who is a member (who can see or export the
    truth) gets this page with status 403 and the reason in plain words, and no trial script. The
    page's configuration reaches its script through ``json_script`` (the CSP forbids inline script).
    """
    from annotator.errors import Forbidden
    from annotator.experiments.services import require_participant_role

    experiment = _experiment(request, slug, name, access.ALL_ROLES)
    try:
        require_participant_role(request.user, experiment.project)
    except Forbidden as exc:
        return render(request, "experiments/take.html", {"experiment": experiment, "refusal": str(exc)}, status=403)
    config = {"startUrl": f"/api/ordering/{experiment.pk}/start/", "currentUrl": f"/api/ordering/{experiment.pk}/current/",
              "shownUrl": "/api/ordering/trials/{id}/shown/", "answerUrl": "/api/ordering/trials/{id}/answer/"}
    return render(request, "experiments/take.html", {
        "experiment": experiment, "config": config,
        "instructions_html": markdown.render(experiment.instructions or DEFAULT_INSTRUCTIONS),
    })


DEFAULT_INSTRUCTIONS = """\
You will see frames taken from a short video, **shuffled**. Put them back in the order they happened,
earliest on the left.

- Drag a frame to move it, or use the keyboard: **Tab** to a frame, **←** / **→** to move it.
- Frames marked *pinned* are already in their right place and cannot move.
- Press **Enter** (or the button) to answer. Each answer is timed from the moment all frames are shown.
- The first few questions are practice: you will see the right order afterwards. They do not count.
"""


@login_required
def results(request, slug: str, name: str):
    """The researchers' dashboard: the score table (humans with and without excluded participants,
    beside models), per-condition bars with 95% intervals, response-time histogram, participants."""
    experiment = _experiment(request, slug, name, access.OVERSEE_ROLES)
    table = selectors.score_table(experiment)
    table_all = selectors.score_table(experiment, include_excluded=True)
    participants = list(Participant.objects.filter(experiment=experiment).select_related("user").prefetch_related("conditions"))
    per_person = selectors.participant_scores(experiment)
    for p in participants:
        p.scores = per_person.get(p.pk, {"tau": {"mean": None, "n": 0}, "median_rt_s": None, "median_server_rt_s": None,
                                         "last_shown_at": None})
    return render(request, "experiments/results.html", {
        "experiment": experiment, "table": table, "bars": _bars(table),
        "humans_all": [r for r in table_all if r["respondent"] == "human"],
        "hist": _hist_svg(selectors.rt_histogram(experiment)), "participants": participants,
        "unscored": selectors.unscored(experiment), "metrics": METRICS,
    })


def _bars(table: list[dict]) -> list[dict]:
    """Kendall's tau-b per condition and respondent as SVG-ready bars on a -1..1 scale (x in %)."""
    def x(v):
        return 50 + 50 * max(-1.0, min(1.0, v))

    out = []
    for r in table:
        m = r["metrics"]["kendall_tau_b"]
        if m["mean"] is None:
            continue
        out.append({"label": f'{r["condition"]["number"]}. {r["condition"]["label"]}', "respondent": r["respondent"],
                    "mean": m["mean"], "n": m["n"], "x0": min(50, x(m["mean"])), "w": abs(x(m["mean"]) - 50),
                    "lo": x(m["ci_low"]) if m["ci_low"] is not None else None,
                    "hi": x(m["ci_high"]) if m["ci_high"] is not None else None})
    return out


def _hist_svg(h: dict) -> dict:
    top = max([k + e for k, e in zip(h["kept"], h["excluded"])] + [1])
    n = len(h["kept"])
    # SVG units: 100 wide, 40 high; kept participants' trials in green, excluded ones stacked in grey.
    bars = [{"x": i * 100 / n, "w": 100 / n * 0.92, "kept_h": k * 40 / top, "kept_y": 40 - k * 40 / top,
             "ex_h": e * 40 / top, "ex_y": 40 - (k + e) * 40 / top, "from": h["edges"][i], "to": h["edges"][i + 1],
             "count": k + e} for i, (k, e) in enumerate(zip(h["kept"], h["excluded"]))] if n else []
    return {**h, "bars": bars}


@login_required
def export_trials(request, slug: str, name: str, fmt: str):
    """Per-trial export, JSONL or CSV, streamed (researchers, reviewers, admins)."""
    if fmt not in ("jsonl", "csv"):
        from django.http import Http404

        raise Http404("export as trials.jsonl or trials.csv")
    experiment = _experiment(request, slug, name, access.OVERSEE_ROLES)
    rows = selectors.trials_export(experiment)
    if fmt == "jsonl":
        lines = (json.dumps(r) + "\n" for r in rows)
        response = StreamingHttpResponse(lines, content_type="application/jsonl; charset=utf-8")
    else:
        response = StreamingHttpResponse(_csv_lines(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{experiment.name}-trials.{fmt}"'
    return response


def _csv_lines(rows):
    header = ["participant", "excluded", "exclusion_reasons", "condition", "item_id", "practice", "position", "shown",
              "response", "truth", "hints", "client_rt_ms", "served_at", "shown_at", "answered_at", "server_rt_ms", *METRICS]
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    for r in rows:
        r = {**r, "condition": r["condition"]["number"], "exclusion_reasons": "; ".join(r["exclusion_reasons"])}
        writer.writerow([json.dumps(r[k]) if isinstance(r[k], list) else r[k] for k in header])
        yield buf.getvalue()
        buf.seek(0)
        buf.truncate()
    yield buf.getvalue()


@login_required
def export_scores(request, slug: str, name: str):
    """The score table as CSV: condition, respondent, and per metric mean, CI and n."""
    experiment = _experiment(request, slug, name, access.OVERSEE_ROLES)
    include = request.GET.get("include_excluded") == "1"
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["condition", "label", "respondent", *[f"{m}_{k}" for m in METRICS for k in ("mean", "ci_low", "ci_high", "n")]])
    for r in selectors.score_table(experiment, include_excluded=include):
        writer.writerow([r["condition"]["number"], r["condition"]["label"], r["respondent"],
                         *[r["metrics"][m][k] for m in METRICS for k in ("mean", "ci_low", "ci_high", "n")]])
    response = StreamingHttpResponse([buf.getvalue()], content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{experiment.name}-scores.csv"'
    return response
