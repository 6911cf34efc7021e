"""Trust on the verify page, in headless Chromium: the time spent survives a reload; a lease that
lapsed and went to someone else carries the work over (named) on a first pass and tells the first
holder what happened, a blind overlap pass does not carry it and the admins see it on the unit;
a refused submit shows each error on the card it concerns."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotator.qa.models import Autosave, QueueItem, Submission
from annotator.qa.selectors import progress
from annotator.qa.services import set_queue_policy
from tests.conftest import qh
from tests.ui.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _open_verify(browser, live_server, name, n_cards):
    context, page = log_in(browser, live_server.url, name, f"pw-{name}-123")
    page.goto(f"{live_server.url}/projects/proj/verify/")
    expect(page.locator("#cards > li")).to_have_count(n_cards)
    return context, page


def _lapse_all():
    QueueItem.objects.filter(status="open").update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def test_the_time_spent_survives_a_reload(live_server, browser, make_unit, project, annotator):
    set_queue_policy(project, double_check_share=0)
    make_unit(n_open=1)
    context, page = _open_verify(browser, live_server, "ann", 2)
    page.wait_for_timeout(3000)
    page.keyboard.press("v")
    expect(page.locator("#save-status")).to_have_text("All changes saved")
    before_reload = Autosave.objects.get().time_spent_ms
    assert before_reload >= 3000
    page.evaluate("localStorage.clear()")  # only the server's (bounded) copy is left
    page.reload()
    expect(page.locator("#cards > li").nth(0)).to_have_attribute("data-state", "keep")
    page.keyboard.press("j")
    page.keyboard.press("v")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#submit-status")).to_contain_text("2 kept")
    assert QueueItem.objects.get().time_spent_ms > before_reload
    context.close()


def test_a_takeover_carries_the_work_to_the_new_holder_and_tells_the_first(
    live_server, browser, make_unit, project, annotator, annotator2
):
    set_queue_policy(project, double_check_share=0)
    make_unit(n_open=1)
    a_context, a_page = _open_verify(browser, live_server, "ann", 2)
    a_page.keyboard.press("e")
    a_page.keyboard.press("Tab")
    a_page.keyboard.press("Control+a")
    a_page.keyboard.type("typed by ann")
    a_page.keyboard.press("Escape")
    a_page.keyboard.press("j")
    a_page.keyboard.press("v")
    expect(a_page.locator("#save-status")).to_have_text("All changes saved")
    a_time = Autosave.objects.get(user=annotator).time_spent_ms
    _lapse_all()  # ann's laptop sleeps through the lease

    b_context, b_page = _open_verify(browser, live_server, "ann2", 2)
    expect(b_page.locator("#carried")).to_contain_text("Continued from ann's work")
    expect(b_page.locator("#status")).to_contain_text("ann's work was restored")
    cards = b_page.locator("#cards > li")
    expect(cards.nth(0)).to_have_attribute("data-state", "modify")
    expect(cards.nth(0).locator("textarea[data-field=answer]")).to_have_value("typed by ann")
    expect(cards.nth(1)).to_have_attribute("data-state", "keep")

    a_page.keyboard.press("k")  # ann wakes up and works on: the next autosave finds the unit gone
    lost = a_page.locator("#lease-lost")
    expect(lost).to_contain_text("another annotator took it")
    expect(lost).to_contain_text("Your work was passed on to them")
    expect(lost).to_contain_text("stay credited to you")
    expect(a_page.get_by_role("button", name="Take the next unit")).to_be_focused()

    b_page.keyboard.press("Control+Enter")
    expect(b_page.locator("#submit-status")).to_contain_text("1 kept, 1 modified")
    kept = Autosave.objects.get(user=annotator)  # ann2's submit left ann's work where it was
    assert kept.time_spent_ms == a_time > 0
    assert {r["username"]: r["unfinished_ms"] for r in progress(project)["by_annotator"]} == {"ann": a_time, "ann2": 0}

    a_page.get_by_role("button", name="Take the next unit").click()
    expect(a_page.locator("#empty")).to_be_visible()
    a_context.close()
    b_context.close()


def test_an_overlap_pass_is_not_carried_over_and_the_admin_sees_the_work(
    live_server, browser, make_unit, project, annotator, annotator2, admin_user
):
    set_queue_policy(project, double_check_share=0, overlap_share=1.0, overlap_k=2)
    unit = make_unit(n_open=1)
    QueueItem.objects.filter(kind="first_pass").update(
        leased_by=admin_user, lease_expires_at=timezone.now() + timedelta(hours=1)
    )
    a_context, a_page = _open_verify(browser, live_server, "ann", 2)
    expect(a_page.locator("#kind")).to_have_text("Overlap (blind)")
    # The page says what the pass is for and what becomes of a disagreement (issue 20, section 4).
    expect(a_page.locator("#kind-note")).to_be_visible()
    expect(a_page.locator("#kind-note")).to_contain_text("An independent pass")
    expect(a_page.locator("#kind-note")).to_contain_text("goes to a consensus round")
    a_page.keyboard.press("x")
    a_page.keyboard.press("2")
    expect(a_page.locator("#save-status")).to_have_text("All changes saved")
    QueueItem.objects.filter(kind="overlap").update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    b_context, b_page = _open_verify(browser, live_server, "ann2", 2)
    expect(b_page.locator("#kind")).to_have_text("Overlap (blind)")
    expect(b_page.locator("#cards > li").nth(0)).to_have_attribute("data-state", "undecided")
    expect(b_page.locator("#carried")).to_be_hidden()

    a_page.keyboard.press("j")
    expect(a_page.locator("#lease-lost")).to_contain_text(
        "This is a blind overlap pass, so your work was not passed on"
    )

    admin_context, admin_page = log_in(browser, live_server.url, "boss", "pw-boss-123")
    admin_page.goto(f"{live_server.url}/projects/proj/progress/")
    admin_page.get_by_role("link", name=f"unit {unit.pk}", exact=True).click()
    work = admin_page.locator('#saved-work section[data-user="ann"]')
    expect(work).to_contain_text("kept, not carried over (blind pass)")
    expect(work).to_contain_text(": delete")
    expect(work).to_contain_text("reason: vague")
    for context in (a_context, b_context, admin_context):
        context.close()


def test_a_refused_submit_shows_each_error_on_its_card_and_focuses_the_first(
    live_server, browser, make_unit, project, annotator
):
    unit = make_unit(n_open=2)
    mc = unit.qa_pairs.order_by("id").last()
    context, page = _open_verify(browser, live_server, "ann", 3)

    def tamper(route):  # what a stale or buggy client might send: a time of two hours, a decision missing
        body = json.loads(route.request.post_data)
        body["decisions"][0]["time_spent_ms"] = 7_200_000
        body["decisions"] = [d for d in body["decisions"] if d["qa_id"] != qh(mc)]
        route.continue_(post_data=json.dumps(body))

    page.route("**/submit/", tamper)
    page.keyboard.press("v")
    page.keyboard.press("j")
    page.keyboard.press("e")
    page.keyboard.press("Tab")
    page.keyboard.press("Control+a")
    page.keyboard.type("   ")  # an answer of spaces only
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.keyboard.press("v")
    page.keyboard.press("n")  # a new QA pair with no question (its QA type is focused)
    page.keyboard.press("Escape")
    page.keyboard.press("i")  # In and Out at the playhead
    page.keyboard.press("o")
    page.locator("#cards > li").nth(3).locator("[data-field=answer]").fill("yes")
    page.keyboard.press("Control+Enter")

    cards = page.locator("#cards > li")
    expect(page.locator("#errors")).to_contain_text("the submit has errors; nothing was saved")
    expect(cards.nth(0).locator(".card-errors")).to_contain_text(
        "Time spent: 7,200 s is more time than has passed since you took this unit"
    )
    expect(cards.nth(1).locator(".card-errors")).to_contain_text("Answer: answer must not be empty")
    expect(cards.nth(2).locator(".card-errors")).to_contain_text(
        f"QA pair {qh(mc)} has no decision"
    )  # by handle (issue 20)
    expect(cards.nth(3).locator(".card-errors")).to_contain_text("Question: question must not be empty")
    expect(cards.nth(0)).to_be_focused()
    assert Submission.objects.count() == 0
    context.close()
