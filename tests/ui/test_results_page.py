"""The study results dashboard in headless Chromium, served with the app's Content-Security-Policy:
the charts (Chart.js and its error-bar plugin, vendored) draw on their canvases with axis titles,
condition names and legends; the box that includes excluded participants swaps the charts' data and
the score table; nothing is refused by the CSP and nothing errs in the console.

Charts are read from their Chart.js instances (``Chart.getChart(canvas)``) by functions passed to
``page.evaluate``, not strings run through eval (which the CSP forbids)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotator.projects.services import ensure_member
from annotator.studies.models import Condition, Item, Participant, Prediction, Study, Trial
from tests.ui.conftest import log_in

# Everything a chart shows that a reader needs: axis titles, the title, legend and category labels, and the points.
READ_CHART = """(id) => {
  const chart = Chart.getChart(document.getElementById(id));
  if (!chart) return null;
  const canvas = chart.canvas;
  const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
  return {
    type: chart.config.type,
    x: chart.options.scales.x.title.display && chart.options.scales.x.title.text,
    y: chart.options.scales.y.title.display && chart.options.scales.y.title.text,
    title: chart.options.plugins.title.text,
    legend: chart.options.plugins.legend.display ? chart.legend.legendItems.map((item) => item.text) : [],
    labels: chart.data.labels,
    points: chart.data.datasets.map((d) => d.data),
    width: canvas.width, height: canvas.height, painted,
  };
}"""


def _answered(participant, items, rts_ms, right):
    now = timezone.now()
    for position, (item, rt, ok) in enumerate(zip(items, rts_ms, right)):
        shown = now - timedelta(seconds=60 - position)
        Trial.objects.create(
            participant=participant,
            item=item,
            position=position,
            response=0 if ok else 1,
            client_rt_ms=rt,
            served_at=shown,
            shown_at=shown,
            answered_at=shown + timedelta(milliseconds=rt),
            scores={"accuracy": 1.0 if ok else 0.0},
            scored_at=now,
        )


def _multiple_choice(project, people):
    """Two conditions (60 s, 180 s) of four items in two subtasks; ``a`` takes the quick one (3 of 4
    right), ``b`` the deliberate one (4 of 4), ``c`` the quick one (0 of 4) and is excluded; the model
    ``gpt-x`` answers all right."""
    study = Study.objects.create(
        project=project, name="mc", kind="mcq", questions_per_participant=4, exclusion={"min_median_rt_s": 1.0}
    )
    items = {}
    for number, label, limit in ((1, "quick (60 s)", 60.0), (2, "deliberate (180 s)", 180.0)):
        cond = Condition.objects.create(study=study, number=number, label=label, time_limit_s=limit)
        items[number] = [
            Item.objects.create(
                condition=cond,
                index=i,
                subtask=("counting", "spotting")[i % 2],
                key=f"q{i}",
                truth=0,
                payload={"question": "Which?", "options": ["a", "b"], "media": []},
            )
            for i in range(4)
        ]
    a, b, c = people
    for person, number, rts, right, excluded in (
        (a, 1, [2500, 3000, 4200, 5100], [1, 1, 1, 0], False),
        (b, 2, [8000, 9500, 12000, 15500], [1, 1, 1, 1], False),
        (c, 1, [300, 350, 400, 450], [0, 0, 0, 0], True),
    ):
        participant = Participant.objects.create(
            study=study,
            user=person,
            stage="done",
            excluded=excluded,
            exclusion_reasons=["median response time 0.38 s is under 1 s"] if excluded else [],
        )
        _answered(participant, items[number], rts, right)
    for item in items[1] + items[2]:
        Prediction.objects.create(
            study=study, model="gpt-x", item=item, predicted=0, scores={"accuracy": 1.0}, scored_at=timezone.now()
        )
    return study


def _likert(project, people):
    """Two criteria; real, random-matched and filtered items rated 5, 2 and 1 by ``a``."""
    study = Study.objects.create(project=project, name="vudg", kind="likert", questions_per_participant=6)
    participant = Participant.objects.create(study=study, user=people[0], stage="done")
    position = 0
    for number, criterion in ((1, "relevance"), (2, "correctness")):
        cond = Condition.objects.create(study=study, number=number, label=criterion, variables={"criterion": criterion})
        for index, (group, score) in enumerate((("real", 5), ("random_matched", 2), ("filtered", 1))):
            item = Item.objects.create(
                condition=cond,
                index=index,
                group=group,
                subtask="counting",
                key=f"{number}:{index}",
                payload={"criterion": criterion, "question": "Q?", "answer": "A.", "media": []},
            )
            shown = timezone.now() - timedelta(seconds=30)
            Trial.objects.create(
                participant=participant,
                item=item,
                position=position,
                response={"score": score},
                client_rt_ms=2000.0 + 500 * position,
                served_at=shown,
                shown_at=shown,
                answered_at=shown + timedelta(seconds=2),
                scores={"score": float(score)},
                scored_at=timezone.now(),
            )
            position += 1
    return study


def _watch(page) -> list[str]:
    """Console errors, CSP refusals (Chromium logs them as console errors) and uncaught exceptions."""
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"{m.type}: {m.text}") if m.type == "error" or "Content Security Policy" in m.text else None
        ),
    )
    page.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))
    return problems


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_dashboard_draws_labelled_charts_and_toggles_the_excluded_participants(live_server, browser, project):
    takers = [ensure_member(f"t{i}", role="annotator", project=project, password=f"pw-t{i}-123")[0] for i in range(3)]
    ensure_member("res", role="researcher", project=project, password="pw-res-123")
    _multiple_choice(project, takers)
    context, page = log_in(browser, live_server.url, "res", "pw-res-123")
    problems = _watch(page)
    response = page.goto(f"{live_server.url}/projects/{project.slug}/studies/mc/results/")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-eval" not in policy and "unsafe-inline" not in policy
    page.wait_for_function(
        "() => ['bars-accuracy', 'rt-hist'].every((id) => Chart.getChart(document.getElementById(id)))"
    )
    page.wait_for_timeout(1200)  # the bars' entry animation

    bars = page.evaluate(READ_CHART, "bars-accuracy")
    assert bars["type"] == "barWithErrorBars"
    assert bars["x"] == "Condition · subtask (QA type)"
    assert bars["y"] == "Accuracy (share of questions right, 0–1)"
    assert bars["title"] == "Accuracy: mean and 95% confidence interval"
    assert bars["legend"] == ["humans", "gpt-x"]
    assert bars["labels"] == [
        ["1. quick (60 s)", "all subtasks"],
        ["1. quick (60 s)", "counting"],
        ["1. quick (60 s)", "spotting"],
        ["2. deliberate (180 s)", "all subtasks"],
        ["2. deliberate (180 s)", "counting"],
        ["2. deliberate (180 s)", "spotting"],
    ]
    humans, model = bars["points"]
    assert [p["y"] for p in humans] == [0.75, 1.0, 0.5, 1.0, 1.0, 1.0]  # t0 alone in the quick condition
    assert [p["n"] for p in humans] == [4, 2, 2, 4, 2, 2]
    assert humans[0]["yMin"] < 0.75 < humans[0]["yMax"] and humans[3]["yMin"] == humans[3]["yMax"] == 1.0
    assert [p["y"] for p in model] == [1.0] * 6
    assert bars["width"] > 300 and bars["height"] > 100 and bars["painted"] > 1000

    rt = page.evaluate(READ_CHART, "rt-hist")
    assert (rt["x"], rt["y"]) == ("Client response time (s)", "Trials (count)")
    assert rt["legend"] == ["1. quick (60 s) (n = 4)", "2. deliberate (180 s) (n = 4)"]
    assert rt["labels"][0] == "0–1" and rt["labels"][-1] == "15–16"  # 1 s bins up to the longest, 15.5 s
    assert [sum(counts) for counts in rt["points"]] == [4, 4] and rt["painted"] > 1000
    expect(page.locator("#score-table")).to_be_visible()
    expect(page.locator("#score-table-all")).to_be_hidden()
    expect(page.locator("#participants tr[data-excluded]")).to_contain_text("median response time 0.38 s is under 1 s")

    page.locator("#include-excluded").check()  # the excluded participant t2 counts now
    with_excluded = page.evaluate(READ_CHART, "bars-accuracy")
    assert [p["y"] for p in with_excluded["points"][0]] == [0.375, 0.5, 0.25, 1.0, 1.0, 1.0]
    assert [p["n"] for p in with_excluded["points"][0]] == [8, 4, 4, 4, 2, 2]
    assert page.evaluate(READ_CHART, "rt-hist")["legend"] == [
        "1. quick (60 s) (n = 8)",
        "2. deliberate (180 s) (n = 4)",
    ]
    expect(page.locator("#score-table")).to_be_hidden()
    expect(page.locator("#score-table-all")).to_be_visible()
    expect(page.locator("#showing")).to_have_text("Showing results with every participant, excluded ones included.")
    page.locator("#include-excluded").uncheck()
    assert [p["n"] for p in page.evaluate(READ_CHART, "bars-accuracy")["points"][0]] == [4, 2, 2, 4, 2, 2]
    page.locator("#rt-hist").hover()  # a tooltip draws without error
    page.wait_for_timeout(300)
    assert problems == []
    context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_likert_dashboard_plots_mean_ratings_per_group_and_criterion(live_server, browser, project):
    rater = ensure_member("rater", role="annotator", project=project, password="pw-rater-123")[0]
    ensure_member("res", role="reviewer", project=project, password="pw-res-123")
    _likert(project, [rater])
    context, page = log_in(browser, live_server.url, "res", "pw-res-123")
    problems = _watch(page)
    page.goto(f"{live_server.url}/projects/{project.slug}/studies/vudg/results/")
    page.wait_for_function("() => Chart.getChart(document.getElementById('likert-bars'))")
    page.wait_for_timeout(1200)
    likert = page.evaluate(READ_CHART, "likert-bars")
    assert (likert["x"], likert["y"]) == ("Criterion", "Mean rating (Likert points, 1 poor … 5 excellent)")
    assert likert["labels"] == ["1. relevance", "2. correctness"]
    assert likert["legend"] == [
        "real pairs · humans",
        "random-matched (control) · humans",
        "filtered in review (control) · humans",
    ]
    assert [[p["y"] for p in series] for series in likert["points"]] == [[5.0, 5.0], [2.0, 2.0], [1.0, 1.0]]
    assert likert["painted"] > 1000
    expect(page.locator("#include-excluded")).to_be_disabled()  # nobody to include
    assert page.locator("canvas[id^='bars-']").count() == 0  # no per-metric bars beside the group chart
    rt = page.evaluate(READ_CHART, "rt-hist")
    assert rt["legend"] == ["1. relevance (n = 3)", "2. correctness (n = 3)"]
    assert problems == []
    context.close()
