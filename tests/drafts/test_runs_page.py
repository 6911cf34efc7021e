"""The runs pages (issue 10, "Progress"): a project's runs with their progress, the start form (a
refusal keeps what was typed), one run's calls per stage, failures and failed calls, Cancel and
Resume; who sees what. In headless Chromium: a run in flight updates its figures without a reload,
and Cancel works from the keyboard."""

import html as htmllib
import re

import pytest
from django.test import Client

from annotator.drafts.models import DraftJob, DraftRun
from annotator.inference.models import ModelServer
from annotator.qa.models import QAType
from tests.conftest import wait_for
from tests.drafts.test_runs_api import made_run, member, night_video
from tests.ui.conftest import browser, log_in  # noqa: F401 (the browser fixture)


def page_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def text_of(html: str) -> str:
    """The page's text with tags dropped and spaces squeezed, for reading sentences."""
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", html))).strip()


@pytest.fixture
def admin(project):
    return member(project, "admin")


@pytest.fixture
def gpt(project):
    return ModelServer.objects.create(
        project=project, name="gpt", base_url="http://127.0.0.1:9/v1", model="fake-gpt", concurrency=2
    )


# ------------------------------------------------------------------------------ the list


@pytest.mark.django_db
def test_the_runs_page_lists_each_run_with_its_progress_and_servers(project, admin, gpt):
    failed = made_run(
        project,
        statuses=[("done", 3, "", ""), ("failed", 0, "answer", "no usable answer")],
        status="failed",
        minutes_ago=5,
        calls=[("caption", "", 0.0125, False), ("answer", "malformed", None, False), ("caption", "", 0.0, True)],
    )
    running = made_run(project, statuses=["running", "queued", "done", "queued"], user=admin)
    res = page_client(admin).get(f"/projects/{project.slug}/runs/")
    assert res.status_code == 200
    html = res.content.decode()
    rows = re.findall(r'<tr data-run="(\d+)" data-status="(\w+)">(.*?)</tr>', html, flags=re.S)
    assert [(int(r), s) for r, s, _ in rows] == [(running.pk, "running"), (failed.pk, "failed")]
    first, second = text_of(rows[0][2]), text_of(rows[1][2])
    assert first.startswith(
        f"Run {running.pk} egonight running Captioning the clip, Writing questions, Answering them: "
        "gpt (fake-gpt) 1 done / 0 failed / 4 1 of 4 0 0 0 0.0000"
    )
    assert second.startswith(
        f"Run {failed.pk} egonight failed Captioning the clip, Writing questions, Answering them: "
        "gpt (fake-gpt) 1 done / 1 failed / 2 2 of 2 3 3 (1 failed) 1 0.0125"
    )
    assert '<progress data-field="progress" max="4" value="1"' in rows[0][2]
    assert '<progress data-field="progress" max="2" value="2"' in rows[1][2]
    assert "by runs-admin" in first
    # The start form, its servers and the polling script's configuration.
    assert (
        'id="start-form"' in html and '<option value="gpt" selected>gpt: fake-gpt, at most 2 at once</option>' in html
    )
    assert '<script id="runs-config" type="application/json">' in html and "js/drafts/runs.js" in html
    assert "<script>" not in html  # no inline script (the CSP forbids it)


@pytest.mark.django_db
def test_reviewers_see_runs_but_no_start_form_or_buttons_and_annotators_nothing(project, gpt):
    run = made_run(project, statuses=["running"])
    reviewer = page_client(member(project, "reviewer"))
    html = reviewer.get(f"/projects/{project.slug}/runs/").content.decode()
    assert f'data-run="{run.pk}"' in html and 'id="start-form"' not in html
    html = reviewer.get(f"/projects/{project.slug}/runs/{run.pk}/").content.decode()
    assert 'id="run-progress"' in html and 'id="cancel-form"' not in html and 'id="resume-form"' not in html
    assert (
        reviewer.post(f"/projects/{project.slug}/runs/", {"pipeline": "egonight", "server": "gpt"}).status_code == 403
    )
    assert reviewer.post(f"/projects/{project.slug}/runs/{run.pk}/", {"action": "cancel"}).status_code == 403
    annotator = page_client(member(project, "annotator"))
    assert annotator.get(f"/projects/{project.slug}/runs/").status_code == 403
    assert annotator.get(f"/projects/{project.slug}/runs/{run.pk}/").status_code == 403
    assert DraftRun.objects.get().status == "running" and DraftRun.objects.count() == 1


@pytest.mark.django_db
def test_the_home_page_links_the_runs_page_for_the_people_who_run_the_project(project, admin):
    assert f'href="/projects/{project.slug}/runs/"' in page_client(admin).get("/").content.decode()
    assert (
        f'href="/projects/{project.slug}/runs/"'
        not in page_client(member(project, "annotator")).get("/").content.decode()
    )


