"""The verify page at 1366x768, keyboard first (issue 21): shortcuts work whatever control last had
the mouse (only text fields keep their keys), the key legend in a side panel on ?, one clock format
(h:mm:ss.f), "1 QA pair", a toast in view naming what was saved or skipped, skip's preset reasons,
and a released unit's players let go of their media. One page load serves two units."""

import pytest
from playwright.sync_api import expect

from annotator.qa.models import QAPair, Skip
from tests.ui import axe

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

IN_VIEW = (
    "(sel) => { const r = document.querySelector(sel).getBoundingClientRect();"
    " return r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }"
)


def test_keys_legend_clock_toast_and_skip_reasons_at_1366(live_server, browser, make_unit, annotator):
    make_unit(n_open=0)  # two units of one QA pair each
    make_unit(n_open=0)
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "ann")
    page.fill("#id_password", "pw-ann-123")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/proj/verify/")
    expect(page.locator("#cards > li")).to_have_count(1)

    # One QA pair, singular; times as h:mm:ss.f on the card, the clock and the loop line.
    expect(page.locator("#status")).to_have_text("This unit: 1 QA pair")
    expect(page.locator("#cards .clip")).to_have_text("0:00:00.0 – 0:00:10.0")
    expect(page.locator("#clock")).to_have_text("0:00:00.0")
    expect(page.locator("#loop-note")).to_have_text("Looping 0:00:00.0 – 0:00:10.0")
    assert axe.violations(page) == []

    # Skip: a preset reason, with words besides; "Other" without words is refused on the page.
    first = page.locator("#cards > li").first.get_attribute("data-qa-id")
    page.keyboard.press("s")
    expect(page.locator("#skip-dialog")).to_be_visible()
    page.keyboard.press("4")  # Other ...
    page.keyboard.press("Enter")  # ... with no words
    expect(page.locator("#skip-error")).to_have_text("Say why in a few words.")
    assert Skip.objects.count() == 0
    page.keyboard.press("2")  # the video is unclear
    assert page.locator("#skip-reason").get_attribute("maxlength") == str(500 - len("The video is unclear: "))
    page.locator("#skip-reason").fill("too dark to tell the objects apart")
    page.keyboard.press("Enter")
    expect(page.locator("#toast")).to_contain_text("Skipped unit ")
    expect(page.locator("#toast")).to_contain_text("The video is unclear: too dark to tell the objects apart")
    assert Skip.objects.get().reason == "The video is unclear: too dark to tell the objects apart"

    # The second unit. The mouse on a slider and on a select leaves the shortcuts working.
    expect(page.locator("#cards > li").first).not_to_have_attribute("data-qa-id", first)
    expect(page.locator("#cards > li")).to_have_count(1)
    slider = page.locator("#brightness input[type=range]")
    slider.click()  # the middle of 0.5..3: 1.7 or so
    before = slider.input_value()
    page.keyboard.press("ArrowRight")  # a seek, not brighter
    assert slider.input_value() == before
    page.keyboard.press("m")
    expect(page.locator("#audio")).to_have_text("Sound on (M)")
    page.locator("#rate").select_option("1.5")  # the select has the focus
    page.keyboard.press("ArrowUp")  # the previous item, not a faster rate
    assert page.locator("#rate").input_value() == "1.5"
    page.keyboard.press("v")
    expect(page.locator("#cards > li").first).to_have_attribute("data-state", "keep")

    # ? shows the keys in a side panel, inside the screen; ? or Esc closes it.
    expect(page.locator("#keys")).to_be_hidden()
    page.keyboard.press("?")
    expect(page.locator("#keys")).to_be_visible()
    expect(page.locator("#keys")).to_contain_text("Ctrl+Enter")
    assert axe.violations(page) == []  # the panel open
    assert page.evaluate(IN_VIEW, "#keys-close")
    page.keyboard.press("Escape")
    expect(page.locator("#keys")).to_be_hidden()
    page.get_by_role("button", name="Keys (?)").click()  # also by its button
    expect(page.locator("#keys")).to_be_visible()
    page.keyboard.press("?")
    expect(page.locator("#keys")).to_be_hidden()

    # Submit: a toast in view names the unit and what was done; the released unit's player is gone.
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#toast")).to_contain_text("Saved unit ")
    expect(page.locator("#toast")).to_contain_text(": 1 kept, 0 modified, 0 deleted, 0 added.")
    assert page.evaluate(IN_VIEW, "#toast")
    expect(page.locator("#empty")).to_be_visible()
    expect(page.locator("#players video")).to_have_count(0)
    assert QAPair.objects.filter(status="verified").count() == 1
    context.close()
