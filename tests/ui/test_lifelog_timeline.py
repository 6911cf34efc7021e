"""The life-log day timeline (X-LeBench seed 002 Sec. 3) in headless Chromium: parts at their
wall-clock times with the gaps shown, a click at a virtual time plays the right part at the right
local time, playback crosses a gap to the next part, and the keys move between parts."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from annotator.media.models import Video, VideoGroup
from tests.conftest import make_video, wait_for
from tests.ui import axe
from tests.ui.conftest import READ_THE_PLAYER, click_within, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# 08:00:00-08:00:04, gap 6 s, 08:00:10-08:00:14, gap 6 s, 08:00:20-08:00:24: span 24 s.
STARTS = ["2024-05-01T08:00:00", "2024-05-01T08:00:10", "2024-05-01T08:00:20"]
SPAN = 24.0


@pytest.fixture
def life_log(worker, project, tmp_path):
    rows = []
    for i, start in enumerate(STARTS):
        make_video(tmp_path / f"p{i}.mp4", seconds=4.0, size=("160x120", "176x144", "192x144")[i], audio=False)
        rows.append({"path": f"p{i}.mp4", "start": start, "summary": f"activity {i}"})
    manifest = tmp_path / "day.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows))
    call_command(
        "lifelog_build", "--project", project.slug, "--name", "day", "--manifest", str(manifest), stdout=StringIO()
    )
    wait_for(lambda: Video.objects.filter(status="ready").count() == 3, what="3 parts transcoded")
    return VideoGroup.objects.get(name="day")


def _click_at(page, t):
    """A click on the track at virtual second ``t`` (``click_within``: nothing was noted after a click at
    page coordinates in a full run, no part change, no seek)."""
    click_within(page.locator("#lifelog-track"), t / SPAN, 0.7)


# What the player did, as it happened: every timeupdate, part change and start of playback is noted
# with the player's state and the page's clock then. The parts are 4 s long, so "part 2 is playing"
# lasts 2 s of playback; on a busy machine the page may not be polled within that window, so the test
# asks whether it happened, not whether it is happening at the moment of a poll.
RECORD = """() => {
  window.seen = [];
  const v = document.getElementById('lifelog-video');
  const note = (type) => seen.push({
    type, part: lifelog.player.part, local: lifelog.player.localTime, virtual: lifelog.player.currentTime,
    src: v.currentSrc, playing: !v.paused, ready: v.readyState,
    clock: document.getElementById('lifelog-clock').textContent,
  });
  v.addEventListener('playing', () => note('playing'));
  for (const type of ['timeupdate', 'partchange']) lifelog.player.addEventListener(type, () => note(type));
}"""


def _happened(page, condition: str, timeout: float = 30_000) -> dict:
    """The first noted moment (since the last ``seen = []``) for which ``condition`` (JS over ``e``)
    holds, waiting up to ``timeout`` ms. On a time-out, fails with everything noted."""
    find = f"() => seen.find((e) => {condition}) || null"
    try:
        page.wait_for_function(find, timeout=timeout)
    except PlaywrightTimeout:
        pytest.fail(f"never: {condition}\nnoted: {page.evaluate('() => seen')}")
    return page.evaluate(find)


def _forget(page):
    page.evaluate("() => { seen.length = 0; }")


def test_click_plays_the_right_part_and_playback_crosses_gaps(live_server, browser, project, admin_user, life_log):
    context, page = log_in(browser, live_server.url, "boss", "pw-boss-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/lifelogs/")
    page.get_by_role("link", name="day").click()
    expect(page.locator(".lifelog-block")).to_have_count(3)
    expect(page.locator(".lifelog-gap-row")).to_have_text(
        ["gap 08:00:04 – 08:00:10: 6 s not recorded", "gap 08:00:14 – 08:00:20: 6 s not recorded"]
    )
    expect(page.locator("#lifelog-summary")).to_contain_text("3 parts from 08:00:00 to 08:00:24")
    page.evaluate(READ_THE_PLAYER)
    page.evaluate(RECORD)
    urls = [
        p["url"] for p in page.evaluate("() => JSON.parse(document.getElementById('lifelog-config').textContent).parts")
    ]

    # A click at virtual 12 s (08:00:12) plays part 2 at 2 s of its video, and the clock says so.
    _click_at(page, 12.0)
    s = _happened(page, "e.part === 1 && e.playing && e.ready >= 2")
    assert s["src"].endswith(urls[1])
    assert 1.8 <= s["local"] <= 3.0, s
    _happened(page, "e.type === 'timeupdate' && e.part === 1 && e.playing && e.clock.includes('08:00:1')")

    # Space pauses; a click in a gap (virtual 6 s) plays the next part from its start.
    page.keyboard.press("Space")
    page.wait_for_function("() => document.getElementById('lifelog-video').paused")
    _forget(page)
    _click_at(page, 6.0)
    expect(page.locator("#lifelog-note")).to_have_text("Skipped 4 s not recorded (08:00:06 – 08:00:10).")
    s = _happened(page, "e.part === 1 && e.local < 1.0 && e.playing")
    assert 10.0 <= s["virtual"] < 11.0, s

    # Played from 3 s of part 1, playback ends it, jumps the 6 s gap and goes on in part 2.
    _forget(page)
    _click_at(page, 3.0)
    _happened(page, "e.part === 0 && e.playing")
    s = _happened(page, "e.part === 1 && e.local > 0.2 && e.playing")
    assert s["src"].endswith(urls[1]) and s["virtual"] >= 10.2, s
    expect(page.locator("#lifelog-note")).to_have_text("Skipped 6 s not recorded (08:00:04 – 08:00:10).")

    # Keyboard: End goes to the last part, PageUp back one, Space pauses (or, if playback ran to the
    # end of the log meanwhile, plays: pressed again, it pauses).
    page.locator("#lifelog-track").focus()
    _forget(page)
    page.keyboard.press("End")
    _happened(page, "e.part === 2")
    _forget(page)
    page.keyboard.press("PageUp")
    _happened(page, "e.part === 1")
    page.keyboard.press("Space")
    if not page.evaluate("() => lifelog.player.paused"):
        page.keyboard.press("Space")
    page.wait_for_function("() => lifelog.player.paused && document.getElementById('lifelog-video').paused")
    expect(page.locator("#lifelog-play")).to_have_text("Play")
    context.close()


def test_annotators_do_not_see_life_logs(live_server, browser, project, annotator, admin_user, life_log):
    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    response = page.goto(f"{live_server.url}/projects/{project.slug}/lifelogs/{life_log.pk}/")
    assert response.status == 403
    context.close()


def test_the_verify_page_plays_a_life_log_unit_in_virtual_time(live_server, browser, project, annotator, life_log):
    from annotator.drafts.models import DraftJob, DraftRun
    from annotator.drafts.services import save_drafts
    from annotator.drafts.templates import DraftSpec
    from annotator.qa.models import QAType

    QAType.objects.create(
        project=project, slug="moment_query", name="Moment query", set_kind="life_log", answer_kind="interval"
    )
    first = life_log.members.get(position=0).video
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="t"), video=first
    )
    save_drafts(
        job,
        [
            DraftSpec(
                "moment_query",
                "When is the second part?",
                "08:00:10-08:00:14",
                0.0,
                SPAN,
                source_key="m",
                params={"answer_start_s": 10.0, "answer_end_s": 14.0},
            )
        ],
        actor="t",
    )
    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/projects/{project.slug}/verify/")
    expect(page.locator("#players video")).to_have_count(1)  # one player over the three parts
    page.wait_for_function("() => document.querySelector('#players video').readyState >= 2")
    names = [m.video.rendition.name for m in life_log.members.order_by("position")]
    # The timeline draws the parts and the gaps; times read as the log's wall clock (issue 21).
    expect(page.locator(".tl-range.part")).to_have_count(3)
    expect(page.locator(".tl-range.gap")).to_have_count(2)
    assert axe.violations(page) == []
    expect(page.locator("#cards .clip")).to_have_text("8:00:00.0 – 8:00:24.0")
    expect(page.locator("#cards .answer").last).to_have_text("Answer interval: 8:00:10.0 – 8:00:14.0")
    # The interval item loops its answer with 5 s of context each side (virtual 5..19), zoomed to it;
    # 5 s is in the first gap, so the player says so and goes on at the second part.
    expect(page.locator("#loop-note")).to_have_text("Looping 8:00:05.0 – 8:00:19.0")
    expect(page.locator("#zoom-level")).to_have_text("×1.7")
    expect(page.locator("#toast")).to_have_text(
        "Not recorded from 8:00:04.0 to 8:00:10.0 (0:00:06.0): playing from the next part, at 8:00:10.0."
    )
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("ArrowRight")  # virtual 11 s: 1 s into the second part
    page.wait_for_function(
        "(u) => { const v = document.querySelector('#players video'); "
        "return v.currentSrc.endsWith(u) && v.readyState >= 1 && Math.abs(v.currentTime - 1.0) < 0.3; }",
        arg=names[1],
    )
    expect(page.locator("#clock")).to_have_text("8:00:11.0")  # the log's wall clock at virtual 11 s (issue 21)
    assert not errors, errors
    context.close()