# ------------------------------------------------------------------------------ starting


@pytest.mark.django_db
def test_the_start_form_starts_a_run_and_goes_to_its_page(project, admin, gpt):
    ModelServer.objects.create(project=project, name="judge", base_url="http://127.0.0.1:8/v1", model="judge-m")
    night_video(project, "a.mp4")
    night_video(project, "b.mp4")
    client = page_client(admin)
    res = client.post(
        f"/projects/{project.slug}/runs/",
        {
            "pipeline": "egonight",
            "server": "gpt",
            "stage-answer": "judge",
            "stage-vudg_open": "judge",
            "qa_type": "",
            "frames": "4",
            "questions": "2",
            "cache": "on",
            "more": "note=pilot\n",
        },
    )
    run = DraftRun.objects.get()
    assert res.status_code == 302 and res["Location"] == f"/projects/{project.slug}/runs/{run.pk}/"
    assert run.created_by == admin and run.status == "queued" and run.jobs.count() == 2
    assert {s: v["server"] for s, v in run.servers.items()} == {"caption": "gpt", "questions": "gpt", "answer": "judge"}
    assert run.params == {"frames": 4, "questions": 2, "note": "pilot", "preset_applied": True}
    page = client.get(res["Location"]).content.decode()
    assert f"Run {run.pk} started: 2 videos queued." in page


@pytest.mark.django_db
@pytest.mark.parametrize(
    "form, status, message, field",
    [
        ({"qa_type": "nope"}, 400, "Nothing was started: project proj has no QA type 'nope'", "qa_type"),
        ({"frames": "lots"}, 400, "Nothing was started: frames must be a whole number from 1 to 32", "frames"),
        (
            {"more": "k"},
            400,
            "Nothing was started: line 1: write one parameter a line as NAME=VALUE, like k=3 (not 'k')",
            "more",
        ),
        (
            {"more": "base_url=http://evil.example"},
            400,
            "Nothing was started: parameter base_url cannot be set here",
            "more",
        ),
        (
            {"server": "gone"},
            400,
            "Nothing was started: project proj has no model server 'gone' (known: gpt)",
            "server",
        ),
        # Not ASCII digits, and too many digits for int() (both were a 500 before the security review).
        ({"frames": "\u00b2"}, 400, "Nothing was started: frames must be a whole number from 1 to 32", "frames"),
        ({"frames": "9" * 5000}, 400, "Nothing was started: frames must be a whole number from 1 to 32", "frames"),
        # Nested deeper than json.loads recurses (a RecursionError was a 500): kept as text, then too long.
        (
            {"more": "k=" + "[" * 3000},
            400,
            "Nothing was started: the parameters take 3047 characters as JSON; at most 2000",
            "more",
        ),
        (
            {"more": "k=" + "[" * 100_000},
            400,
            "Nothing was started: the other parameters are at most 4000 characters",
            "more",
        ),
    ],
)
def test_a_refused_start_says_why_on_its_field_and_keeps_what_was_typed(
    project, admin, gpt, form, status, message, field
):
    night_video(project, "a.mp4")
    typed = {
        "pipeline": "egonight",
        "server": "gpt",
        "qa_type": "lighting_change",
        "frames": "3",
        "questions": "2",
        "more": "note=keep me",
        **form,
    }
    res = page_client(admin).post(f"/projects/{project.slug}/runs/", typed)
    assert res.status_code == status
    html = res.content.decode()
    assert message in text_of(html)
    assert f'id="{field}-error"' in html and f'aria-describedby="{field}-error"' in html
    for name in ("qa_type", "frames", "questions"):
        assert f'name="{name}" id="{name}" value="{typed[name]}"' in html
    assert f">{typed['more']}</textarea>" in html
    assert f'<option value="{typed["server"]}" selected>' in html
    assert DraftRun.objects.count() == 0 and QAType.objects.count() == 0


# ------------------------------------------------------------------------------ one run


@pytest.mark.django_db
def test_a_runs_page_shows_calls_per_stage_failures_and_the_latest_failed_calls(project, admin):
    run = made_run(
        project,
        statuses=[("failed", 0, "answer", "no usable answer in 2 attempts; last: malformed"), "done"],
        status="failed",
        calls=[("caption", "", 0.002, False), ("answer", "rate_limited: 429 Too Many Requests", None, False)],
    )
    html = page_client(admin).get(f"/projects/{project.slug}/runs/{run.pk}/").content.decode()
    video = DraftJob.objects.get(run=run, status="failed").video.filename
    calls = text_of(re.search(r'<table class="grid" id="stage-calls">(.*?)</table>', html, flags=re.S).group(1))
    assert calls.endswith(
        "Captioning the clip 1 0 0 100 20 0.0020 500 Answering them 1 1 0 100 20 0.0000 500"
    )  # in pipeline order, in words (issue 21)
    failures = text_of(re.search(r'<table class="grid" id="failures">(.*?)</table>', html, flags=re.S).group(1))
    assert failures.endswith(f"{video} Answering them no usable answer in 2 attempts; last: malformed")
    failed_calls = text_of(re.search(r'<table class="grid" id="failed-calls">(.*?)</table>', html, flags=re.S).group(1))
    assert failed_calls.endswith(f"{video} Answering them 1 rate_limited: 429 Too Many Requests")
    assert '<details id="cancel-box" hidden>' in html and '<div id="resume-box">' in html
    assert 'id="run-progress" max="2" value="2"' in html


