"""A new annotator qualifies through the verify page in headless Chromium: the tutorial links to the
queue, which serves the qualification units first (by keyboard: keep, modify, delete as vague, keep),
and once enough decisions agree, the next unit is a real first pass."""

import re

import pytest
from playwright.sync_api import expect

from annotator.gold import services
from annotator.gold.models import Attempt, Source
from annotator.qa.models import QueueItem
from tests.ui.conftest import browser, log_in  # noqa: F401 (browser: a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _decide_as_known(page):
    """The verifier's decisions on a make_unit unit: keep, modify the answer, delete as vague, keep."""
    page.keyboard.press("v")
    page.keyboard.press("j")
    page.keyboard.press("e")
    page.keyboard.press("Tab")
    page.keyboard.press("Control+a")
    page.keyboard.type("a better answer")
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.keyboard.press("2")  # vague
    page.keyboard.press("j")
    page.keyboard.press("v")
    expect(page.locator("#progress")).to_have_text("4/4 decided, 0 added")
    page.keyboard.press("Control+Enter")


def test_a_new_annotator_qualifies_on_the_verify_page(
    live_server, browser, project, make_verified, make_unit, annotator
):
    make_verified(2)
    services.make_sources(project, Source.Role.QUALIFICATION, 2)
    services.set_policy(project, qualification_required=True, threshold=0.8, gold_rate=0)
    real = make_unit(n_open=1)

    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/tutorial/")
    page.get_by_role("link", name="Go to the queue").click()
    cards = page.locator("#cards > li")
    for n in (1, 2):
        expect(cards).to_have_count(4)
        expect(page.locator("#progress")).to_have_text("0/4 decided, 0 added")  # the next unit is in
        expect(page.locator("#kind")).to_have_text(re.compile("qualification", re.IGNORECASE))
        _decide_as_known(page)
        expect(page.locator("#submit-status")).to_contain_text("2 kept, 1 modified, 1 deleted")
    # Passed: the next unit is the real one, a first pass.
    expect(page.locator("#kind")).to_have_text(re.compile("first pass", re.IGNORECASE))
    expect(cards).to_have_count(2)
    expect(page.locator("#status")).to_contain_text("This unit: 2 QA pairs")
    assert QueueItem.objects.get(unit=real, kind="first_pass").leased_by_id == annotator.pk
    attempt = Attempt.objects.get(user=annotator)
    assert (attempt.agreed, attempt.decisions, attempt.passed) == (8, 8, True)
    context.close()


def test_a_paused_annotator_reads_why_and_whom_to_ask(live_server, browser, project, make_unit, annotator, admin_user):
    from annotator.gold.models import Pause, Standing

    make_unit()
    Standing.objects.create(project=project, user=annotator, paused=True)
    Pause.objects.create(project=project, user=annotator, reason="low", accuracy=0.5, window=10, threshold=0.8)
    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/verify/")
    expect(page.locator("#status")).to_contain_text("Your work on Test project is paused since")
    expect(page.locator("#status")).to_contain_text(
        "was 50%, below the project's 80%. Ask an admin of the project (boss)"
    )
    expect(page.locator("#workspace")).to_be_hidden()
    context.close()
