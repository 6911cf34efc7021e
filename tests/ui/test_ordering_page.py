"""Taking part in a frame-ordering experiment in headless Chromium: instructions, a practice item
with feedback, three trials answered by keyboard and by drag and drop, a reload mid-trial that
resumes the same trial as it was left, and the scored trials on the researchers' dashboard.
The page names frames by per-trial handles; the feedback read after the practice item does not
count into the next trial's server time, which starts when the page reports the trial shown."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotator.experiments.handles import handles_of
from annotator.experiments.models import Experiment, Participant, Trial
from annotator.experiments.selectors import server_rt_ms
from tests.conftest import make_video, wait_for
from tests.ui.conftest import log_in


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_participant_takes_part_and_the_researcher_sees_the_scores(worker, live_server, browser, project, annotator,
                                                                      admin_user, tmp_path):
    clip = make_video(tmp_path / "counter.mp4", seconds=100.0, audio=False)
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"file": "counter.mp4", "annotations": {"description": "A test pattern counts up."}}) + "\n")
    call_command("ingest", str(clip), "--project", project.slug, "--manifest", str(manifest), "--wait", stdout=StringIO())
    call_command("ordering_create", "--project", project.slug, "--preset", "ego-flight", "--name", "pilot",
                 "--practice-items", "1", stdout=StringIO())
    Experiment.objects.filter(name="pilot").update(questions_per_participant=3, conditions_per_participant=1,
                                                   exclusion={"min_median_rt_s": 0.05})

    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/ordering/pilot/")
    expect(page.locator("#instructions")).to_be_visible()
    page.keyboard.press("Enter")                                         # begin

    frames = page.locator("#frames > li")
    expect(page.locator("#trial-title")).to_have_text("Practice 1 of 1")
    page.wait_for_function("() => [...document.querySelectorAll('#frames img')].every(i => i.complete && i.naturalWidth === 224)")
    page.wait_for_timeout(300)
    page.keyboard.press("Enter")                                         # answer the practice item as shown
    expect(page.locator("#feedback")).to_contain_text("order")
    page.wait_for_timeout(3000)                                          # reading the feedback for 3 s
    page.locator("#continue").click()

    expect(page.locator("#trial-title")).to_have_text("Question 1 of 3")
    page.wait_for_function("() => [...document.querySelectorAll('#frames img')].every(i => i.complete)")
    before = [frames.nth(i).get_attribute("data-handle") for i in range(frames.count())]
    assert all(len(h) == 16 and int(h, 16) >= 0 for h in before)
    movable = page.locator("#frames > li:not(.pinned)").first
    movable.focus()
    page.keyboard.press("ArrowRight")                                     # by keyboard
    after = [frames.nth(i).get_attribute("data-handle") for i in range(frames.count())]
    assert after != before and sorted(after) == sorted(before)
    page.wait_for_timeout(1500)                                           # a 1.5 s answer
    page.keyboard.press("Enter")

    expect(page.locator("#trial-title")).to_have_text("Question 2 of 3")
    page.wait_for_function("() => [...document.querySelectorAll('#frames img')].every(i => i.complete)")
    free = page.locator("#frames > li:not(.pinned)")
    first_handle = free.first.get_attribute("data-handle")
    free.first.drag_to(free.last)                                         # by drag and drop
    expect(page.locator("#frames > li:not(.pinned)").first).not_to_have_attribute("data-handle", first_handle)
    page.wait_for_timeout(300)
    page.locator("#answer").click()

    expect(page.locator("#trial-title")).to_have_text("Question 3 of 3")
    page.wait_for_function("() => [...document.querySelectorAll('#frames img')].every(i => i.complete)")
    page.locator("#frames > li:not(.pinned)").first.focus()
    page.keyboard.press("ArrowRight")
    left_as = [frames.nth(i).get_attribute("data-handle") for i in range(frames.count())]
    page.wait_for_timeout(300)
    page.reload()                                                         # mid-trial
    expect(page.locator("#trial-title")).to_have_text("Question 3 of 3")  # the same trial ...
    assert [frames.nth(i).get_attribute("data-handle") for i in range(frames.count())] == left_as  # ... as it was left
    page.wait_for_function("() => [...document.querySelectorAll('#frames img')].every(i => i.complete)")
    page.wait_for_timeout(200)
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    context.close()

    participant = Participant.objects.get(user=annotator)
    assert participant.stage == "done" and not participant.excluded
    trials = list(Trial.objects.filter(participant=participant, practice=False).order_by("position"))
    by_handle = {h: eid for eid, h in handles_of(trials[2].pk, trials[2].item.truth).items()}
    assert trials[2].response == [by_handle[h] for h in left_as]
    assert all(t.client_rt_ms and t.client_rt_ms > 0 and t.served_at <= t.shown_at <= t.answered_at for t in trials)
    # The first question was served while the feedback was read (3 s), shown, then answered in 1.5 s:
    # its server time is the 1.5 s, not the 4.5 s since it was served.
    first = trials[0]
    assert 1400 <= server_rt_ms(first) <= 2500, server_rt_ms(first)
    assert 1400 <= first.client_rt_ms <= server_rt_ms(first) + 500, (first.client_rt_ms, server_rt_ms(first))
    assert (first.answered_at - first.served_at).total_seconds() >= 4.4
    wait_for(lambda: not Trial.objects.filter(participant=participant, scored_at__isnull=True).exists())

    admin_context, admin_page = log_in(browser, live_server.url, "boss", "pw-boss-123")
    admin_page.goto(f"{live_server.url}/projects/{project.slug}/ordering/pilot/results/")
    human = admin_page.locator("#score-table tr[data-respondent=human]")
    expect(human).to_have_count(1)
    expect(human).to_contain_text("3")  # n = 3 scored trials
    expect(admin_page.locator("#participants")).to_contain_text("ann")
    expect(admin_page.locator("#rt-hist")).to_be_visible()
    csv = admin_context.request.get(f"{live_server.url}/projects/{project.slug}/ordering/pilot/trials.csv").text()
    assert len(csv.strip().splitlines()) == 1 + 4  # header + practice + 3 trials
    admin_context.close()