@pytest.mark.django_db
def test_a_run_whose_counts_include_one_named_items_shows_them(project, admin):
    # VUDG counts its drafts as "items": a template's summary.items read that count, not the dict's pairs (a 500).
    run = made_run(project, statuses=["done"], status="done", calls=[])
    DraftJob.objects.filter(run=run).update(summary={"items": 5, "correct": 3, "fixable": 1, "invalid": 1})
    res = page_client(admin).get(f"/projects/{project.slug}/runs/{run.pk}/")
    assert res.status_code == 200
    assert "· correct 3 · fixable 1 · invalid 1 · items 5" in text_of(res.content.decode())


@pytest.mark.django_db
def test_cancel_and_resume_from_a_runs_page(project, admin):
    run = made_run(project, statuses=["done", "queued"])
    client = page_client(admin)
    url = f"/projects/{project.slug}/runs/{run.pk}/"
    res = client.post(url, {"action": "cancel"}, follow=True)
    assert DraftRun.objects.get(pk=run.pk).status == "cancelled"
    assert f"Run {run.pk} cancelled" in res.content.decode()
    res = client.post(url, {"action": "cancel"}, follow=True)
    assert (
        f"Nothing was changed: run {run.pk} is cancelled; only a queued or running run can be cancelled"
        in res.content.decode()
    )
    res = client.post(url, {"action": "resume"}, follow=True)
    assert f"Run {run.pk} resumed: 1 video queued again" in res.content.decode()
    assert DraftRun.objects.get(pk=run.pk).status == "queued"
    assert sorted(DraftJob.objects.filter(run=run).values_list("status", flat=True)) == ["done", "queued"]
    assert client.post(url, {"action": "explode"}).status_code == 400


# ------------------------------------------------------------------------------ in the browser


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_run_in_flight_updates_its_page_and_cancel_works_from_the_keyboard(
    live_server,
    browser,
    worker,
    model_server,  # noqa: F811
    project,
    settings,
):
    settings.LLM_WINDOWS = 1
    model_server.delay_s = 0.4  # every call takes 0.4 s: the run takes several polls
    member(project, "admin")
    ModelServer.objects.create(
        project=project, name="gpt", base_url=model_server.base_url, model="fake-gpt", concurrency=1
    )
    for i in range(6):
        night_video(project, f"n{i}.mp4", seconds=2.0 + i / 10, stored=True)
    context, page = log_in(browser, live_server.url, "runs-admin", "pw-runs-admin-1")
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/projects/{project.slug}/runs/")
    assert page.is_visible("#stage-caption") and not page.is_visible("#stage-vudg_open")  # egonight's stages only
    page.fill("#qa_type", "lighting_change")
    page.fill("#frames", "2")
    page.click("#start")
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))
    run = DraftRun.objects.get()
    assert page.text_content("#run-status").strip() in ("queued", "running")
    assert page.is_visible("#cancel-box summary") and not page.is_visible("#resume")
    page.evaluate("() => { window.notReloaded = true; }")

    # The figures change without a reload: a video finishes while the run is still running.
    page.wait_for_function(
        "() => /^[1-5] of 6 videos finished/.test(document.getElementById('run-videos').textContent)", timeout=30_000
    )
    assert page.evaluate("() => window.notReloaded === true")
    assert page.text_content("#run-status").strip() == "running"
    assert int(page.get_attribute("#run-progress", "value")) >= 1
    assert page.locator("#stage-calls tr[data-stage='caption']").count() == 1

    # Cancel from the keyboard: open the confirmation, then confirm.
    page.focus("#cancel-box summary")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.id") == "cancel-confirm"
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.success")
    assert page.text_content("#run-status").strip() == "cancelled"
    assert DraftRun.objects.get(pk=run.pk).status == "cancelled"
    wait_for(
        lambda: not DraftJob.objects.filter(run=run, status__in=["queued", "running"]).exists(),
        timeout=30,
        what="the videos in flight to stop",
    )
    assert DraftJob.objects.filter(run=run, status="cancelled").exists()
    assert page.is_visible("#resume") and not page.is_visible("#cancel-box")
    assert errors == []
    context.close()
