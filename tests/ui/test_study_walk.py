"""Issue 21, study pages (participants), in headless Chromium at 1366x768 as a first-time participant:

- a multiple-choice study whose items show two clips, with a practice item: the instructions say
  what this study does (one practice question, no time limit); Enter before the trial is shown says
  "Wait until everything is shown." and the words go once it is; the Answer button is on screen
  without scrolling and nothing scrolls sideways; the practice feedback names the participant's
  choice beside the right one; axe-core finds no serious or critical violation on the trial;
- a Likert rating with a justification box: Answer on screen; Shift+Enter starts a new line in the
  box and Enter sends, as the button's "(Enter)" says.

Other items of the issue are checked in the tests of their pages: the open answer's Enter
(test_study_page), the missed trial after a time-out (test_study_page), the ordering feedback beside
the right order (test_ordering_page)."""

import pytest
from playwright.sync_api import expect

from annotator.qa.models import QAPair
from annotator.studies.models import Trial
from annotator.studies.services import create_study
from tests.studies.conftest import verified  # noqa: F401 (a fixture)
from tests.ui import axe

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 1366, 768
SHOTS = "/tmp/h21s" if __import__("os").path.isdir("/tmp/h21s") else None


def _page(browser, live_server):
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "ann")
    page.fill("#id_password", "pw-ann-123")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    return context, page, errors


def _in_view_unscrolled(page, selector) -> bool:
    """``selector`` wholly inside the 1366x768 viewport, the page not scrolled in either direction."""
    return page.evaluate(
        """(sel) => {
        const r = document.querySelector(sel).getBoundingClientRect();
        return window.scrollY === 0 && window.scrollX === 0 && r.top >= 0 && r.left >= 0
            && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
    }""",
        selector,
    )


def _no_sideways_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def _shot(page, name):
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/{name}.png")


def test_a_two_clip_multiple_choice_study_fits_says_what_it_does_and_shows_the_choice_beside_the_right_one(
    verified, live_server, browser, project, annotator
):
    _, units = verified(3)
    first, second = (u.video for u in units[:2])
    for pair in QAPair.objects.filter(project=project, options__isnull=False):
        QAPair.objects.filter(pk=pair.pk).update(
            videos=[
                {"label": "Video 1", "video_id": first.pk, "start_s": 0.0, "end_s": 4.0},
                {"label": "Video 2", "video_id": second.pk, "start_s": 1.0, "end_s": 5.0},
            ]
        )
    create_study(
        project,
        "two-clips",
        "mcq",
        seed=3,
        options={"per_type": 2, "practice_items": 1, "questions_per_participant": 2, "attention_items": 0},
    )
    context, page, errors = _page(browser, live_server)
    held, gate = [], {"open": False}
    page.route(
        "**/files/studyclips/*",  # the clips wait until let go
        lambda route: route.continue_() if gate["open"] else held.append(route),
    )
    page.goto(f"{live_server.url}/projects/{project.slug}/studies/two-clips/")

    expect(page.locator("#instructions")).to_be_visible()
    text = page.locator("#instructions .markdown").inner_text()
    assert "The first question is practice: afterwards you see the right option." in text
    assert "time limit" not in text.lower() and "Play the clips as often as you like" in text
    page.keyboard.press("Enter")  # begin
    expect(page.locator("#trial-title")).to_have_text("Practice 1 of 1")
    expect(page.locator("#widget video")).to_have_count(2)
    page.keyboard.press("Enter")  # too early: the clips are not there
    expect(page.locator("#status")).to_have_text("Wait until everything is shown.")
    gate["open"] = True
    for route in held:
        route.continue_()
    page.wait_for_selector("#trial[data-shown]", state="attached", timeout=20_000)
    expect(page.locator("#status")).to_have_text("")  # cleared once the trial is visible

    assert _in_view_unscrolled(page, "#answer"), page.locator("#answer").bounding_box()
    assert _in_view_unscrolled(page, "#widget .study-options legend")
    assert _no_sideways_scroll(page)
    _shot(page, "mcq-two-clips")
    assert axe.violations(page) == []

    right = Trial.objects.get(participant__user=annotator, practice=True).item.truth
    wrong = (right + 1) % 4
    page.keyboard.press("ABCD"[wrong])
    page.keyboard.press("Enter")
    expect(page.locator("#feedback")).to_be_visible()
    expect(page.locator("#feedback-verdict")).to_have_text("Not quite.")
    expect(page.locator("#feedback-choice")).to_have_text(
        f"You chose {'ABCD'[wrong]}. The right option was {'ABCD'[right]}."
    )
    _shot(page, "mcq-feedback")
    assert axe.violations(page) == []
    page.keyboard.press("Enter")  # continue
    expect(page.locator("#trial-title")).to_have_text("Question 1 of 2")
    page.wait_for_selector("#trial[data-shown]", state="attached", timeout=20_000)
    assert _in_view_unscrolled(page, "#answer")
    assert errors == []
    context.close()


