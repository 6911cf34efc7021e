"""A panel participant through a study link, end to end in headless Chromium at 1366x768 (issue 19,
Tests): a Prolific-style URL, consent, screening (the test clip plays), instructions, a practice
trial with feedback, the trial, the debrief, and the completion redirect with the code, all by
keyboard, with no serious or critical axe-core violation on the consent, screening and debrief pages. Then: a reload mid-trial resumes; a second browser with the same PROLIFIC_PID resumes the
same participant; a full study shows its page; an abandoned participant's items are released; the
participant CSV has the right statuses.

The study is a real multiple-choice study built from verified QA pairs over ffmpeg clips, as
``study_create`` builds it: 2 scored items, 1 practice item, one question per person and one rater
per item, so two people fill it."""

from __future__ import annotations

import csv
import io
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.cache import cache
from django.utils import timezone
from playwright.sync_api import expect

from annotator.studies import links
from annotator.studies.models import Participant, Trial
from annotator.studies.services import create_study
from tests.studies.conftest import api_as, people, verified  # noqa: F401 (a fixture)
from tests.ui import axe

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PANEL = "https://app.prolific.com/submissions/complete"
SHOTS = Path(os.environ.get("STUDY_LINK_SHOTS", "/tmp/study-link-shots"))


def _context(browser):
    """A fresh browser (context) at 1366x768 whose visits to the panel's site are answered here."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.route(
        "https://app.prolific.com/**", lambda route: route.fulfill(status=200, body="panel", content_type="text/plain")
    )
    return context


def _shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def _in_view(page, selector):
    """The element is inside the 1366x768 viewport (the primary action needs no scrolling)."""
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    assert box["y"] >= 0 and box["y"] + box["height"] <= 768 and box["x"] + box["width"] <= 1366, (selector, box)


def _url(base, token, pid):
    return f"{base}/s/{token}/?PROLIFIC_PID={pid}&STUDY_ID=6650aa&SESSION_ID=ses-{pid}"


def _to_instructions(page, base, token, pid, shots=False):
    """From the panel URL through consent and screening, by keyboard, to the instructions."""
    page.goto(_url(base, token, pid))
    expect(page.locator("#consent h1")).to_have_text("Before you start")
    expect(page.locator("#accept")).to_be_focused()
    _in_view(page, "#accept")
    if shots:  # axe once per page kind (issue 21): consent, screening, debrief
        assert axe.violations(page) == []
    if shots:
        _shot(page, "1-consent")
    page.keyboard.press("Enter")
    expect(page.locator("#screening h1")).to_have_text("Check your browser")
    expect(page.locator("#screening-continue")).to_be_enabled(timeout=20_000)  # the 2 s test clip played to its end
    expect(page.locator("#check-played")).to_have_text("Test video: played.")
    expect(page.locator("#check-viewport")).to_have_text("Window size: 1366 x 768, fine.")
    expect(page.locator("#screening-continue")).to_be_focused()
    _in_view(page, "#screening-continue")
    if shots:
        assert axe.violations(page) == []
    if shots:
        _shot(page, "2-screening")
    page.keyboard.press("Enter")
    expect(page.locator("#instructions")).to_be_visible()
    _in_view(page, "#begin")
    if shots:
        _shot(page, "3-instructions")


def _wait_shown(page):
    page.wait_for_selector("#trial[data-shown]", state="attached", timeout=20_000)


def test_a_panel_participant_goes_from_the_link_to_the_completion_code(verified, live_server, browser, project):
    cache.clear()
    verified(3)
    study, _ = create_study(
        project,
        "panel-e2e",
        "mcq",
        seed=3,
        options={
            "per_type": 2,
            "time_limits": [300],
            "questions_per_participant": 1,
            "practice_items": 1,
            "attention_items": 0,
            "raters_per_item": 1,
        },
    )
    study.completion_url = PANEL
    study.debrief = "Thank you. **This study measured** how people answer questions about videos."
    study.save()
    token = links.create_link(study).token
    base = live_server.url
    errors = []

    # --- First participant: the whole way, by keyboard, with a reload mid-trial and a second browser.
    one = _context(browser)
    page = one.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    _to_instructions(page, base, token, "5f1e0000000000000000aaaa", shots=True)
    page.keyboard.press("Enter")
    _wait_shown(page)
    expect(page.locator("#trial-title")).to_have_text("Practice 1 of 1")
    expect(page.locator("#progress")).to_have_attribute("max", "1")
    _shot(page, "4-practice")
    _in_view(page, "#answer")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    expect(page.locator("#feedback")).to_be_visible()
    expect(page.locator("#continue")).to_be_focused()
    page.keyboard.press("Enter")
    _wait_shown(page)
    expect(page.locator("#trial-title")).to_have_text("Question 1 of 1")
    participant = Participant.objects.get(study=study)
    open_trial = Trial.objects.get(participant=participant, answered_at__isnull=True)
    page.reload()  # a reload resumes the same trial
    _wait_shown(page)
    expect(page.locator("#trial-title")).to_have_text("Question 1 of 1")
    assert Trial.objects.get(participant=participant, answered_at__isnull=True).pk == open_trial.pk

    two = _context(browser)  # another browser, the same PROLIFIC_PID
    other = two.new_page()
    other.goto(_url(base, token, "5f1e0000000000000000aaaa"))
    _wait_shown(other)
    expect(other.locator("#trial-title")).to_have_text("Question 1 of 1")
    assert Participant.objects.filter(study=study).count() == 1
    two.close()

    _shot(page, "5-trial")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(page.locator("#debrief h1")).to_have_text("Thank you")
    expect(page.locator("#debrief strong")).to_have_text("This study measured")
    expect(page.locator("#finish")).to_be_focused()
    _in_view(page, "#finish")
    assert axe.violations(page) == []
    _shot(page, "6-debrief")
    page.keyboard.press("Enter")
    participant.refresh_from_db()
    code = participant.completion_code
    expect(page.locator("#code")).to_have_text(code)
    _shot(page, "7-done")
    page.wait_for_url(f"{PANEL}?cc={code}", timeout=10_000)  # the completion redirect with the code
    one.close()
    assert (
        participant.export_status,
        Trial.objects.filter(participant=participant, answered_at__isnull=False).count(),
    ) == ("completed", 2)

    # --- An abandoned participant holds the second place until the periodic release frees it.
    idle = _context(browser)
    ip = idle.new_page()
    _to_instructions(ip, base, token, "5f1e0000000000000000bbbb")
    idle.close()
    late = _context(browser)
    lp = late.new_page()
    lp.goto(_url(base, token, "5f1e0000000000000000cccc"))
    expect(lp.locator("#study-full h1")).to_have_text("This study is full")
    assert lp.locator("#trial").count() == 0
    _shot(lp, "8-full")
    abandoned = Participant.objects.get(pseudonym=links.pseudonym_of("5f1e0000000000000000bbbb"))
    Participant.objects.filter(pk=abandoned.pk).update(last_active_at=timezone.now() - timedelta(minutes=61))
    assert links.release_idle() == 1
    assert Trial.objects.filter(participant=abandoned).count() == 0
    _to_instructions(lp, base, token, "5f1e0000000000000000cccc")  # the released place is taken
    lp.keyboard.press("Enter")
    _wait_shown(lp)
    expect(lp.locator("#trial-title")).to_have_text("Practice 1 of 1")
    late.close()

    # --- The participant CSV for approving payments.
    (researcher,) = people(project, 1, role="researcher", prefix="r")
    res = api_as(researcher).get(f"/api/studies/{study.pk}/participants/?format=csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(res.streaming_content).decode())))
    assert [(r["external_id"], r["status"]) for r in rows] == [
        ("5f1e0000000000000000aaaa", "completed"),
        ("5f1e0000000000000000bbbb", "timed_out"),
        ("5f1e0000000000000000cccc", "in_progress"),
    ]
    assert rows[0]["completion_code"] == code and re.fullmatch(r"[A-Z2-9]{10}", code)
    assert errors == []
