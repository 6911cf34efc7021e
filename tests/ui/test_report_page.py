"""The benchmark report page in headless Chromium at 1366x768, under the app's Content-Security-Policy:
the form keeps what was chosen, the table names metrics and fields in words, the chart draws one bar
series per column with 95% whiskers inside the metric's range and labelled axes; nothing errs in the
console. Uses the hand-made world of tests/reports/conftest.py."""

import pytest
from playwright.sync_api import expect

from annotator.projects.services import ensure_member
from tests.reports.conftest import world  # noqa: F401 (fixture)
from tests.ui.conftest import log_in
from tests.ui.test_results_page import READ_CHART, _watch


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_report_page_draws_people_beside_models(live_server, browser, world):  # noqa: F811
    project = world["study"].project
    ensure_member("res", role="researcher", project=project, password="pw-res-123")
    context, page = log_in(browser, live_server.url, "res", "pw-res-123")
    page.set_viewport_size({"width": 1366, "height": 768})
    problems = _watch(page)
    expect(page.get_by_role("link", name="Benchmark report")).to_be_visible()
    page.get_by_role("link", name="Benchmark report").click()
    page.locator("input[name=study][value=timed]").check()
    page.locator(f"input[name=evaluation][value='{world['evaluation'].pk}']").check()
    page.get_by_label("Illumination").check()
    page.get_by_role("button", name="Show the report").click()
    page.wait_for_function("() => Chart.getChart(document.getElementById('report-chart-0'))")
    page.wait_for_timeout(1000)  # the bars' entry animation
    expect(page.locator("input[name=by][value=illumination]")).to_be_checked()
    expect(page.locator("#report-table-0 thead")).to_have_text(
        "Illumination human ev imp mp human − ev human − imp human − mp", use_inner_text=True
    )
    expect(page.locator("#report-table-0 tbody tr").first).to_contain_text("day")
    expect(page.locator("#report-table-0 tbody tr").first).to_contain_text("0.600 [")
    expect(page.locator("h2").first).to_have_text("Report: Accuracy")

    chart = page.evaluate(READ_CHART, "report-chart-0")
    assert chart["type"] == "barWithErrorBars"
    assert (chart["x"], chart["y"]) == ("Illumination", "Accuracy")
    assert chart["legend"] == ["human", "ev", "imp", "mp"]
    assert chart["labels"] == ["day", "night", "all"]
    humans = chart["points"][0]
    assert [p["y"] for p in humans] == [0.6, pytest.approx(1 / 3), 0.5] and [p["n"] for p in humans] == [5, 3, 8]
    assert all(0 <= p["yMin"] <= p["y"] <= p["yMax"] <= 1 for series in chart["points"] for p in series)
    assert chart["width"] > 600 and chart["painted"] > 1000
    page.locator("#report-chart-0").hover()
    page.wait_for_timeout(200)
    page.screenshot(path="/tmp/h_report/report-page.png", full_page=True)

    # A bad choice keeps the form and says why.
    page.goto(f"{live_server.url}/projects/{project.slug}/report/?by=colour")
    expect(page.locator("#form-error")).to_contain_text("unknown split field 'colour'")
    assert problems == []
    context.close()
