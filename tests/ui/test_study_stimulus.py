"""The study page plays what a model gets (issue 18, "one stimulus builder"), in headless Chromium at
1366x768, for each layout of ``annotator.qa.stimulus``:

- an ego-exo set of 3 views (EgoExoBench seed 001 Sec. 3) in an MCQ study: three players labelled
  "ego", "exo 1", "exo 2" driven by one play/pause button, one seek bar and Space; playing, their
  times stay within 0.25 s of each other, a follower pushed 1 s off is brought back, and a seek
  moves them all; a set of 5 views fits one row with its 5 options and "Answer" on screen;
- a QA pair whose options are videos (Fig. 2) in an MCQ study: a player each, with its own
  controls, under exactly its label;
- a life log (X-LeBench seed 002 Sec. 3) in an open-answer study: one player in virtual time whose
  clock starts at the range's wall clock, moves, and jumps the gap between the parts; the seek bar
  draws the two parts with the gap between them.

Each page: the players' labels and count are the item's stimulus labels in order, the trial is
reported shown (the trial clock started on the first video), the options or the answer box are on
screen with the players, no script error, no console error, no CSP violation, and no response the
page fetched names a source file, a video id or a source time. A screenshot of each layout is kept
in the test's tmp_path (printed), to be looked at.

Real footage made by ffmpeg, ingested and transcoded by the real worker; clips cut by ffmpeg."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotator.media.models import Video
from annotator.media.services import make_ego_exo_set
from annotator.qa import stimulus
from annotator.qa.models import QAPair, QAType, WorkUnit
from annotator.studies.models import Item, Trial
from annotator.studies.services import create_study
from tests.conftest import make_video, wait_for
from tests.ui.conftest import click_within

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 1366, 768
# Distinctive names, so that the page's responses can be searched for them.
SIZES = {"cam-ego-street.mp4": "320x240", "cam-exo-left.mp4": "320x180", "cam-exo-right.mp4": "240x240"}
TIMES = "() => [...document.querySelectorAll('#widget .study-views video')].map(v => v.currentTime)"
PLAYING = "() => [...document.querySelectorAll('#widget .study-views video')].every(v => !v.paused)"


@pytest.fixture
def footage(worker, project, tmp_path):
    """Three 8 s videos of different frame sizes, ingested and transcoded: {file name: Video}."""
    for name, size in SIZES.items():
        make_video(tmp_path / name, seconds=8.0, size=size, audio=False)
        call_command("ingest", str(tmp_path / name), "--project", project.slug, "--wait", stdout=StringIO())
    wait_for(lambda: Video.objects.filter(project=project, status="ready").count() == 3, what="3 videos transcoded")
    return {v.filename: v for v in Video.objects.filter(project=project)}


def _pair(unit, qt, question, options, answer_index, *, start, end, **fields) -> QAPair:
    return QAPair.objects.create(
        project=unit.project,
        unit=unit,
        video=unit.video,
        qa_type=qt,
        origin="human",
        question=question,
        answer=options[answer_index],
        options=options,
        answer_index=answer_index,
        clip_start_s=start,
        clip_end_s=end,
        status="verified",
        provenance="human_added",
        **fields,
    )


def _open(browser, live_server, project, study_name):
    """Log in as the annotator at 1366x768, open the study page, begin (the page enrols), and wait for
    the trial to be reported shown. Returns (context, page, problems, responses): the page's script
    errors, console errors and CSP violations as they happen, and the text of every API response."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    problems, responses = [], []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on(
        "console",
        lambda m: (
            problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" or "Content Security Policy" in m.text
            else None
        ),
    )
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => "
        "console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));"
    )
    # When each <video> first had its first frame (performance.now()), to compare with the trial clock's start.
    page.add_init_script(
        "window.__playableAt = new WeakMap(); document.addEventListener('loadeddata', e => { "
        "if (!__playableAt.has(e.target)) __playableAt.set(e.target, performance.now()); }, true);"
    )
    page.on("response", lambda r: responses.append(r) if "/api/" in r.url else None)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "ann")
    page.fill("#id_password", "pw-ann-123")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/{project.slug}/studies/{study_name}/")
    expect(page.locator("#instructions")).to_be_visible()
    page.keyboard.press("Enter")  # Begin: enrols and shows the first trial
    page.wait_for_selector("#trial[data-shown]", state="attached", timeout=30_000)
    # The trial clock started once the first video (the leader, or the life log's player) was playable.
    playable, shown = page.evaluate(
        "() => [__playableAt.get(document.querySelector('#widget video')), "
        "parseFloat(document.querySelector('#trial').dataset.shownAt)]"
    )
    assert playable is not None and shown >= playable, (playable, shown)
    return context, page, problems, responses


