"""Taking part in an EGO-FLIGHT frame-ordering study in headless Chromium, from the old ordering
address: instructions, a practice item with its feedback, three trials answered by keyboard and by
drag and drop, a reload mid-trial that resumes the same trial as it was left, then the scored
trials. The page names frames by per-trial handles; the feedback read after the practice item does
not count into the next trial's server time, which starts when the page reports the trial shown."""

import pytest
from playwright.sync_api import expect

from annotator.studies import selectors
from annotator.studies.handles import handles_of
from annotator.studies.models import Participant, Study, Trial
from annotator.studies.selectors import server_rt_ms
from annotator.studies.services import create_study
from tests.conftest import wait_for
from tests.studies.conftest import stored_video
from tests.ui.conftest import log_in

ALL_DECODED = "() => [...document.querySelectorAll('#frames img')].every(i => i.complete && i.naturalWidth === 64)"


def _order(frames) -> list[str]:
    return [frames.nth(i).get_attribute("data-handle") for i in range(frames.count())]


def _shown(page, title):
    expect(page.locator("#trial-title")).to_have_text(title)
    page.wait_for_function(ALL_DECODED)
    page.wait_for_selector("#trial[data-shown]", state="attached")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_participant_orders_frames_by_keyboard_and_drag_and_the_trials_are_scored(
    worker, live_server, browser, project, annotator, tmp_path
):
    stored_video(project, tmp_path / "counter.mp4", seconds=100.0, name="counter.mp4")
    # One condition: which of the preset's nine a participant gets is drawn from a seed and their
    # user id, which depends on how many users earlier tests made, and a long-clip condition of a
    # 100 s video has fewer than three items.
    study, _ = create_study(
        project,
        "pilot",
        "ordering",
        preset="ego-flight",
        seed=7,
        options={
            "frame_size": 64,
            "practice_items": 1,
            "questions_per_participant": 3,
            "conditions_per_participant": 1,
            "exclusion": {"min_median_rt_s": 0.05},
            "conditions": [
                {
                    "number": 1,
                    "label": "original (4 frames)",
                    "n_frames": 4,
                    "clip_length": "medium",
                    "annotation": "brief",
                }
            ],
        },
    )

    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server.url}/projects/{project.slug}/ordering/pilot/")  # the old address leads here
    expect(page.locator("#instructions")).to_be_visible()
    expect(page.locator("#instructions h1")).to_have_text("Frame or text ordering")
    page.keyboard.press("Enter")  # begin

    frames = page.locator("#frames > li")
    _shown(page, "Practice 1 of 1")
    n = frames.count()
    page.wait_for_timeout(300)
    page.keyboard.press("Enter")  # answer the practice item as shown
    expect(page.locator("#feedback")).to_be_visible()
    verdict = page.locator("#feedback-verdict").inner_text()
    # The participant's order beside the right one (issue 21), each of theirs saying where it belongs.
    expect(page.locator("#feedback-right .frame")).to_have_count(n)
    expect(page.locator("#feedback-right .frame .tag").first).to_have_text("1")
    expect(page.locator("#feedback-yours .frame")).to_have_count(n)
    yours = page.locator("#feedback-yours .frame .tag").all_inner_texts()
    page.wait_for_timeout(3000)  # reading the feedback for 3 s
    page.keyboard.press("Enter")  # continue

    _shown(page, "Question 1 of 3")
    before = _order(frames)
    assert all(len(h) == 16 and int(h, 16) >= 0 for h in before)
    page.locator("#frames > li:not(.pinned)").first.focus()
    page.keyboard.press("ArrowRight")  # by keyboard
    after = _order(frames)
    assert after != before and sorted(after) == sorted(before)
    page.wait_for_timeout(1500)  # a 1.5 s answer
    page.keyboard.press("Enter")

    _shown(page, "Question 2 of 3")
    free = page.locator("#frames > li:not(.pinned)")
    first_handle = free.first.get_attribute("data-handle")
    free.first.drag_to(free.last)  # by drag and drop
    expect(page.locator("#frames > li:not(.pinned)").first).not_to_have_attribute("data-handle", first_handle)
    page.wait_for_timeout(300)
    page.locator("#answer").click()

    _shown(page, "Question 3 of 3")
    page.locator("#frames > li:not(.pinned)").first.focus()
    page.keyboard.press("ArrowRight")
    left_as = _order(frames)
    page.wait_for_timeout(300)
    page.reload()  # mid-trial
    _shown(page, "Question 3 of 3")  # the same trial ...
    assert _order(frames) == left_as  # ... as it was left
    page.wait_for_timeout(200)
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    assert errors == []
    context.close()

    participant = Participant.objects.get(user=annotator)
    assert participant.stage == "done" and not participant.excluded
    practice = Trial.objects.get(participant=participant, practice=True)
    assert practice.response == practice.item.payload["shown"]  # answered as shown
    assert verdict == ("Right." if practice.response == practice.item.truth else "Not quite.")
    truth = practice.item.truth
    assert yours == [
        f"{k} · right place" if eid == truth[k - 1] else f"{k} · belongs at {truth.index(eid) + 1}"
        for k, eid in enumerate(practice.response, start=1)
    ]
    trials = list(Trial.objects.filter(participant=participant, practice=False).order_by("position"))
    by_handle = {h: eid for eid, h in handles_of(trials[2].pk, trials[2].item.truth).items()}
    assert trials[2].response == [by_handle[h] for h in left_as]
    assert all(t.client_rt_ms and t.client_rt_ms > 0 and t.served_at <= t.shown_at <= t.answered_at for t in trials)
    # The feedback was read for 3 s; the first question was served only after it (on "Continue"), shown,
    # then answered in 1.5 s: its server time is the 1.5 s.
    first = trials[0]
    # Under 4 s: the 3 s of feedback counted in would make it 4.5 s or more (the rest is the test's own
    # steps before its 1.5 s, which a loaded machine stretches).
    assert 1400 <= server_rt_ms(first) < 4000, server_rt_ms(first)
    assert 1400 <= first.client_rt_ms <= server_rt_ms(first) + 500, (first.client_rt_ms, server_rt_ms(first))
    assert (first.served_at - practice.answered_at).total_seconds() >= 2.9
    wait_for(
        lambda: not Trial.objects.filter(participant=participant, scored_at__isnull=True).exists(),
        what="the trials scored by the worker",
    )
    rows = [r for r in selectors.score_table(Study.objects.get(pk=study.pk)) if r["respondent"] == "human"]
    assert len(rows) == 1 and rows[0]["metrics"]["kendall_tau_b"]["n"] == 3
