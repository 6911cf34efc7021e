"""The agreement dashboard in headless Chromium, served with the app's Content-Security-Policy: the
charts (bars with intervals, the rater-by-rater and confusion heatmaps, the trend) draw with their
axis titles; the most disputed pair links to its history; a pair goes to the consensus round, a
refused consensus keeps what was typed, the recorded one shows both rounds, and after the scope is
computed again the dashboard draws the consensus round beside the first. Nothing is refused by the
CSP and nothing errs in the console.

Charts are read from their Chart.js instances by a function passed to ``page.evaluate`` (no eval)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.agreement import services
from annotator.agreement.models import ConsensusItem
from annotator.projects.services import ensure_member
from tests.ui.conftest import browser, log_in  # noqa: F401 (the module-scoped browser fixture)

R = 50
SCREENSHOT = "/tmp/agreement-dashboard.png"

READ_CHART = """(id) => {
  const chart = Chart.getChart(document.getElementById(id));
  if (!chart) return null;
  const canvas = chart.canvas;
  const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
  const scales = chart.options.scales;
  return {
    type: chart.config.type,
    x: scales.x.title.display && scales.x.title.text,
    y: scales.y.title.display && scales.y.title.text,
    title: chart.options.plugins.title.text,
    legend: chart.options.plugins.legend.display ? chart.legend.legendItems.map((item) => item.text) : [],
    labels: chart.data.labels && chart.data.labels.length ? chart.data.labels : scales.x.labels,
    points: chart.data.datasets.map((d) => d.data),
    width: canvas.width, height: canvas.height, painted,
  };
}"""


def _watch(page) -> list[str]:
    """Console errors, CSP refusals (logged as console errors) and uncaught exceptions."""
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"{m.type}: {m.text}") if m.type == "error" or "Content Security Policy" in m.text else None
        ),
    )
    page.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))
    return problems


def _charts_drawn(page, ids):
    page.wait_for_function("(ids) => ids.every((id) => Chart.getChart(document.getElementById(id)))", arg=ids)
    page.wait_for_timeout(1200)  # the bars' entry animation


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_dashboard_draws_its_charts_and_runs_a_consensus_round(live_server, browser, project, two_raters):  # noqa: F811
    ensure_member("lead", role="reviewer", project=project, password="pw-lead-123")
    services.compute(project, "verification", trigger="api", n_resamples=R)
    context, page = log_in(browser, live_server.url, "lead", "pw-lead-123")
    page.set_viewport_size({"width": 1366, "height": 768})
    problems = _watch(page)
    dashboard = f"{live_server.url}/projects/{project.slug}/agreement/"
    response = page.goto(dashboard)
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-eval" not in policy and "unsafe-inline" not in policy
    _charts_drawn(page, ["bars-0-0", "raters-0-0", "confusion-0-0", "trend-0"])
    page.screenshot(path=SCREENSHOT)
    page.screenshot(path=SCREENSHOT.replace(".png", "-full.png"), full_page=True)

    bars = page.evaluate(READ_CHART, "bars-0-0")
    assert (bars["type"], bars["x"], bars["y"]) == ("barWithErrorBars", "Metric", "Agreement (1 = perfect)")
    assert bars["legend"] == ["first round"] and "Percent agreement" in bars["labels"]
    assert bars["points"][0][bars["labels"].index("Percent agreement")]["y"] == 0.5
    assert bars["painted"] > 1000
    raters = page.evaluate(READ_CHART, "raters-0-0")
    assert (raters["type"], raters["x"], raters["title"]) == (
        "matrix",
        "Rater",
        "Percent agreement of each pair of raters",
    )
    assert (
        sorted(c["text"] for c in raters["points"][0]) == ["0.50", "0.50", "1.00", "1.00"] and raters["painted"] > 1000
    )
    confusion = page.evaluate(READ_CHART, "confusion-0-0")
    assert confusion["x"] == "Another rater's answer" and confusion["labels"] == ["delete", "keep", "modify"]
    trend = page.evaluate(READ_CHART, "trend-0")
    assert trend["x"] == "Computed at (your local time)" and "Percent agreement (nominal)" in trend["legend"]
    page.locator("#raters-0-0").hover()  # a heatmap tooltip draws without error
    page.wait_for_timeout(200)
    expect(page.locator("#raters-table-0-0")).to_be_hidden()  # the same matrix as a table, on demand
    page.get_by_text("Rater-by-rater agreement as a table").first.click()
    expect(page.locator("#raters-table-0-0 td").first).to_contain_text("(12)")

    # The most disputed pair links to its history.
    link = page.locator("#top-0-0 a.history-link").first
    href = link.get_attribute("href")
    pair = href.rstrip("/").rsplit("/", 1)[1]
    assert href == f"/projects/{project.slug}/qa/{pair}/"
    link.click()
    expect(page.locator("h1")).to_contain_text(f"QA pair {pair}")
    page.go_back()

    # Send it to the consensus round, with its checkbox (by keyboard: Space checks it).
    page.locator(f"#top-0-0 tr[data-item='{pair}'] input[name=items]").focus()
    page.keyboard.press("Space")
    page.locator("#top-0-0").locator("xpath=..").get_by_role("button", name="Send to consensus round").click()
    expect(page.locator(".messages")).to_contain_text("Sent 1 item to the consensus round.")
    page.locator(f"#consensus-queue tr[data-item='{pair}'] a").click()

    # A refused consensus (none given) keeps what was typed.
    page.get_by_label("Re-evaluated answer of", exact=False).first.fill("keep")
    page.get_by_label("Re-evaluated answer of", exact=False).nth(1).fill("keep")
    page.get_by_label("Note").fill("we watched it again")
    assert problems == []
    page.get_by_role("button", name="Record the consensus").click()
    expect(page.locator("#form-error")).to_contain_text("Nothing was recorded: record the consensus value")
    # The refused form comes back with 400, which Chromium logs; nothing else may be logged.
    assert problems == ["error: Failed to load resource: the server responded with a status of 400 (Bad Request)"]
    problems.clear()
    expect(page.get_by_label("Re-evaluated answer of", exact=False).nth(1)).to_have_value("keep")
    expect(page.get_by_label("Note")).to_have_value("we watched it again")
    page.get_by_label("Consensus (the agreed answer)").fill("keep")
    page.get_by_role("button", name="Record the consensus").click()
    expect(page.locator("#consensus-value")).to_have_text("keep")
    expect(page.locator("#rounds tr.changed")).to_have_count(1)  # one rater changed their answer
    expect(page.locator("#rounds")).to_contain_text("First round")
    assert ConsensusItem.objects.get(item=pair).status == "done"

    # Computed again (the worker's job, run here), the dashboard shows both rounds.
    services.compute(project, "verification", trigger="api", n_resamples=R)
    page.goto(dashboard)
    _charts_drawn(page, ["bars-0-0"])
    bars = page.evaluate(READ_CHART, "bars-0-0")
    assert bars["legend"] == ["first round", "after the consensus round"]
    at = bars["labels"].index("Percent agreement")
    assert [series[at]["y"] for series in bars["points"]] == [0.5, pytest.approx(7 / 12)]
    expect(page.locator("#metrics-0-0 tr[data-metric=percent_agreement][data-round=consensus]")).to_contain_text(
        "0.583"
    )
    expect(page.locator(f"#top-0-0 tr[data-item='{pair}']")).to_contain_text("reconciled")
    page.screenshot(path=SCREENSHOT.replace(".png", "-after.png"), full_page=True)
    assert problems == []
    context.close()
