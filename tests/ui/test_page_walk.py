"""Issue 21's walk: every page kind at 1366x768 and at 1920x1080, as the person who works in it. On each:
nothing scrolls sideways; the primary action (Play, Keep, Submit, Answer, Start...) is inside the viewport
with the page unscrolled; on the verify pages the selected item's video is in view too; axe-core finds no
serious or critical violation.

One browser and one database for the module, built with stored renditions (ffmpeg, no transcode): four
verify units (one video, a day-night pair, an ego-exo set of three, a life log of two parts), each held by
its own annotator; four studies (multiple choice, Likert, open answer, frame ordering) taken by another
annotator; and the admin's pages (home, study results, agreement, runs, evaluation, videos, export)."""

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.services import save_drafts
from annotator.drafts.templates import DraftSpec
from annotator.media.lifelogs import build_life_log, read_rows
from annotator.media.services import make_day_night_group, make_ego_exo_set
from annotator.projects.services import ensure_member
from annotator.qa.models import QAType, QueueItem
from annotator.qa.queue import claim_next
from annotator.studies.services import create_study
from tests.studies.conftest import stored_video, verified  # noqa: F401 (a fixture)
from tests.ui import axe

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = ({"width": 1366, "height": 768}, {"width": 1920, "height": 1080})

# Each selector wholly inside the viewport, the page not scrolled; and no sideways scroll.
FITS = """(sels) => {
  const out = {};
  for (const sel of sels) {
    const el = document.querySelector(sel);
    if (!el) { out[sel] = "missing"; continue; }
    const r = el.getBoundingClientRect();
    const ok = r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
    if (!ok) out[sel] = `at ${Math.round(r.left)},${Math.round(r.top)} to ${Math.round(r.right)},${Math.round(r.bottom)}`;
  }
  if (scrollX || scrollY) out.scrolled = `${scrollX},${scrollY}`;
  if (document.documentElement.scrollWidth > innerWidth) out.sideways = `${document.documentElement.scrollWidth} px wide`;
  return out;
}"""


def _draft(video, specs):
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=video.project, pipeline="templates", prompt_version="t"), video=video
    )
    save_drafts(job, specs, actor="t")


@pytest.fixture
def walk_data(project, verified, tmp_path):
    """The module's database (see the module docstring). Returns the verify annotators by kind."""
    verified(2, seconds=6.0)  # verified pairs for the studies, exports, results
    for kind, extra in (("mcq", {}), ("likert", {}), ("open_answer", {})):
        create_study(
            project,
            f"walk-{kind.replace('_', '-')}",
            kind,
            seed=3,
            options={"per_type": 2, "practice_items": 0, "questions_per_participant": 2, "attention_items": 0, **extra},
        )
    stored_video(project, tmp_path / "order.mp4", seconds=40.0, name="order-source.mp4")
    create_study(
        project,
        "walk-ordering",
        "ordering",
        preset="ego-flight",
        seed=7,
        options={
            "frame_size": 64,
            "practice_items": 0,
            "questions_per_participant": 2,
            "conditions_per_participant": 1,
            "conditions": [
                {"number": 1, "label": "4 frames", "n_frames": 4, "clip_length": "medium", "annotation": "brief"}
            ],
        },
    )

    lengths = iter(range(80, 100))  # tenths of a second: each video's bytes differ (one content, one video)

    def video(name):
        return stored_video(project, tmp_path / name, seconds=next(lengths) / 10, name=name)

    def hold(kind, video):
        """The unit just drafted on ``video``, assigned to and claimed by this kind's annotator. Claiming
        "the next unit" served them another one whenever the verified units above had an open
        double-check (drawn by unit id): then the ego-exo walker held the single unit (seen)."""
        user = ensure_member(f"w-{kind}", role="annotator", project=project, password="pw-walk-123")[0]
        QueueItem.objects.filter(unit__video=video, status="open", kind="first_pass").update(assigned_to=user)
        item = claim_next(project, user)
        assert item is not None and item.unit.video_id == video.pk, kind
        return user

    held = {}
    QAType.objects.get_or_create(project=project, slug="scene_description", defaults={"name": "Scene description"})
    single = video("single.mp4")
    _draft(
        single,
        [
            DraftSpec("scene_description", "What pattern is shown?", "bars", 0.0, 4.0, source_key="s"),
            DraftSpec("scene_description", "What moves?", "a counter", 2.0, 6.0, source_key="t"),
        ],
    )
    held["single"] = hold("single", single)
    QAType.objects.create(project=project, slug="night_object", name="Night object", paired=True)
    day, night = video("day.mp4"), video("night.mp4")
    make_day_night_group(day, night, name="route")
    _draft(day, [DraftSpec("night_object", "What is on the left?", "a sign", 0.0, 6.0, source_key="n")])
    held["day-night"] = hold("day-night", day)
    QAType.objects.create(project=project, slug="view_relation", name="View relation", set_kind="ego_exo")
    ego = video("ego.mp4")
    make_ego_exo_set(ego, [(video("exo1.mp4"), 0.5), (video("exo2.mp4"), 1.0)], name="street")
    _draft(ego, [DraftSpec("view_relation", "Which view shows the counter first?", "exo 1", 0.0, 5.0, source_key="v")])
    held["ego-exo"] = hold("ego-exo", ego)
    QAType.objects.create(
        project=project, slug="moment_query", name="Moment query", set_kind="life_log", answer_kind="interval"
    )
    first, _ = video("part0.mp4"), video("part1.mp4")
    build_life_log(
        project,
        "day",
        read_rows(
            [
                ("rows[0]", {"file": "part0.mp4", "start": "2024-05-01T08:00:00"}),
                ("rows[1]", {"file": "part1.mp4", "start": "2024-05-01T08:00:20"}),
            ]
        ),
    )
    _draft(
        first,
        [
            DraftSpec(
                "moment_query",
                "When does the counter pass 5?",
                "08:00:05-08:00:06",
                0.0,
                28.0,
                source_key="m",
                params={"answer_start_s": 5.0, "answer_end_s": 6.0},
            )
        ],
    )
    held["life log"] = hold("life-log", first)
    return held


