"""The export dialog at 1366x768 (issue 21, "Export dialog"): a choice of format, filters and media, run
as a job with its progress and a download link; an empty result says so. A real Celery worker runs the
jobs (tests/conftest.py ``worker``); axe-core finds no serious or critical violation on the page."""

import io
import json
import zipfile

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotator.core.models import Job
from annotator.qa.models import QAPair
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
def test_an_admin_exports_by_format_and_filters_as_a_job_and_downloads_the_zip(
    live_server, browser, worker, project, admin_user, make_unit
):
    unit = make_unit(1)
    QAPair.objects.filter(unit=unit).update(status="verified", provenance="machine_kept", verified_at=timezone.now())
    base = live_server.url
    context, page = log_in(browser, base, "boss", "pw-boss-123")
    page.set_viewport_size(VIEWPORT)
    page.get_by_role("link", name="Export QA pairs").click()
    expect(page.locator("h1")).to_have_text("Export the verified QA pairs of Test project")
    expect(page.locator("#exports-none")).to_have_text("No export yet.")
    assert _in_view(page, "#export-start")
    assert page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert axe.violations(page) == []

    # Filters that match nothing: the job ends and the page says so, with no link.
    page.get_by_label("Illumination").select_option("night")
    page.locator("#export-start").click()
    first = page.locator(".export-item").first
    expect(first).to_have_attribute("data-status", "done", timeout=30_000)
    expect(first.locator(".export-state")).to_have_text(
        "No verified QA pair matches these filters: nothing to download."
    )
    expect(first).to_contain_text("JSONL · no media · illumination night")
    assert first.locator("a").count() == 0

    # VLMEvalKit, by keyboard from the format radios: the zip holds its TSV and dataset class.
    page.get_by_label("Illumination").select_option("")
    page.get_by_label("VLMEvalKit").check()
    page.get_by_label("VLMEvalKit").press("Enter")  # Enter in a form field submits it
    first = page.locator(".export-item").first
    expect(first).to_have_attribute("data-status", "done", timeout=60_000)
    expect(first).to_contain_text("VLMEvalKit · no media")
    link = first.get_by_role("link")
    expect(link).to_contain_text("Download VLMEvalKit (zip,")
    expect(first.locator(".export-state")).to_contain_text("2 QA pairs")
    answer = context.request.get(base + link.get_attribute("href"))
    assert (
        answer.status == 200 and answer.headers["content-disposition"] == 'attachment; filename="proj-vlmevalkit.zip"'
    )
    names = zipfile.ZipFile(io.BytesIO(answer.body())).namelist()
    assert sorted(names) == ["proj-vlmevalkit/proj.tsv", "proj-vlmevalkit/vlmevalkit_dataset.py"]
    tsv = zipfile.ZipFile(io.BytesIO(answer.body())).read("proj-vlmevalkit/proj.tsv").decode()
    assert "Which of these objects appears in the video?" in tsv

    # lmms-eval plays clips: the media box is checked and locked, and says why.
    page.get_by_label("lmms-eval").check()
    expect(page.locator("#with-media")).to_be_checked()
    expect(page.locator("#with-media")).to_be_disabled()
    expect(page.locator("#media-note")).to_be_visible()
    page.get_by_label("JSONL").check()
    expect(page.locator("#with-media")).to_be_enabled()
    assert axe.violations(page) == []

    # The API refuses in words, and lists only this project's exports.
    refused = page.evaluate("""async () => { const { send } = await import(
        document.querySelector('script[src*="js/export.js"]').src.replace("export.js", "http.js"));
        const r = await send("/api/projects/proj/exports/",
        {format: "lmms-eval", with_media: false}); return [r.status, (await r.json()).detail]; }""")
    assert refused == [400, "lmms-eval tasks play video files: export it with media"]
    jobs = json.loads(context.request.get(base + "/api/projects/proj/exports/").text())
    assert [(j["format"], j["status"], j["rows"]) for j in jobs] == [("vlmevalkit", "done", 2), ("jsonl", "done", 0)]
    assert Job.objects.filter(task="qa.export").count() == 2
    assert context.request.get(base + "/api/projects/proj/exports/99999/").status == 404
    context.close()