def _item(study_name) -> Item:
    (trial,) = Trial.objects.filter(participant__user__username="ann", item__condition__study__name=study_name)
    return trial.item


def _labels(page) -> list[str]:
    return page.locator("#widget figure.study-video figcaption").all_inner_texts()


def _fetched_nothing_of_the_source(responses, footage_names, page_html=""):
    """No API response the page read (nor the page itself) names a source file, a video id, a source
    time or a stored name."""
    bodies = [r.text() for r in responses if r.request.method in ("GET", "POST") and r.status < 400]
    for name in footage_names:
        assert name not in page_html, name
    assert bodies, "the page fetched nothing"
    blob = "\n".join(bodies)
    assert '"videos"' in blob  # the payload is among them
    for name in footage_names:
        assert name not in blob and name.rsplit(".", 1)[0] not in blob, name
    for word in ("video_id", "start_s", "end_s", "virtual_start_s", "renditions/", "group_id"):
        assert word not in blob, word


def _in_view(page, selector) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT and box["x"] + box["width"] <= WIDTH


def _shot(page, tmp_path, name):
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")


def test_an_ego_exo_item_plays_its_three_views_in_sync_under_their_labels(
    footage, live_server, browser, project, annotator, tmp_path
):
    ego, left, right = (footage[n] for n in SIZES)
    group = make_ego_exo_set(ego, [(left, 0.5), (right, 1.0)], name="street")
    qt = QAType.objects.create(project=project, slug="view_relation", name="View relation", set_kind="ego_exo")
    unit = WorkUnit.objects.create(project=project, video=ego, group=group, start_s=0.0, end_s=8.0)
    _pair(unit, qt, "Which view shows the scene from above?", ["ego", "exo 1", "exo 2"], 1, start=0.5, end=6.5)
    create_study(
        project,
        "views",
        "mcq",
        seed=2,
        options={"qa_types": ["view_relation"], "practice_items": 0, "questions_per_participant": 1},
    )
    context, page, problems, responses = _open(browser, live_server, project, "views")

    item = _item("views")
    assert item.payload["layout"] == "sync"
    assert _labels(page) == stimulus.from_json(item.payload).labels == ["ego", "exo 1", "exo 2"]
    expect(page.locator("#widget video")).to_have_count(3)
    expect(page.locator("#widget .study-videos")).to_have_attribute("data-layout", "sync")
    assert page.evaluate("() => [...document.querySelectorAll('#widget video')].every(v => !v.controls)")
    expect(page.locator("#widget .study-play")).to_have_count(1)  # one control for all views
    expect(page.locator("#widget .study-seek")).to_have_count(1)
    # Each view's clip is 6 s (the pair's range in the view's own time).
    page.wait_for_function("() => [...document.querySelectorAll('#widget video')].every(v => v.readyState >= 1)")
    durations = page.evaluate("() => [...document.querySelectorAll('#widget video')].map(v => v.duration)")
    assert all(abs(d - 6.0) < 0.15 for d in durations), durations

    # The options, their letter keys and "Answer" are on screen with the players at 1366x768.
    assert _in_view(page, "#widget .study-views") and _in_view(page, "#widget .study-player-bar")
    assert _in_view(page, "#widget .study-options") and _in_view(page, "#answer")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= WIDTH
    _shot(page, tmp_path, "sync-3-views")

    # Space plays all views (focus on the page, not a field); their times stay within 0.25 s.
    page.keyboard.press("Space")
    page.wait_for_function(PLAYING)
    expect(page.locator("#widget .study-play")).to_have_text("Pause")
    spreads = []
    for _ in range(8):
        page.wait_for_timeout(250)
        times = page.evaluate(TIMES)
        spreads.append(max(times) - min(times))
    assert page.evaluate(PLAYING) and max(spreads) <= 0.25, spreads
    assert page.evaluate(TIMES)[0] >= 1.0
    # A follower pushed 1 s off (as a stalled decoder would leave it) is brought back to the leader.
    page.evaluate(
        "() => { const v = document.querySelectorAll('#widget .study-views video')[2]; v.currentTime += 1.0; }"
    )
    page.wait_for_function(
        f"() => {{ const t = ({TIMES})(); return Math.max(...t) - Math.min(...t) <= 0.25; }}", timeout=2_000
    )
    page.keyboard.press("Space")  # pauses them all
    page.wait_for_function("() => [...document.querySelectorAll('#widget video')].every(v => v.paused)")
    expect(page.locator("#widget .study-play")).to_have_text("Play")

    # A click at a quarter of the seek bar moves every view there (1.5 s of 6 s).
    click_within(page.locator("#widget .study-seek"), 0.25)
    page.wait_for_function(f"() => ({TIMES})().every(t => Math.abs(t - 1.5) < 0.3)")
    page.wait_for_function(f"() => {{ const t = ({TIMES})(); return Math.max(...t) - Math.min(...t) <= 0.05; }}")
    # And the button plays them again from there, together.
    page.locator("#widget .study-play").click()
    page.wait_for_function(PLAYING)
    page.wait_for_timeout(500)
    times = page.evaluate(TIMES)
    assert max(times) - min(times) <= 0.25 and min(times) >= 1.5, times

    # The primary action by keyboard: Tab from the controls reaches the options; a letter picks one,
    # Enter answers.
    page.locator("#widget .study-play").focus()
    page.keyboard.press("Tab")
    expect(page.locator("#widget .study-seek")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#widget input[type=radio]").first).to_be_focused()
    html = page.content()
    page.keyboard.press("B")
    expect(page.locator("#widget input[type=radio]").nth(1)).to_be_checked()
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    assert problems == []
    _fetched_nothing_of_the_source(responses, SIZES, html)
    context.close()

    trial = Trial.objects.get(participant__user=annotator)
    assert trial.response == 1 and trial.shown_at is not None


def test_five_views_fit_one_row_with_the_options_at_1366_by_768(
    footage, live_server, browser, project, annotator, tmp_path
):
    for name, size in (("cam-exo-back.mp4", "288x216"), ("cam-exo-top.mp4", "256x144")):  # sizes differ: bytes differ
        make_video(tmp_path / name, seconds=8.0, size=size, audio=False)
        call_command("ingest", str(tmp_path / name), "--project", project.slug, "--wait", stdout=StringIO())
    wait_for(lambda: Video.objects.filter(project=project, status="ready").count() == 5, what="5 videos transcoded")
    videos = {v.filename: v for v in Video.objects.filter(project=project)}
    exos = ["cam-exo-left.mp4", "cam-exo-right.mp4", "cam-exo-back.mp4", "cam-exo-top.mp4"]
    group = make_ego_exo_set(
        videos["cam-ego-street.mp4"], [(videos[n], 0.25 * i) for i, n in enumerate(exos)], name="square"
    )
    qt = QAType.objects.create(project=project, slug="view_relation", name="View relation", set_kind="ego_exo")
    unit = WorkUnit.objects.create(
        project=project, video=videos["cam-ego-street.mp4"], group=group, start_s=0.0, end_s=8.0
    )
    labels = ["ego", "exo 1", "exo 2", "exo 3", "exo 4"]
    _pair(unit, qt, "Which view is behind the camera wearer?", labels, 3, start=0.5, end=6.5)
    create_study(
        project,
        "five",
        "mcq",
        seed=2,
        options={"qa_types": ["view_relation"], "practice_items": 0, "questions_per_participant": 1},
    )
    context, page, problems, responses = _open(browser, live_server, project, "five")

    assert _labels(page) == stimulus.from_json(_item("five").payload).labels == labels
    expect(page.locator("#widget .study-views")).to_have_attribute("data-rows", "1")
    boxes = [page.locator("#widget .study-views figure").nth(i).bounding_box() for i in range(5)]
    assert len({round(b["y"]) for b in boxes}) == 1, boxes  # one row of five
    assert all(b["height"] >= 180 for b in boxes), boxes  # a picture, not a strip
    assert all(b["y"] >= 0 and b["y"] + b["height"] <= HEIGHT and b["x"] + b["width"] <= WIDTH for b in boxes), boxes
    _shot(page, tmp_path, "sync-5-views")
    assert _in_view(page, "#widget .study-player-bar") and _in_view(page, "#widget .study-options")
    assert _in_view(page, "#answer")
    page.keyboard.press("Space")
    page.wait_for_function(PLAYING)
    page.wait_for_timeout(1000)
    times = page.evaluate(TIMES)
    assert len(times) == 5 and max(times) - min(times) <= 0.25, times
    assert problems == []
    _fetched_nothing_of_the_source(responses, [*SIZES, "cam-exo-back.mp4", "cam-exo-top.mp4"], page.content())
    context.close()


def test_labelled_videos_each_play_in_their_own_player_under_exactly_their_label(
    footage, live_server, browser, project, annotator, tmp_path
):
    ego, left, right = (footage[n] for n in SIZES)
    qt = QAType.objects.create(project=project, slug="task_relation", name="Task relation")
    unit = WorkUnit.objects.create(project=project, video=ego, start_s=0.0, end_s=8.0)
    _pair(
        unit,
        qt,
        "Which candidate video matches the activities in the query video?",
        ["Video 1", "Video 2"],
        1,
        start=0.0,
        end=8.0,
        videos=[
            {"label": "Query video", "video_id": ego.pk, "role": "query", "start_s": 0.0, "end_s": 4.0},
            {"label": "Video 1", "video_id": left.pk, "role": "candidate", "start_s": 1.0, "end_s": 3.0},
            {"label": "Video 2", "video_id": right.pk, "role": "candidate", "start_s": 2.0, "end_s": 5.0},
        ],
    )
    create_study(
        project,
        "candidates",
        "mcq",
        seed=2,
        options={"qa_types": ["task_relation"], "practice_items": 0, "questions_per_participant": 1},
    )
    context, page, problems, responses = _open(browser, live_server, project, "candidates")

    item = _item("candidates")
    assert item.payload["layout"] == "labelled"
    assert _labels(page) == stimulus.from_json(item.payload).labels == ["Query video", "Video 1", "Video 2"]
    expect(page.locator("#widget .study-videos")).to_have_attribute("data-layout", "labelled")
    expect(page.locator("#widget video")).to_have_count(3)
    assert page.evaluate(
        "() => [...document.querySelectorAll('#widget video')].map(v => [v.controls, v.getAttribute('aria-label')])"
    ) == [[True, "Query video"], [True, "Video 1"], [True, "Video 2"]]
    expect(page.locator("#widget .study-player-bar")).to_have_count(0)  # no shared control: separate videos
    page.wait_for_function("() => [...document.querySelectorAll('#widget video')].every(v => v.readyState >= 1)")
    durations = page.evaluate("() => [...document.querySelectorAll('#widget video')].map(v => v.duration)")
    assert [round(d) for d in durations] == [4, 2, 3], durations

    # Each plays on its own: playing Video 2 leaves the others where they are.
    page.evaluate("() => document.querySelectorAll('#widget video')[2].play()")
    page.wait_for_function("() => document.querySelectorAll('#widget video')[2].currentTime > 0.5")
    assert page.evaluate("() => [...document.querySelectorAll('#widget video')].map(v => v.paused)") == [
        True,
        True,
        False,
    ]

    assert _in_view(page, "#widget .study-videos") and _in_view(page, "#widget .study-options")
    assert _in_view(page, "#answer")
    _shot(page, tmp_path, "labelled-3-videos")
    html = page.content()
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(page.locator("#done")).to_be_visible()
    assert problems == []
    _fetched_nothing_of_the_source(responses, SIZES, html)
    context.close()
    assert Trial.objects.get(participant__user=annotator).response == 1


@pytest.fixture
def life_log(worker, project, tmp_path):
    """A life log of two 4 s parts, at 08:00:00 and 08:00:10 (a 6 s gap), ingested and transcoded."""
    from annotator.media.lifelogs import build_life_log, read_rows

    rows = []
    for i, start in enumerate(["08:00:00", "08:00:10"]):
        make_video(tmp_path / f"wearer-day-part{i}.mp4", seconds=4.0, size=("320x240", "320x180")[i], audio=False)
        rows.append((f"rows[{i}]", {"path": f"wearer-day-part{i}.mp4", "start": f"2024-05-01T{start}"}))
    log = build_life_log(project, "day", read_rows(rows), base_dir=tmp_path).group
    wait_for(lambda: Video.objects.filter(project=project, status="ready").count() == 2, what="2 parts transcoded")
    return log


def test_a_life_log_plays_in_virtual_time_with_its_wall_clock_jumping_the_gap(
    life_log, live_server, browser, project, annotator, tmp_path
):
    first = life_log.members.get(position=0).video
    qt = QAType.objects.create(project=project, slug="log_query", name="Log query", set_kind="life_log")
    unit = WorkUnit.objects.create(project=project, video=first, group=life_log, start_s=0.0, end_s=14.0)
    # Virtual 1.0-12.0 s: the first part from 1 s to its end (3 s), the 6 s gap, the second part's first 2 s.
    pair = _pair(unit, qt, "What does the camera wearer do before the break?", ["cook", "read"], 0, start=1.0, end=12.0)
    # An open question: no options (a pair with options is no open-answer item, issue 21).
    QAPair.objects.filter(pk=pair.pk).update(options=None, answer_index=None)
    create_study(
        project, "log", "open_answer", seed=2, options={"qa_types": ["log_query"], "questions_per_participant": 1}
    )
    context, page, problems, responses = _open(browser, live_server, project, "log")

    item = _item("log")
    assert item.payload["layout"] == "life_log"
    assert _labels(page) == stimulus.from_json(item.payload).labels == ["Life log"]
    expect(page.locator("#widget .study-videos")).to_have_attribute("data-layout", "life_log")
    expect(page.locator("#widget video")).to_have_count(1)
    clock = page.locator("#widget .study-clock")
    expect(clock).to_have_text("08:00:01")  # clock_start at virtual 0
    # The seek bar: 11 s with the two parts (0-3 s, 9-11 s) drawn, the gap between them empty.
    assert page.locator("#widget .study-seek").get_attribute("max") == "11"
    track = page.locator("#widget .study-seek-track").bounding_box()
    blocks = [page.locator("#widget .study-seek-part").nth(i).bounding_box() for i in range(2)]
    expect(page.locator("#widget .study-seek-part")).to_have_count(2)
    spans = sorted(
        ((b["x"] - track["x"]) / track["width"], (b["x"] + b["width"] - track["x"]) / track["width"]) for b in blocks
    )
    assert [(round(a * 11, 1), round(b * 11, 1)) for a, b in spans] == [(0.0, 3.0), (9.0, 11.0)], spans

    # Space while writing the answer types a space and plays nothing (the answer box has focus).
    expect(page.locator("#open-answer")).to_be_focused()
    page.keyboard.type("cooks pasta")
    expect(page.locator("#open-answer")).to_have_value("cooks pasta")
    assert page.evaluate("() => document.querySelector('#widget video').paused")

    _shot(page, tmp_path, "life-log")
    assert _in_view(page, "#widget .study-life-log") and _in_view(page, "#open-answer") and _in_view(page, "#answer")

    # Played, the clock moves; at the end of the first part it jumps the gap to the second (08:00:10).
    page.locator("#widget .study-play").click()
    expect(page.locator("#widget .study-play")).to_have_text("Pause")
    expect(clock).to_have_text("08:00:02", timeout=5_000)
    expect(clock).to_have_text("08:00:10", timeout=8_000)
    expect(page.locator("#widget .study-gap-note")).to_have_text("Skipped 6 s not recorded (08:00:04 – 08:00:10).")
    page.wait_for_function("() => !document.querySelector('#widget video').paused")
    assert page.evaluate("() => document.querySelector('#widget .study-life-log').player.part") == 1
    _shot(page, tmp_path, "life-log-second-part")

    # A click on the seek bar in the gap (virtual 6 s) plays the second part from its start.
    page.locator("#widget .study-seek").click(position={"x": track["width"] * 6 / 11, "y": track["height"] / 2})
    page.wait_for_function(
        "() => { const p = document.querySelector('#widget .study-life-log').player; "
        "return p.part === 1 && p.currentTime >= 9 && p.currentTime < 10.5; }"
    )
    html = page.content()
    page.locator("#open-answer").press("Control+Enter")
    expect(page.locator("#done")).to_be_visible()
    assert problems == []
    _fetched_nothing_of_the_source(responses, ["wearer-day-part0.mp4", "wearer-day-part1.mp4"], html)
    payload = json.loads(next(r.text() for r in responses if r.url.endswith("/enroll/")))
    assert payload["trial"]["content"]["videos"][0]["clock_start"] == "08:00:01"
    context.close()
    assert Trial.objects.get(participant__user=annotator).response == "cooks pasta"
