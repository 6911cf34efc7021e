"""The verify page's timeline, sound, in/out keys, QA type choice, interval answers and the
day-night comparison, in headless Chromium at 1366x768 on real videos transcoded by the worker."""

from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.services import save_drafts
from annotator.drafts.templates import DraftSpec
from annotator.media.models import Video
from annotator.qa.models import QAPair, QAType
from annotator.qa.services import apply_preset, ensure_qa_type
from tests.conftest import make_video
from tests.ui import axe
from tests.ui.conftest import click_within

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LEADER = "document.querySelector('#players video')"
IN_VIEW = (
    "(sel) => { const r = document.querySelector(sel).getBoundingClientRect();"
    " return r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }"
)
SIZES = (
    "() => [...document.querySelectorAll('#players video')].map(v => { const r = v.getBoundingClientRect();"
    " return [Math.round(r.width), Math.round(r.height)]; })"
)


def _open(browser, live_server, n_videos=1):
    """The verify page at 1366x768, logged in as the annotator, with its videos loaded."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "ann")
    page.fill("#id_password", "pw-ann-123")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/proj/verify/")
    expect(page.locator("#players video")).to_have_count(n_videos)
    page.wait_for_function("() => [...document.querySelectorAll('#players video')].every(v => v.readyState >= 2)")
    return context, page


def _single(project, tmp_path, seconds=12.0, specs=None):
    """A 12 s video ingested by the worker, with one draft (``specs``: others) in one unit."""
    clip = make_video(tmp_path / "walk.mp4", seconds=seconds)
    call_command("ingest", str(clip), "--project", project.slug, "--wait", stdout=StringIO())
    video = Video.objects.get(filename="walk.mp4")
    ensure_qa_type(project, "scene_description", name="Scene description")
    QAType.objects.create(
        project=project,
        slug="temporal_localisation",
        name="Temporal localisation",
        answer_kind=QAType.AnswerKind.INTERVAL,
    )
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="t"), video=video
    )
    save_drafts(
        job,
        specs or [DraftSpec("scene_description", "What pattern is shown?", "colour bars", 0.0, 3.0, source_key="a")],
        actor="t",
    )
    return video


def _day_night(project, tmp_path):
    clip = make_video(tmp_path / "route.mp4", seconds=8.0)
    call_command("ingest", str(clip), "--project", project.slug, "--wait", stdout=StringIO())
    call_command("derive_night", "--project", project.slug, "--levels", "easy", stdout=StringIO())
    apply_preset(project, "egonight")
    day = Video.objects.get(filename="route.mp4")
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="t"), video=day
    )
    save_drafts(
        job, [DraftSpec("object_recognition", "What is shown?", "a test pattern", 0.0, 8.0, source_key="o")], actor="t"
    )


def _track_at(page, fraction):
    box = page.locator(".tl-track").bounding_box()
    return box["x"] + box["width"] * fraction, box["y"] + box["height"] / 2


def _click_track(page, fraction):
    click_within(page.locator(".tl-track"), fraction)


def test_the_timeline_seeks_on_click_and_drag_shows_thumbnails_on_hover_and_zooms(
    worker, live_server, browser, project, annotator, tmp_path
):
    video = _single(project, tmp_path)
    assert video.thumbnails_vtt.name  # the worker made sprites and their WebVTT
    context, page = _open(browser, live_server)
    expect(page.locator(".timeline")).to_have_attribute("data-thumbnails", "12")  # one a second
    leader_time = f"() => {LEADER}.currentTime"

    _click_track(page, 0.75)  # click: seek to 9 s of 12
    page.wait_for_function(f"() => Math.abs({LEADER}.currentTime - 9.0) < 0.2")
    expect(page.locator("#loop-note")).to_contain_text("Playing the whole unit")  # left the clip 0-3 s
    page.mouse.move(*_track_at(page, 0.25))  # drag from 3 s to 6 s
    page.mouse.down()
    page.mouse.move(*_track_at(page, 0.4), steps=3)
    page.mouse.move(*_track_at(page, 0.5), steps=3)
    page.mouse.up()
    page.wait_for_function(f"() => Math.abs({LEADER}.currentTime - 6.0) < 0.2")

    page.mouse.move(*_track_at(page, 0.1))  # hover: the thumbnail of 1.2 s
    thumb = page.locator(".tl-thumb")
    expect(thumb).to_be_visible()
    src = thumb.get_attribute("data-src")
    assert "/files/thumbs/" in src and "sprite-0.jpg#xywh=" in src, src
    w, h = (int(n) for n in src.split("#xywh=")[1].split(",")[2:])
    assert (w, h) == (160, 120)
    assert (
        page.evaluate("u => fetch(u).then(r => r.ok && r.headers.get('content-type'))", src.split("#")[0])
        == "image/jpeg"
    )
    expect(page.locator(".tl-tip-time")).to_have_text("0:00:01.2")

    ticks = "() => [...document.querySelectorAll('.tl-tick')].map(t => t.textContent)"
    assert page.evaluate(ticks)[:3] == ["0:00:00.0", "0:00:02.0", "0:00:04.0"]
    page.locator(".tl-track").blur()
    page.keyboard.press("Escape")
    for _ in range(3):
        page.keyboard.press("+")  # x8: a 1.5 s window around the playhead
    expect(page.locator("#zoom-level")).to_have_text("×8")
    expect(page.locator(".tl-overview")).to_be_visible()
    labels = page.evaluate(ticks)
    assert all("." in t for t in labels) and len(labels) >= 2, labels  # tenths at this zoom
    page.evaluate(f"{LEADER}.currentTime = 10.5")  # the view follows the playhead
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tl-tick')].some(t => t.textContent.startsWith('0:00:10'))"
    )
    expect(page.locator(".tl-playhead")).to_be_visible()
    page.keyboard.press("0")
    expect(page.locator("#zoom-level")).to_have_text("whole unit")
    assert abs(page.evaluate(leader_time) - 10.5) < 0.2
    context.close()


def test_a_missing_thumbnails_vtt_means_no_thumbnail_and_the_timeline_still_seeks(
    worker, live_server, browser, project, annotator, tmp_path
):
    video = _single(project, tmp_path)
    Video.objects.filter(pk=video.pk).update(thumbnails_vtt="thumbs/0/0000000000000000/missing.vtt")
    context, page = _open(browser, live_server)
    page.mouse.move(*_track_at(page, 0.5))
    expect(page.locator(".tl-tip-time")).to_have_text("0:00:06.0")
    expect(page.locator(".timeline")).to_have_attribute("data-thumbnails", "0")
    expect(page.locator(".tl-thumb")).to_have_attribute("hidden", "")
    _click_track(page, 0.5)
    page.wait_for_function(f"() => Math.abs({LEADER}.currentTime - 6.0) < 0.2")
    context.close()


def test_in_and_out_keys_set_an_added_clip_the_qa_type_must_be_chosen_and_interval_answers_are_saved(
    worker, live_server, browser, project, annotator, tmp_path
):
    video = _single(project, tmp_path)
    context, page = _open(browser, live_server)
    page.keyboard.press("v")  # keep the draft
    page.keyboard.press("n")  # add: the QA type is focused, none chosen
    card = page.locator("#cards > li").nth(1)
    expect(card.locator("[data-field=qa_type]")).to_be_focused()
    expect(card.locator("[data-field=qa_type]")).to_have_value("")
    page.keyboard.press("Escape")
    _click_track(page, 2 / 12)  # seek to 2 s, In
    page.wait_for_function(f"() => Math.abs({LEADER}.currentTime - 2.0) < 0.2")
    t_in = page.evaluate(f"Math.round({LEADER}.currentTime * 100) / 100")
    page.keyboard.press("i")
    _click_track(page, 5 / 12)  # seek to 5 s, Out
    page.wait_for_function(f"() => Math.abs({LEADER}.currentTime - 5.0) < 0.2")
    t_out = page.evaluate(f"Math.round({LEADER}.currentTime * 100) / 100")
    page.keyboard.press("o")
    expect(card.locator("[data-field=clip_start_s]")).to_have_value(str(t_in).rstrip("0").rstrip("."))
    expect(card.locator("[data-field=clip_end_s]")).to_have_value(str(t_out).rstrip("0").rstrip("."))
    expect(page.locator(".tl-range.clip")).to_have_count(1)
    card.locator("[data-field=question]").fill("What is written in the corner?")
    card.locator("[data-field=answer]").fill("a frame counter")
    page.keyboard.press("Control+Enter")  # no QA type: the server refuses

    expect(page.locator("#errors")).to_contain_text("the submit has errors; nothing was saved")
    expect(card.locator(".card-errors")).to_contain_text("QA type: choose the QA type of the added QA pair")
    expect(card.locator("[data-field=question]")).to_have_value("What is written in the corner?")  # the form is kept
    expect(card.locator("[data-field=clip_start_s]")).to_have_value(str(t_in).rstrip("0").rstrip("."))
    assert not QAPair.objects.filter(origin="human").exists()

    card.locator("[data-field=qa_type]").select_option("scene_description")
    page.keyboard.press("Escape")
    page.keyboard.press("n")  # a second one, of an interval type
    second = page.locator("#cards > li").nth(2)
    second.locator("[data-field=qa_type]").select_option("temporal_localisation")
    expect(second.locator("[data-field=answer_start_s]")).to_be_visible()
    page.keyboard.press("Escape")
    for fraction, key in ((1 / 12, "i"), (10 / 12, "o"), (3 / 12, "Shift+I"), (4 / 12, "Shift+O")):
        _click_track(page, fraction)
        page.wait_for_function(f"() => Math.abs({LEADER}.currentTime - {fraction * 12}) < 0.2")
        page.keyboard.press(key)
    expect(page.locator(".tl-range.answer")).to_have_count(1)
    second.locator("[data-field=question]").fill("When does the counter show 3?")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")

    expect(page.locator("#submit-status")).to_contain_text("1 kept, 0 modified, 0 deleted, 2 added")
    added = list(QAPair.objects.filter(origin="human").order_by("id"))
    assert [(p.qa_type.slug, p.question) for p in added] == [
        ("scene_description", "What is written in the corner?"),
        ("temporal_localisation", "When does the counter show 3?"),
    ]
    assert (added[0].clip_start_s, added[0].clip_end_s) == (t_in, t_out)
    assert abs(added[1].clip_start_s - 1) < 0.2 and abs(added[1].clip_end_s - 10) < 0.2
    assert abs(added[1].answer_start_s - 3) < 0.2 and abs(added[1].answer_end_s - 4) < 0.2
    assert added[1].answer == f"{added[1].answer_start_s:.2f}-{added[1].answer_end_s:.2f} s"
    assert (added[0].answer_start_s, added[0].video_id) == (None, video.pk)
    context.close()


def test_day_night_players_are_larger_sound_is_the_leaders_and_ab_flicker_swipe_and_brightness_work(
    worker, live_server, browser, project, annotator, tmp_path
):
    _day_night(project, tmp_path)
    context, page = _open(browser, live_server, 2)
    (dw, dh), (nw, nh) = page.evaluate(SIZES)
    print(f"day-night players at 1366x768: day {dw}x{dh}, night {nw}x{nh}")
    # Side by side in a wide left column beside the QA cards (issue 21; full width before, and the
    # cards below the fold): the players, Play and Keep all in the first screen, no sideways scroll.
    assert dw >= 420 and dh >= 315 and nw == dw and abs(nh - dh) <= 1, page.evaluate(
        SIZES
    )  # 321.75 px rounds either way
    for sel in ("#players", "#play", "#cards .card-actions button"):
        assert page.evaluate(IN_VIEW, sel), sel
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    assert axe.violations(page) == []

    muted = "() => [...document.querySelectorAll('#players video')].map(v => v.muted)"
    assert page.evaluate(muted) == [True, True]
    page.keyboard.press("m")
    assert page.evaluate(muted) == [False, True]  # the leader only
    expect(page.locator("#audio")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("m")
    assert page.evaluate(muted) == [True, True]

    wraps = page.locator("#players .video-wrap")
    visible = "() => [...document.querySelectorAll('#players .video-wrap')].map(w => getComputedStyle(w).visibility)"
    page.keyboard.press("c")  # A/B flicker: one at a time, in one frame
    expect(page.locator("#compare")).to_have_value("flicker")
    assert page.evaluate(visible) == ["visible", "hidden"]
    box0, box1 = wraps.nth(0).bounding_box(), wraps.nth(1).bounding_box()
    assert (box0["x"], box0["y"]) == (box1["x"], box1["y"])
    page.keyboard.press("b")
    assert page.evaluate(visible) == ["hidden", "visible"]
    expect(page.locator("#flip")).to_have_text("Showing night (B)")

    page.keyboard.press("c")  # A/B swipe: drag the divider to a quarter
    expect(page.locator("#compare")).to_have_value("swipe")
    assert page.evaluate(visible) == ["visible", "visible"]
    handle = page.locator("#swipe-handle").bounding_box()
    players = page.locator("#players").bounding_box()
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(players["x"] + players["width"] * 0.25, handle["y"] + handle["height"] / 2, steps=4)
    page.mouse.up()
    clip = page.evaluate("getComputedStyle(document.querySelectorAll('#players .video-wrap')[1]).clipPath")
    assert clip.startswith("inset(0px 0px 0px 25") or clip.startswith("inset(0% 0% 0% 25"), clip

    page.locator("input[data-role=night]").fill("2")  # brightness per player
    filters = "() => [...document.querySelectorAll('#players video')].map(v => getComputedStyle(v).filter)"
    assert page.evaluate(filters) == ["none", "brightness(2)"]
    page.locator("input[data-role=day]").fill("1.5")
    assert page.evaluate(filters) == ["brightness(1.5)", "brightness(2)"]
    page.locator("input[data-role=day]").blur()
    page.keyboard.press("l")  # L: the night player back as recorded
    assert page.evaluate(filters) == ["brightness(1.5)", "none"]
    page.keyboard.press("l")
    assert page.evaluate(filters) == ["brightness(1.5)", "brightness(2.2)"]
    page.keyboard.press("c")  # back to side by side
    assert page.evaluate(visible) == ["visible", "visible"]
    assert page.evaluate(SIZES) == [[dw, dh], [nw, nh]]
    page.screenshot(path=str(tmp_path / "day-night.png"))
    context.close()


def test_modifying_a_draft_interval_answer_with_shift_i_and_shift_o_saves_it(
    worker, live_server, browser, project, annotator, tmp_path
):
    _single(
        project,
        tmp_path,
        specs=[DraftSpec("temporal_localisation", "When does the counter show 7?", "7-8 s", 0.0, 12.0, source_key="t")],
    )
    pair = QAPair.objects.get(qa_type__slug="temporal_localisation")
    QAPair.objects.filter(pk=pair.pk).update(answer_start_s=7.0, answer_end_s=8.0)
    context, page = _open(browser, live_server)
    cards = page.locator("#cards > li")
    expect(cards).to_have_count(1)
    card = cards.nth(0)
    expect(card).to_contain_text("Answer interval: 0:00:07.0 – 0:00:08.0")
    expect(page.locator(".tl-range.answer")).to_have_count(1)
    page.keyboard.press("e")
    page.keyboard.press("Escape")
    for fraction, key in ((6 / 12, "Shift+I"), (9 / 12, "Shift+O")):
        _click_track(page, fraction)
        page.wait_for_function(f"() => Math.abs({LEADER}.currentTime - {fraction * 12}) < 0.2")
        page.keyboard.press(key)
    start = float(card.locator("[data-field=answer_start_s]").input_value())
    end = float(card.locator("[data-field=answer_end_s]").input_value())
    assert abs(start - 6) < 0.2 and abs(end - 9) < 0.2
    page.keyboard.press("Control+Enter")
    expect(page.locator("#submit-status")).to_contain_text("0 kept, 1 modified")
    pair.refresh_from_db()
    assert (pair.answer_start_s, pair.answer_end_s, pair.provenance) == (start, end, "machine_modified")
    context.close()
