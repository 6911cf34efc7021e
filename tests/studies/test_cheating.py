"""Ways a participant might cheat or break a study, found in a security review of issue 8, each shut:
holding back the "shown" report to read the question off the clock, probing refusals for element
ids, telling Likert control items apart, bad text in answers, and build errors that name files."""

import json
import subprocess
from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.adapters import ffmpeg
from annotator.media.models import Video
from annotator.studies.models import Condition, Element, Item, Study, Trial
from annotator.studies.services import create_study, current_trial, enroll, mark_shown, start
from tests.studies.conftest import api_as, people


@pytest.fixture
def quick(project):
    """A multiple-choice study with one 60 s condition, two items whose right option is B, and one
    practice item before them."""
    study = Study.objects.create(
        project=project, name="quick", kind="mcq", questions_per_participant=2, practice_items=1
    )
    cond = Condition.objects.create(study=study, number=1, label="quick (60 s)", time_limit_s=60)
    for i, role in enumerate(["scored", "scored", "practice"]):
        Item.objects.create(
            condition=cond,
            index=i,
            role=role,
            key=f"q{i}",
            truth=1,
            payload={"question": f"How many cups, {i}?", "options": ["one", "two", "three"], "media": []},
        )
    return study


def _served_ago(trial, ms: float):
    Trial.objects.filter(pk=trial.pk).update(served_at=timezone.now() - timedelta(milliseconds=ms))


def test_a_late_shown_report_starts_the_clock_when_the_content_had_been_served_long_enough(quick, annotator, settings):
    settings.STUDY_SHOW_MAX_MS = 2000
    p = enroll(quick, annotator)
    start(p)
    trial = current_trial(p)
    _served_ago(trial, 30_000)  # the page got the question 30 s ago and reports it shown only now
    shown = mark_shown(p, trial.pk)
    served = Trial.objects.get(pk=trial.pk).served_at
    assert shown.shown_at == served + timedelta(milliseconds=2000)


def test_a_trial_never_reported_shown_still_runs_out(quick, annotator, settings):
    settings.STUDY_SHOW_MAX_MS = 2000
    settings.STUDY_TIME_GRACE_MS = 1500
    p = enroll(quick, annotator)
    start(p)
    trial = current_trial(p)
    _served_ago(trial, 60_000 + 2000 + 1000)  # inside limit + allowance + grace: still open
    assert current_trial(p).pk == trial.pk
    _served_ago(trial, 60_000 + 2000 + 1500 + 100)
    assert current_trial(p).pk != trial.pk
    closed = Trial.objects.get(pk=trial.pk)
    assert closed.timed_out and closed.response is None and closed.shown_at is None


def test_practice_feedback_comes_without_the_next_trial_whose_clock_would_otherwise_run(quick, project):
    person = people(project, 1)[0]
    client = api_as(person)
    practice = client.post(f"/api/studies/{quick.pk}/enroll/").json()["trial"]
    assert practice["practice"]
    client.post(f"/api/trials/{practice['trial_id']}/shown/")
    res = client.post(
        f"/api/trials/{practice['trial_id']}/answer/",
        {"response": 0, "client_rt_ms": 2.0, "idempotency_key": "p"},
        format="json",
    )
    body = res.json()
    assert res.status_code == 200 and body["feedback"] == {"correct": False, "truth": "B"}
    assert body["trial"] is None and body["next"] == "current"
    assert not Trial.objects.filter(participant__user=person, practice=False, served_at__isnull=False).exists()
    nxt = client.get(f"/api/studies/{quick.pk}/current/").json()["trial"]
    assert not nxt["practice"] and Trial.objects.get(pk=nxt["trial_id"]).served_at is not None


@pytest.mark.parametrize("text", ["water\u0000", "\ud800 water"])
def test_text_postgres_cannot_store_is_refused_in_an_open_answer(verified, project, text):
    verified(1)
    study, _ = create_study(project, "open", "open_answer", options={"questions_per_participant": 1})
    client = api_as(people(project, 1)[0])
    trial = client.post(f"/api/studies/{study.pk}/enroll/").json()["trial"]
    client.post(f"/api/trials/{trial['trial_id']}/shown/")
    body = json.dumps({"response": text, "client_rt_ms": 2.0, "idempotency_key": "k"})
    res = client.post(f"/api/trials/{trial['trial_id']}/answer/", body, content_type="application/json")
    assert res.status_code == 400, res.content
    assert Trial.objects.get(pk=trial["trial_id"]).answered_at is None


