"""The reviewer page and a rework unit on the verify page, in headless Chromium at 1366x768: a
first-time reviewer sees Accept and Reject without scrolling, comments and tags a QA pair and
rejects by keyboard; the annotator gets the unit back first with the comments beside the pairs,
restores the deleted one and resubmits by keyboard."""

import re

import pytest
from playwright.sync_api import expect

from annotator.core.clock import span
from annotator.qa.models import QAPair, QueueItem
from annotator.review.models import Review, ReviewState
from tests.ui import axe
from tests.ui.conftest import browser  # noqa: F401 (the module-scoped browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREEN = {"width": 1366, "height": 768}


def _log_in(chromium, base, name, password):
    context = chromium.new_context(viewport=SCREEN)
    page = context.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", name)
    page.fill("#id_password", password)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/")
    return context, page


def test_a_reviewer_rejects_by_keyboard_and_the_annotator_sees_the_comments_on_the_rework(
    live_server, browser, make_unit, first_pass, annotator, reviewer, project
):  # noqa: F811
    make_unit(n_open=2)
    unit = first_pass(annotator)  # keeps the first open pair and the multiple-choice one, deletes the second
    kept, deleted = unit.qa_pairs.filter(origin="machine").order_by("id")[:2]
    base = live_server.url

    context, page = _log_in(browser, base, "rev", "pw-rev-123")
    page.goto(f"{base}/projects/{project.slug}/review/")
    expect(page.locator("#accept")).to_be_in_viewport()
    expect(page.locator("#reject")).to_be_in_viewport()
    cards = page.locator("#pairs > li.review-card")
    expect(cards).to_have_count(3)  # the two verified pairs and the deleted one
    expect(cards.nth(1)).to_contain_text("Deleted by ann as vague")
    # Clip times in the one clock format of the pages, h:mm:ss.f (issue 21), not "3.00 – 19.00 s".
    expect(cards.nth(0).locator(".clip")).to_have_text(span(kept.clip_start_s, kept.clip_end_s))
    expect(cards.nth(0).locator(".clip")).to_have_text(re.compile(r"^0:00:\d\d\.\d – 0:00:\d\d\.\d$"))
    assert axe.violations(page) == []  # the deleted card's grey text kept its contrast (issue 21)
    expect(page.locator("#queue li.current")).to_contain_text(f"Unit {unit.pk}")

    page.keyboard.press("r")  # reject with no comment: refused on the page, nothing sent
    expect(page.locator("#errors")).to_contain_text("Say what to change before rejecting")
    page.keyboard.press("Escape")
    page.keyboard.press("k")  # back to the first pair
    page.keyboard.press("c")
    page.keyboard.type("Name the pattern: colour bars.")
    page.keyboard.press("Escape")
    page.keyboard.press("1")  # its first tag
    page.keyboard.press("j")  # the deleted pair
    page.keyboard.press("c")
    page.keyboard.type("This was fine; keep it.")
    page.keyboard.press("Escape")
    page.keyboard.press("r")
    expect(page.locator("#confirm")).to_be_visible()
    expect(page.locator("#confirm-text")).to_have_text(
        f"Reject unit {unit.pk}: it goes back to ann as rework, with your 2 comments."
    )
    page.keyboard.press("Enter")
    expect(page.locator("#flash")).to_have_text(f"Unit {unit.pk} rejected: sent back to ann with 2 comments.")
    expect(page.locator("#empty")).to_be_visible()
    review = Review.objects.get()
    assert review.decision == "reject"
    assert [(c.qa_pair_id, c.text, c.tags) for c in review.comments.order_by("qa_pair_id")] == [
        (kept.pk, "Name the pattern: colour bars.", ["wrong_answer"]),
        (deleted.pk, "This was fine; keep it.", []),
    ]
    context.close()

    context, page = _log_in(browser, base, "ann", "pw-ann-123")
    page.goto(f"{base}/projects/{project.slug}/verify/")
    expect(page.locator("#kind")).to_have_text(
        re.compile("^rework$", re.IGNORECASE)
    )  # the label is the lead's (KIND_LABEL)
    expect(page.locator("#status")).to_contain_text(
        "sent back by a reviewer with 2 comments, shown beside the QA pairs"
    )
    expect(page.locator("#skip")).to_be_hidden()
    cards = page.locator("#cards > li")
    expect(cards).to_have_count(3)
    expect(cards.nth(0).locator(".review-comment")).to_have_text(
        "Reviewer: Name the pattern: colour bars. [wrong_answer]"
    )
    expect(cards.nth(1).locator(".review-comment")).to_have_count(0)
    expect(cards.nth(2).locator(".review-comment")).to_have_text("Reviewer: This was fine; keep it.")
    expect(cards.nth(2)).to_have_attribute("data-state", "delete")
    page.keyboard.press("s")  # no skip on a rework
    expect(page.locator("#skip-dialog")).to_be_hidden()
    page.keyboard.press("v")
    page.keyboard.press("j")
    page.keyboard.press("v")
    page.keyboard.press("j")
    page.keyboard.press("v")  # restore the deleted pair
    page.keyboard.press("Control+Enter")
    expect(page.locator("#submit-status")).to_contain_text("3 kept, 0 modified, 0 deleted, 0 added")
    context.close()

    assert QAPair.objects.get(pk=deleted.pk).status == "verified"
    assert QueueItem.objects.get(unit=unit, kind="rework").status == "done"
    assert ReviewState.objects.get(unit=unit).state == "resubmitted"