def _check(page, name, selectors, problems):
    for size in SIZES:
        page.set_viewport_size(size)
        page.evaluate("() => window.scrollTo(0, 0)")
        # The page was loaded at the other size: a chart is resized by its ResizeObserver after the
        # layout pass, later under load (a fresh-clone run saw the results page's chart still 1895 px
        # wide at 1366 after 50 ms). Give the page 5 s to settle; what is still too wide is reported.
        try:
            page.wait_for_function("() => document.documentElement.scrollWidth <= innerWidth", timeout=5_000)
        except PlaywrightTimeoutError:
            pass
        found = page.evaluate(FITS, selectors)
        if found:
            problems.append(f"{name} at {size['width']}x{size['height']}: {found}")
    severe = axe.violations(page)
    if severe:
        problems.append(f"{name}: axe {[(v['id'], v['nodes'][:3]) for v in severe]}")


def _context(browser, live_server, user, password):
    context = browser.new_context(viewport=SIZES[0])
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", user)
    page.fill("#id_password", password)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    return context, page


def test_every_page_kind_fits_1366x768_and_1920x1080_with_its_primary_action_in_view(
    walk_data, live_server, browser, project, admin_user, annotator
):
    base, problems = live_server.url, []

    for kind, user in walk_data.items():
        context, page = _context(browser, live_server, user.username, "pw-walk-123")
        page.goto(f"{base}/projects/proj/verify/")
        expect(page.locator("#cards > li").first).to_be_visible()
        page.wait_for_function("() => [...document.querySelectorAll('#players video')].every(v => v.readyState >= 1)")
        page.keyboard.press("j")  # the first item selected, as a person starts
        video = "#players .video-wrap.big video" if kind == "ego-exo" else "#players video"
        _check(
            page, f"verify ({kind})", [video, "#play", "#cards li.selected .card-actions button", "#submit"], problems
        )
        if kind == "single":  # In and Out take the page's clock as well as seconds
            page.locator("body").focus()
            page.keyboard.press("n")
            added = page.locator("#cards li.added")
            field_in, field_out = added.locator("[data-field=clip_start_s]"), added.locator("[data-field=clip_end_s]")
            field_in.fill("0:00:01.5")
            expect(added.locator(".clock-echo").first).to_have_text(" = 0:00:01.5")
            field_out.fill("4.25")
            expect(added.locator(".clock-echo").nth(1)).to_have_text(" = 0:00:04.3")
            field_out.fill("0:01")
            expect(field_out).to_have_attribute("aria-invalid", "true")  # Out before In
            field_out.fill("1:75")
            expect(added.locator(".clock-echo").nth(1)).to_have_text(
                " not a time: type seconds (12.5) or h:mm:ss.f (0:00:12.5)"
            )
            field_out.fill("0:00:06")
            expect(field_out).to_have_attribute("aria-invalid", "false")
            expect(added.locator(".clock-echo").nth(1)).to_have_text(" = 0:00:06.0")
        if kind == "ego-exo":  # the small views are reached by Tab and shown large by Enter; Space still plays
            big = "() => document.querySelector('#players .video-wrap.big .player-label').textContent"
            label = "() => document.activeElement.getAttribute('aria-label')"
            # Every view is a button once the players are built for the selected item (verify/player.js).
            buttons = "() => document.querySelectorAll('#players .video-wrap[role=button]').length"
            for _ in range(150):  # up to 30 s
                if page.evaluate(buttons) >= 3:
                    break
                page.wait_for_timeout(200)
            else:  # seen in 3 of the last 5 full runs, cause not found: say what the page held
                held = page.evaluate(
                    "() => ({views: document.querySelectorAll('#players .video-wrap').length, "
                    "labels: [...document.querySelectorAll('#players .player-label')].map(e => e.textContent), "
                    "status: document.getElementById('status') && document.getElementById('status').textContent, "
                    "cards: document.querySelectorAll('#cards > li').length})"
                )
                pytest.fail(f"the ego-exo unit's views never became buttons; the page held {held}")
            for _ in range(20):
                # The players may be built again just after the item's selection (slower under load):
                # then the view focused here is gone and Tab starts from the page's top (no label; seen
                # once in a fresh-clone run). Focus again on the views as they are now.
                page.locator("#players .video-wrap").first.focus()
                page.keyboard.press("Tab")
                if page.evaluate(label) is not None:
                    break
                page.wait_for_timeout(250)
            assert page.evaluate(label) == "Show exo 1 large (Enter)"
            page.keyboard.press("Enter")
            assert page.evaluate(big) == "exo 1"
            page.keyboard.press("Tab")
            page.keyboard.press("Enter")
            assert page.evaluate(big) == "exo 2"
            expect(page.locator("#players .video-wrap[aria-pressed=true]")).to_have_attribute("data-role", "exo")
            page.keyboard.press("Space")
            page.wait_for_function("() => !document.querySelector('#players video').paused")
            page.keyboard.press("Space")
        context.close()

    context, page = _context(browser, live_server, "ann", "pw-ann-123")
    for name in ("walk-mcq", "walk-likert", "walk-open-answer", "walk-ordering"):
        page.goto(f"{base}/projects/proj/studies/{name}/")
        expect(page.locator("#begin")).to_be_visible()
        _check(page, f"study {name} (instructions)", ["#begin"], problems)
        page.keyboard.press("Enter")
        page.wait_for_selector("#trial[data-shown]", state="attached")
        _check(page, f"study {name} (trial)", ["#answer"], problems)
    context.close()

    context, page = _context(browser, live_server, "boss", "pw-boss-123")
    for name, path, selectors in (
        ("home", "/", [".task-links .button.primary"]),
        ("study results", "/projects/proj/studies/walk-mcq/results/", ["h1"]),
        ("agreement", "/projects/proj/agreement/", ["#compute-all button"]),
        ("runs", "/projects/proj/runs/", ["#start-title"]),
        ("evaluation", "/projects/proj/evaluation/", ["#start-title"]),
        ("videos", "/projects/proj/videos/", ["#upload-start", ".video-card .poster"]),
        ("export", "/projects/proj/export/", ["#export-start"]),
    ):
        page.goto(base + path)
        _check(page, name, selectors, problems)
        if name in ("runs", "evaluation"):  # the start form, opened from its summary by keyboard
            if page.locator("details.start-box").get_attribute("open") is None:  # open with no run yet
                page.locator("#start-title").focus()
                page.keyboard.press("Enter")
            expect(page.locator("details.start-box")).to_have_attribute("open", "")
            if severe := axe.violations(page):
                problems.append(f"{name}, its form open: axe {[(v['id'], v['nodes'][:3]) for v in severe]}")
    context.close()
    assert problems == [], "\n".join(problems)
