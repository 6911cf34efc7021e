"""The team page in headless Chromium at 1366x768, under the app's Content-Security-Policy: the period
chosen and the rate set with the keyboard alone, labelled columns, nothing wider than the window,
the CSV downloaded, no console error. Uses the scripted team of tests/team/conftest.py."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotator.team import figures
from tests.ui.conftest import browser, log_in  # noqa: F401 (fixture)
from tests.ui.test_results_page import _watch


@pytest.fixture(autouse=True)
def _only_this_apps_figures(monkeypatch):
    monkeypatch.delitem(figures.REGISTRY, "gold_accuracy", raising=False)
    monkeypatch.delitem(figures.REGISTRY, "rework_rate", raising=False)


def _tab_to(page, element_id: str, most: int = 3) -> None:
    """Press Tab until ``element_id`` has the focus (at most ``most`` times)."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == element_id:
            return
    pytest.fail(f"{element_id} not reached with {most} Tabs")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_admin_reads_figures_sets_the_rate_and_downloads_the_pay_by_keyboard(live_server, browser, team, tmp_path):  # noqa: F811
    context, page = log_in(browser, live_server.url, "boss", "pw-boss-123")
    page.set_viewport_size({"width": 1366, "height": 768})
    problems = _watch(page)
    response = page.goto(f"{live_server.url}/projects/proj/team/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    expect(page.get_by_label("Period")).to_have_value("month")  # the default

    # The period by keyboard: the select, its dates, Enter.
    page.get_by_label("Period").focus()
    page.get_by_label("Period").select_option("custom")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_from"
    page.keyboard.type("03022026")  # Chromium's date field (en-US): month, day, year, moving on by itself
    _tab_to(page, "id_to")  # past the field's calendar button
    page.keyboard.type("03032026")
    page.keyboard.press("Enter")
    page.wait_for_url("**/team/?period=custom&from=2026-03-02&to=2026-03-03")

    expect(page.locator("#figures thead th")).to_have_text(
        [
            "Annotator",
            "Units",
            "QA pairs",
            "Active time",
            "Per unit",
            "Gold accuracy",
            "Overridden",
            "Agreement",
            "Rework rate",
            "Page time",
        ]
    )
    expect(page.locator("#figures tbody tr").nth(0).locator("th, td")).to_have_text(
        ["ann", "2", "4", "3 min 05 s", "1 min 10 s", "–", "25.0% (n = 4)", "50.0% (n = 2)", "–", "2 min 13 s"]
    )
    expect(page.locator("#figures tbody tr").nth(2).locator("th")).to_have_text("ann3")
    expect(page.locator("#rate-now")).to_have_text("No rate is set: the report counts, without amounts.")

    # Readable at 1366x768: nothing is wider than the window.
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    assert page.locator("#figures").bounding_box()["width"] <= 1366 - 2 * 16

    # The rate by keyboard: amount, currency, three boxes (Space unticks gold), the button.
    page.get_by_label("Amount").focus()
    page.keyboard.type("20")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_currency"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Save the rate")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url("**/team/?period=custom&from=2026-03-02&to=2026-03-03#pay")
    expect(page.locator("#rate-now")).to_contain_text("The rate is 20.00 EUR per video")
    expect(page.locator("#pay-report tbody tr").nth(0).locator("th, td")).to_have_text(
        ["ann", "3", "2", "0.05", "40.00 EUR"]
    )
    expect(page.locator("#pay-total")).to_have_text("120.00 EUR")

    page.get_by_role("link", name="Download the pay report (CSV)").focus()
    with page.expect_download() as download:
        page.keyboard.press("Enter")
    saved = tmp_path / "pay.csv"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "proj-pay-2026-03-02-to-2026-03-03.csv"
    assert saved.read_text().splitlines() == [
        "user,units,videos,active_hours,amount,currency",
        "ann,3,2,0.05,40.00,EUR",
        "ann2,2,2,0.04,40.00,EUR",
        "ann3,2,2,0.02,40.00,EUR",
    ]
    Path("/tmp/team").mkdir(parents=True, exist_ok=True)
    page.screenshot(path="/tmp/team/team-page.png", full_page=True)
    assert problems == []
    context.close()
