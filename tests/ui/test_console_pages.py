"""The console's pages in Chromium at 1366x768 (issue 20, section 7): an admin goes from the home
page to the units list, filters it and assigns a pass by keyboard alone; an annotator finds their
submitted unit on My work and reopens it; nothing is wider than the window; no console error."""

from __future__ import annotations

from playwright.sync_api import expect

from annotator.qa.models import QueueItem
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, set_queue_policy, submit_unit
from tests.conftest import uh
from tests.ui.conftest import log_in

VIEWPORT = {"width": 1366, "height": 768}


def _fits(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_admin_filters_and_assigns_by_keyboard_and_annotator_reopens(
    live_server, browser, make_unit, project, admin_user, annotator, annotator2
):
    set_queue_policy(project, double_check_share=0)
    first, second = make_unit(1), make_unit(1)
    item = claim_next(project, annotator)
    submit_unit(
        item.unit_id,
        annotator,
        idempotency_key="k",
        time_spent_ms=1000,
        additions=[],
        decisions=[Decision(p.pk, "keep") for p in item.unit.qa_pairs.all()],
    )
    errors: list[str] = []

    context, page = log_in(browser, live_server.url, "boss", "pw-boss-123")
    page.set_viewport_size(VIEWPORT)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(live_server.url + "/")
    expect(page.get_by_role("heading", name="Team")).to_be_visible()
    _fits(page)
    page.get_by_role("link", name="Units").click()
    expect(page.get_by_role("heading", name="Units of Test project")).to_be_visible()
    _fits(page)
    # Filter by keyboard: focus the status select, choose "open", Tab on to the annotator field
    # (a text field: Enter submits the form).
    page.locator('select[name="status"]').focus()
    page.keyboard.press("ArrowDown")  # any -> open
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_url("**status=open**")
    open_item = QueueItem.objects.get(unit=second)
    expect(page.locator("#units tbody tr")).to_have_count(1)
    # Assign it by keyboard: type a name into its field, Tab to Assign, Enter.
    page.get_by_label(f"Assign pass {open_item.pk} to").focus()
    page.keyboard.type("ann2")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("is now served to ann2 only, first")
    assert "status=open" in page.url  # back to the filtered list
    assert QueueItem.objects.get(pk=open_item.pk).assigned_to_id == annotator2.pk
    context.close()

    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    page.set_viewport_size(VIEWPORT)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.get_by_role("link", name="My work").click()
    expect(page.locator("#my-units")).to_contain_text("submitted, awaiting review")
    _fits(page)
    page.get_by_role("button", name="Reopen").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text(f"unit {uh(first)} reopened")
    expect(page.locator("#rework")).to_contain_text(f"unit {uh(first)}")
    context.close()
    assert errors == []
