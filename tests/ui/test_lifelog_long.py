"""A 2-hour life log (X-LeBench seed 002 Sec. 3: logs of hours) on its day timeline in headless
Chromium: the 2-hour part (the long-video tests' footage, HLS) and a later part after a 30 min gap;
a click at 07:30:00 plays the long part from 1:30:00 of its video through hls.js."""

import hashlib
import time

import pytest
from playwright.sync_api import expect

from annotator.media.lifelogs import build_life_log, read_rows
from annotator.media.models import Video
from tests.ui.conftest import READ_THE_PLAYER, click_within, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_two_hour_life_log_plays_from_a_click_at_07_30(long_video, live_server, browser, project, admin_user):
    later = Video.objects.create(
        project=project,
        sha256=hashlib.sha256(b"later").hexdigest(),
        filename="later.mp4",
        status="ready",
        duration_s=600.0,
        fps=10.0,
        width=160,
        height=68,
    )
    log = build_life_log(
        project,
        "long day",
        read_rows(
            [
                ("rows[0]", {"sha256": long_video.sha256, "start": "2024-05-01T06:00:00", "summary": "C rides."}),
                ("rows[1]", {"file": later.filename, "start": "2024-05-01T08:30:00"}),
            ]
        ),
    ).group
    context, page = log_in(browser, live_server.url, "boss", "pw-boss-123")
    fetched = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(f"{live_server.url}/projects/{project.slug}/lifelogs/{log.pk}/")
    expect(page.locator("#lifelog-summary")).to_contain_text("2 parts from 06:00:00 to 08:40:00")
    page.evaluate(READ_THE_PLAYER)
    expect(page.locator(".lifelog-gap-row")).to_have_text(["gap 08:00:00 – 08:30:00: 30 min not recorded"])
    expect(page.locator(".lifelog-tick")).to_have_count(3)  # 06:00, 07:00, 08:00 (the span ends 08:40)
    page.wait_for_function("() => document.getElementById('lifelog-video').readyState >= 1")
    assert page.evaluate("() => document.getElementById('lifelog-video').src").startswith("blob:")  # hls.js

    span = 2 * 3600 + 1800 + 600
    started = time.monotonic()
    click_within(page.locator("#lifelog-track"), 5400 / span, 0.7)
    # Within a pixel of 07:30:00 (one px is about 7 s here), playing in the first part.
    page.wait_for_function(
        "() => lifelog.player.part === 0 && !document.getElementById('lifelog-video').paused "
        "&& Math.abs(document.getElementById('lifelog-video').currentTime - 5400) < 15 "
        "&& document.getElementById('lifelog-video').readyState >= 3",
        timeout=10000,
    )
    print(f"click at 07:30:00 to playing: {time.monotonic() - started:.2f} s")
    expect(page.locator("#lifelog-clock")).to_contain_text("07:")
    assert any(url.endswith(".m4s") for url in fetched)
    assert not any(url.endswith(long_video.rendition.name) for url in fetched)
    context.close()
