"""The videos page at 1366x768 (issue 21, "Videos page"): upload with a progress bar per file, posters
that open a preview player, filters, and failed videos with their reason and a Retry. Real files: ffmpeg
makes them, the upload goes through the API into a real Celery worker's transcode. axe-core finds no
serious or critical violation on the page."""

import pytest
from playwright.sync_api import expect

from annotator.media.models import Video
from tests.conftest import wait_for
from tests.ui import axe
from tests.ui.conftest import log_in

VIEWPORT = {"width": 1366, "height": 768}


def _in_view(page, selector: str) -> bool:
    return page.evaluate(
        """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }""",
        selector,
    )


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_admin_uploads_previews_filters_and_retries_videos(
    live_server, browser, worker, project, admin_user, short_video, corrupt_video
):
    base = live_server.url
    context, page = log_in(browser, base, "boss", "pw-boss-123")
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{base}/projects/proj/videos/")
    expect(page.locator("#videos")).to_contain_text("No videos yet: upload some above")
    assert _in_view(page, "#upload-start")
    assert axe.violations(page) == []

    # Upload two files at once: each has its own progress bar and outcome.
    page.get_by_label("Upload videos").set_input_files([str(short_video), str(corrupt_video)])
    page.locator("#upload-start").click()
    items = page.locator(".upload-item")
    expect(items.nth(0).locator(".upload-note")).to_have_text("uploaded: it is being processed", timeout=30_000)
    expect(items.nth(1).locator(".upload-note")).to_contain_text("refused: ", timeout=30_000)
    assert items.nth(0).locator("progress").evaluate("(p) => p.value === p.max && p.max > 1000")
    good = wait_for(lambda: Video.objects.filter(filename="short.mp4", status="ready").first(), what="the transcode")
    bad = Video.objects.get(filename="truncated.mp4")
    assert bad.status == "failed" and bad.error

    # The list: a poster to open the preview, the failed one with its reason (refused at ingest: no Retry).
    page.get_by_role("link", name="Show them in the list").click()
    expect(page.locator("#video-count")).to_have_text("2 of 2 videos")
    poster = page.get_by_role("button", name="Preview short.mp4")
    expect(poster.locator("img")).to_have_js_property("complete", True)
    assert poster.locator("img").evaluate("(img) => img.naturalWidth") > 0
    failed = page.locator(".video-card[data-status=failed]")
    expect(failed.locator(".video-error")).to_have_text(f"Failed: {bad.error}")
    expect(failed).to_contain_text("Refused before it was stored: fix the file and upload it again.")
    assert axe.violations(page) == [] and page.evaluate(
        "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )

    poster.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#preview")).to_have_attribute("open", "")
    expect(page.locator("#preview-title")).to_have_text("short.mp4")
    page.wait_for_function("() => document.getElementById('preview-video').currentTime > 0.2")
    assert axe.violations(page) == []
    page.keyboard.press("Escape")
    expect(page.locator("#preview")).not_to_have_attribute("open", "")
    assert page.evaluate("() => document.getElementById('preview-video').paused")

    # Filters: by status and by a part of the name.
    page.get_by_label("Status").select_option("failed")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#video-count")).to_have_text("1 of 2 videos")
    expect(page.locator(".video-name")).to_have_text(["truncated.mp4"])
    page.get_by_role("link", name="Show all").click()
    page.get_by_label("File name contains").fill("SHORT")
    page.keyboard.press("Enter")
    expect(page.locator(".video-name")).to_have_text(["short.mp4"])

    # A transcode that gave up (its worker killed three times): the reason, and Retry runs it again.
    Video.objects.filter(pk=good.pk).update(
        status="failed", error="gave up after 3 deliveries: a worker died on it each time"
    )
    page.reload()
    card = page.locator(".video-card[data-status=failed]")
    expect(card.locator(".video-error")).to_have_text(
        "Failed: gave up after 3 deliveries: a worker died on it each time"
    )
    card.get_by_role("button", name="Retry short.mp4").click()
    expect(page.locator(".messages")).to_have_text("short.mp4: its transcode is queued again.")
    wait_for(lambda: Video.objects.get(pk=good.pk).status == "ready", what="the transcode retried")
    assert Video.objects.get(pk=good.pk).error == ""
    context.close()