def test_text_elements_are_not_numbered_in_their_true_order(project):
    actions = [{"label": f"step {i}", "start_s": float(i), "end_s": i + 0.5} for i in range(15)]
    Video.objects.create(
        project=project,
        sha256="f" * 64,
        filename="steps.mp4",
        status="ready",
        duration_s=20.0,
        annotations={"actions": actions},
    )
    create_study(
        project,
        "texts",
        "ordering",
        options={"conditions": [{"number": 1, "label": "15 texts", "n_frames": 15, "item_kind": "texts"}]},
    )
    item = Item.objects.get()
    assert [Element.objects.get(pk=pk).text for pk in item.truth] == [f"step {i}" for i in range(15)]
    assert item.truth != sorted(item.truth)  # by chance: 1 in 15! (about 1e-12)


def test_nobody_rates_a_question_with_both_its_own_and_another_pairs_answer(verified, project):
    verified(3)
    study, _ = create_study(
        project,
        "vudg",
        "likert",
        preset="vudg-quality",
        options={
            "criteria": ["relevance"],
            "attention_items": 0,
            "questions_per_participant": 100,
            "raters_per_item": None,
        },
    )
    p = enroll(study, people(project, 1)[0])
    rated = list(Trial.objects.filter(participant=p).values_list("item__qa_pair_id", "item__group"))
    assert {g for _, g in rated} == {"real", "random_matched"}
    pairs = [pair for pair, _ in rated]
    assert len(pairs) == len(set(pairs)) == 9  # one version of each of the 9 verified pairs


def test_participants_see_that_a_build_failed_but_not_its_reason(project, admin_user):
    Study.objects.create(
        project=project,
        name="broken",
        kind="mcq",
        status="failed",
        build_error="a clip of secret-source-name.mp4 is 900 s long",
    )
    seen = api_as(people(project, 1)[0]).get(f"/api/projects/{project.slug}/studies/").json()
    assert seen[0]["build_error"] == "the build failed"
    assert (
        "secret-source-name"
        in api_as(admin_user).get(f"/api/projects/{project.slug}/studies/").json()[0]["build_error"]
    )


def test_study_clips_carry_no_chapters_title_or_creation_time(tmp_path):
    src, meta, dst = tmp_path / "src.mp4", tmp_path / "chapters.txt", tmp_path / "clip.mp4"
    meta.write_text(
        ";FFMETADATA1\ntitle=walk to the kitchen\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=2000\ntitle=first\n"
        "[CHAPTER]\nTIMEBASE=1/1000\nSTART=2000\nEND=5000\ntitle=second\n"
    )
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=160x120:rate=10:duration=5",
            "-i",
            str(meta),
            "-map_metadata",
            "1",
            "-map_chapters",
            "1",
            "-metadata",
            "creation_time=2024-01-02T03:04:05Z",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            str(src),
        ],
        check=True,
    )

    def probe(path):
        return json.loads(
            subprocess.run(
                ["ffprobe", "-v", "error", "-print_format", "json", "-show_chapters", "-show_format", str(path)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )

    assert len(probe(src)["chapters"]) == 2  # the source has them
    ffmpeg.run(ffmpeg.clip_args(src, dst, start_s=1.0, end_s=4.0, max_height=120), timeout_s=60, what="clip")
    clip = probe(dst)
    assert clip["chapters"] == []
    tags = clip["format"].get("tags", {})
    assert "title" not in tags and "creation_time" not in tags


def test_a_studys_own_instructions_reach_the_page_sanitized(quick, project):
    from django.test import Client

    Study.objects.filter(pk=quick.pk).update(
        instructions="**Read carefully.**\n\n<img src=x onerror=\"document.title='owned'\"><script>alert(1)</script>"
    )
    page = Client()
    page.force_login(people(project, 1)[0])
    html = page.get(f"/projects/{project.slug}/studies/quick/").content.decode()
    assert "<strong>Read carefully.</strong>" in html and '<img src="x">' in html
    assert "onerror" not in html and "alert(1)" not in html
