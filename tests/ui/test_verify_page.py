"""The verification page in headless Chromium: log in, keep, modify, delete, add, submit by
keyboard, then find the results in the admin's export."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.services import save_drafts
from annotator.drafts.templates import DraftSpec
from annotator.media.models import Video
from annotator.qa.models import QAPair
from annotator.qa.services import ensure_qa_type
from tests.ui.conftest import log_in


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_annotator_verifies_a_unit_by_keyboard_and_the_admin_exports_it(
    worker, short_video, live_server, browser, project, annotator, admin_user
):
    call_command("ingest", str(short_video), "--project", project.slug, "--wait", stdout=StringIO())
    video = Video.objects.get(status="ready")
    ensure_qa_type(project, "scene_description", name="Scene description")
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="templates-v1"),
        video=video,
    )
    save_drafts(
        job,
        [
            DraftSpec("scene_description", q, a, 0.0, 3.0, source_key=str(i))
            for i, (q, a) in enumerate(
                [
                    ("What pattern fills the screen?", "colour bars"),
                    ("What moves in the video?", "a counter"),
                    ("Is this video interesting?", "yes"),
                ]
            )
        ],
        actor="templates/templates-v1",
    )
    base = live_server.url

    context, page = log_in(browser, base, "ann", "pw-ann-123")
    page.get_by_role("link", name="Verify").click()
    cards = page.locator("#cards > li")
    expect(cards).to_have_count(3)
    page.wait_for_function("() => document.querySelector('#players video').readyState >= 1")  # the rendition loads
    expect(page.locator("#keys")).to_contain_text("Ctrl+Entersubmit the unit")  # the key legend (? shows it)

    page.keyboard.press("v")  # 1: keep
    page.keyboard.press("j")
    page.keyboard.press("e")  # 2: modify, the question is focused
    page.keyboard.press("Tab")  # to the answer
    page.keyboard.press("Control+a")
    page.keyboard.type("a running frame counter")
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.keyboard.press("x")  # 3: delete ...
    page.keyboard.press("1")  # ... as meaningless
    page.keyboard.press("n")  # add: the QA type is focused, none chosen
    page.locator("#cards > li").nth(3).locator("[data-field=qa_type]").select_option("scene_description")
    page.keyboard.press("Escape")
    page.keyboard.press("i")  # the clip: In at the playhead (0 s, paused) ...
    page.keyboard.press("ArrowRight")
    page.keyboard.press("o")  # ... Out 1 s later
    page.locator("#cards > li").nth(3).locator("[data-field=question]").focus()
    page.keyboard.type("What sound plays?")
    page.keyboard.press("Tab")
    page.keyboard.type("a 440 Hz tone")
    expect(page.locator("#progress")).to_have_text("3/3 decided, 1 added")
    expect(cards.nth(0)).to_have_attribute("data-state", "keep")
    expect(cards.nth(2)).to_have_attribute("data-state", "delete")
    page.keyboard.press("Control+Enter")

    expect(page.locator("#submit-status")).to_contain_text("1 kept, 1 modified, 1 deleted, 1 added")
    expect(page.locator("#empty")).to_be_visible()  # the next unit: none left
    assert QAPair.objects.get(question="What pattern fills the screen?").provenance == "machine_kept"
    added = QAPair.objects.get(question="What sound plays?")
    assert (added.qa_type.slug, added.clip_start_s, added.clip_end_s) == ("scene_description", 0.0, 1.0)
    context.close()

    admin_context, admin_page = log_in(browser, base, "boss", "pw-boss-123")
    link = admin_page.get_by_role("link", name="Export verified QA (JSONL)")
    response = admin_context.request.get(base + link.get_attribute("href"))
    assert response.status == 200
    rows = [json.loads(line) for line in response.text().splitlines()]
    assert [(r["question"], r["answer"], r["provenance"]) for r in rows] == [
        ("What pattern fills the screen?", "colour bars", "machine_kept"),
        ("What moves in the video?", "a running frame counter", "machine_modified"),
        ("What sound plays?", "a 440 Hz tone", "human_added"),
    ]
    assert rows[1]["draft"]["answer"] == "a counter"
    admin_context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_submitting_with_an_undecided_item_shows_what_is_missing_and_keeps_the_work(
    live_server, browser, make_unit, annotator
):
    make_unit(n_open=1)
    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    page.goto(f"{live_server.url}/projects/proj/verify/")
    expect(page.locator("#cards > li")).to_have_count(2)
    page.keyboard.press("x")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#errors")).to_contain_text("Item 1: choose a reason for deleting (1–5).")
    expect(page.locator("#errors")).to_contain_text("Item 2: choose keep, modify or delete.")
    page.reload()  # the decision so far survives a reload
    expect(page.locator("#cards > li").nth(0)).to_have_attribute("data-state", "delete")
    assert QAPair.objects.filter(status="draft").count() == 2
    context.close()