def test_a_likert_rating_keeps_answer_in_view_and_enter_sends_from_the_justification(
    verified, live_server, browser, project, annotator
):
    verified(1)
    create_study(
        project,
        "rate",
        "likert",
        seed=1,
        options={
            "source": "qa",
            "criteria": ["correctness"],
            "justify_below": 3,
            "control_groups": False,
            "attention_items": 0,
            "questions_per_participant": 1,
            "conditions_per_participant": 1,
        },
    )
    context, page, errors = _page(browser, live_server)
    page.goto(f"{live_server.url}/projects/{project.slug}/studies/rate/")
    expect(page.locator("#instructions")).to_be_visible()
    text = page.locator("#instructions .markdown").inner_text()
    assert "A score below 3 needs a short written justification" in text and "X-LeBench" not in text
    page.keyboard.press("Enter")
    page.wait_for_selector("#trial[data-shown]", state="attached", timeout=20_000)
    assert _in_view_unscrolled(page, "#answer"), page.locator("#answer").bounding_box()
    # the scale and the justification box too, above the Answer row that stays at the bottom
    answer_top = page.locator("#widget").evaluate(
        "() => document.querySelector('.submit-row').getBoundingClientRect().top"
    )
    box = page.locator("#justification").bounding_box()
    assert _in_view_unscrolled(page, ".study-scale") and box["y"] + box["height"] <= answer_top, (box, answer_top)
    assert _no_sideways_scroll(page)
    _shot(page, "likert")
    assert axe.violations(page) == []

    page.keyboard.press("2")
    page.locator("#justification").click()
    page.keyboard.type("The answer names")
    page.keyboard.press("Shift+Enter")  # a new line, not an answer
    page.keyboard.type("the wrong object.")
    expect(page.locator("#trial")).to_be_visible()
    expect(page.locator("#justification")).to_have_value("The answer names\nthe wrong object.")
    page.keyboard.press("Enter")  # sends, from the box
    expect(page.locator("#done")).to_be_visible()
    assert errors == []
    context.close()
    trial = Trial.objects.get(participant__user=annotator)
    assert trial.response == {"score": 2, "justification": "The answer names\nthe wrong object."}


def test_a_researcher_edits_the_instructions_from_the_preview(verified, live_server, browser, project):
    from tests.studies.conftest import people

    verified(1)
    create_study(project, "mc", "mcq", seed=1, options={"practice_items": 0, "time_limits": [60]})
    people(project, 1, role="researcher", prefix="r")
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "r0")
    page.fill("#id_password", "pw-r0-123")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/{project.slug}/studies/mc/preview/")
    expect(page.locator("#instructions")).to_be_visible()
    expect(page.locator("#instructions .markdown")).to_contain_text("You have 1 minute for each question")
    assert axe.violations(page) == []  # the banner's actions were under 4.5:1 contrast
    page.locator("#preview-instructions").click()
    expect(page.locator("#instructions-text")).to_have_value(
        __import__("re").compile(r"^You will see a question about one or more video clips")
    )
    assert axe.violations(page) == []
    page.locator("#instructions-text").fill("Look at both clips, then **choose**.")
    page.locator("#instructions-form button[type=submit]").click()
    expect(page.locator("#instructions-shown")).to_have_text("Look at both clips, then choose.")
    page.goto(f"{live_server.url}/projects/{project.slug}/studies/mc/preview/")
    expect(page.locator("#instructions .markdown")).to_have_text("Look at both clips, then choose.")
    context.close()
