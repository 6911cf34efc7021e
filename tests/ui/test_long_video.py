"""A 2-hour video on the verify page in headless Chromium: it plays through hls.js (HLS, not the MP4),
and after a seek to 1:30:00 it plays from there (how soon: bench/seek.py); once the unit is submitted, no more segments are fetched."""

import pytest
from playwright.sync_api import expect

from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.services import save_drafts
from annotator.drafts.templates import DraftSpec
from annotator.qa.services import ensure_qa_type
from tests.ui.conftest import log_in

SEEK_TO_S = 5400.0  # 1:30:00


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_two_hour_video_plays_from_1_30_00_within_2_s(long_video, live_server, browser, project, annotator):
    ensure_qa_type(project, "scene_sequence", name="Scene sequence", clip_policy="whole")
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="templates-v1"),
        video=long_video,
    )
    save_drafts(
        job,
        [
            DraftSpec(
                "scene_sequence",
                "In what order do the riders pass?",
                "left to right",
                0.0,
                long_video.duration_s,
                source_key="0",
            )
        ],
        actor="templates/templates-v1",
    )
    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    fetched, refused = [], []
    page.on("request", lambda request: fetched.append(request.url))
    page.on("console", lambda msg: refused.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.goto(f"{live_server.url}/projects/{project.slug}/verify/")
    expect(page.locator("#cards > li")).to_have_count(1)
    page.wait_for_function("() => document.querySelector('#players video').readyState >= 1")

    # hls.js feeds the element through MediaSource (a blob: URL); the MP4 rendition is never fetched.
    assert page.evaluate("() => document.querySelector('#players video').src").startswith("blob:")
    assert any(url.endswith("/master.m3u8") for url in fetched)
    page.evaluate(f"""() => {{ const v = document.querySelector('#players video');
                               v.currentTime = {SEEK_TO_S}; v.play(); }}""")
    # currentTime past 1:30:00 means frames there were decoded and are playing. How soon is the machine's
    # (bench/seek.py measures it against issue 11's targets); the test gives it 15 s under the suite's load.
    page.wait_for_function(
        f"() => document.querySelector('#players video').currentTime > {SEEK_TO_S + 0.2}", timeout=15_000
    )
    assert any(url.endswith("-01080.m4s") for url in fetched)  # the segment holding 5400 s (5 s segments)
    assert not any(url.endswith(long_video.rendition.name) for url in fetched)
    assert refused == []

    # Released (submitted, the queue then empty), the player fetches no more segments (issue 21:
    # the hidden player played on and hls.js kept loading). 3 s of playing would fetch some.
    page.keyboard.press("v")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#empty")).to_be_visible()
    expect(page.locator("#players video")).to_have_count(0)
    segments = sum(url.endswith(".m4s") for url in fetched)
    page.wait_for_timeout(3000)  # a window to see nothing happen in: no condition marks "no fetch"
    assert sum(url.endswith(".m4s") for url in fetched) == segments
    context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_long_video_with_sound_plays_its_hls_with_audio(live_server, browser, project, annotator, settings, tmp_path):
    """The demo footage has no sound: ffmpeg's test pattern with a tone, 24 s, counts as long here."""
    from annotator.media import services
    from tests.conftest import make_video
    from tests.long_video import ingest_now

    settings.MEDIA_HLS_MIN_DURATION_S = 10.0
    video = services.transcode(ingest_now(project, make_video(tmp_path / "tone.mp4", seconds=24.0, size="160x120")).pk)
    assert video.hls.name and video.audio_codec == "aac"
    ensure_qa_type(project, "scene_sequence", name="Scene sequence", clip_policy="whole")
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="templates-v1"),
        video=video,
    )
    save_drafts(
        job,
        [DraftSpec("scene_sequence", "What sound plays?", "a tone", 0.0, 24.0, source_key="0")],
        actor="templates/templates-v1",
    )
    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/verify/")
    expect(page.locator("#cards > li")).to_have_count(1)
    page.wait_for_function("() => document.querySelector('#players video').readyState >= 1")
    assert page.evaluate("() => document.querySelector('#players video').src").startswith("blob:")
    page.evaluate("() => { const v = document.querySelector('#players video'); v.currentTime = 15; v.play(); }")
    page.wait_for_function("() => document.querySelector('#players video').currentTime > 15.5", timeout=5000)
    # Chromium's count of decoded audio bytes: the muxed AAC track of the fMP4 segments is played too.
    page.wait_for_function(
        "() => document.querySelector('#players video').webkitAudioDecodedByteCount > 0", timeout=5000
    )
    context.close()
