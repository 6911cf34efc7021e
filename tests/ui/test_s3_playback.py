"""With S3 storage, the verify page plays a long video's HLS in headless Chromium: hls.js fetches the
playlists from /files/ and follows /files/'s 302s to presigned URLs on moto's S3 server. Nothing is
refused by the CSP (built as the settings build it for S3: without the bucket in connect-src this
test fails).

The bucket gets the CORS rule the README asks for, but this test does not show it is needed: moto's
server answers cross-origin requests from any origin whatever the bucket's rule (AWS S3 does not)."""

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.services import save_drafts
from annotator.drafts.templates import DraftSpec
from annotator.media import streaming
from annotator.media.models import Video
from annotator.projects.services import token_for
from annotator.qa.services import ensure_qa_type
from tests.conftest import make_video, wait_for
from tests.ui.conftest import log_in


@pytest.mark.browser
def test_a_long_video_on_s3_plays_through_files_redirects(
    s3, s3_endpoint, s3_built_settings, live_server, browser, worker, project, admin_user, annotator, tmp_path, settings
):
    client, bucket = s3
    client.put_bucket_cors(
        Bucket=bucket,
        CORSConfiguration={
            "CORSRules": [
                {
                    "AllowedOrigins": [live_server.url],
                    "AllowedMethods": ["GET", "HEAD"],
                    "AllowedHeaders": ["*"],
                    "ExposeHeaders": ["Content-Range", "Content-Length"],
                    "MaxAgeSeconds": 600,
                }
            ]
        },
    )
    settings.CONTENT_SECURITY_POLICY = s3_built_settings["csp"]  # as the settings build it for this endpoint
    assert s3_endpoint in settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]["connect-src"]
    settings.MEDIA_HLS_MIN_DURATION_S = 1.0  # a 12 s video stands in for a long one

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(admin_user)}")
    with make_video(tmp_path / "long.mp4", seconds=12.0, size="320x240").open("rb") as fh:
        video_id = api.post(f"/api/projects/{project.slug}/videos/", {"file": fh}, format="multipart").json()["id"]
    # Transcoded by the real Celery worker (the upload queued it on commit), writing to the bucket.
    wait_for(lambda: Video.objects.get(pk=video_id).status != "processing", timeout=120, what="the transcode")
    video = Video.objects.get(pk=video_id)
    assert video.status == "ready" and video.hls.name, video.error

    ensure_qa_type(project, "scene_sequence", name="Scene sequence", clip_policy="whole")
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="templates-v1"),
        video=video,
    )
    save_drafts(
        job,
        [DraftSpec("scene_sequence", "What is shown?", "a test card", 0.0, video.duration_s, source_key="0")],
        actor="templates/templates-v1",
    )
    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    fetched, refused, failed = [], [], []
    page.on("response", lambda response: fetched.append((response.url, response.status)))
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("console", lambda msg: refused.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.goto(f"{live_server.url}/projects/{project.slug}/verify/")
    expect(page.locator("#cards > li")).to_have_count(1)
    page.wait_for_function("() => document.querySelector('#players video').readyState >= 1")
    assert page.evaluate("() => document.querySelector('#players video').src").startswith("blob:")  # hls.js
    page.evaluate("() => { const v = document.querySelector('#players video'); v.currentTime = 6; v.play(); }")
    page.wait_for_function("() => document.querySelector('#players video').currentTime > 6.2", timeout=10000)

    files = f"{live_server.url}/files/hls/{streaming.media_key(video)}/"
    bucket_url = f"{s3_endpoint}/{bucket}/hls/{streaming.media_key(video)}/"
    assert any(url.startswith(files) and url.endswith(".m3u8") and status == 200 for url, status in fetched)
    assert any(url.startswith(files) and url.endswith(".m4s") and status == 302 for url, status in fetched)
    assert any(url.startswith(bucket_url) and ".m4s?" in url and status in (200, 206) for url, status in fetched)
    assert refused == [] and failed == []
    context.close()
