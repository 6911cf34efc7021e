"""Issue 21, study pages: instructions made per study from its settings (and editable by its
researchers and admins), open-answer items only from questions that make sense open (no options, a
text answer, no time the clip does not show), and ordering items refused when two elements are the
same. Studies are built as ``study_create`` builds them, over real clips cut by ffmpeg."""

from __future__ import annotations

import pytest
from django.test import Client

from annotator.qa.models import QAPair, QAType
from annotator.qa.stimulus import Medium, Stimulus
from annotator.studies import instructions
from annotator.studies.kinds import _qa
from annotator.studies.kinds.ordering import REPEATED_TEXTS
from annotator.studies.models import Item, Study
from annotator.studies.services import create_study
from tests.studies.conftest import people, stored_video

pytestmark = pytest.mark.django_db


def _single(a: float, b: float) -> Stimulus:
    return Stimulus("single", (Medium(label="Video 1", kind="video", video_id=1, start_s=a, end_s=b),))


class _Pair:
    clip_start_s, clip_end_s = 0.0, 3.0


def test_a_time_a_question_names_is_checked_against_the_clip_as_played():
    assert _qa.named_times("How many cups at 4.5 s? At 1:05, 0:01:05.5, 3 seconds, 10secs; part 1 of clip 2") == [
        (4.5, "seconds"),
        (65.0, "short clock"),
        (65.5, "clock"),
        (3.0, "seconds"),
        (10.0, "seconds"),
    ]
    outside = "its question names a time the clip does not show"
    assert _qa.time_problem("How many cups are there at 4.5 s?", _single(0.0, 3.0), _Pair) == outside  # past its end
    assert _qa.time_problem("How many cups are there at 4.5 s?", _single(3.0, 6.0), _Pair) == outside  # plays as 0-3 s
    assert _qa.time_problem("How many cups are there at 2.5 s?", _single(0.0, 3.0), _Pair) == ""
    assert _qa.time_problem("What happens in part 1 of clip 2?", _single(3.0, 6.0), _Pair) == ""  # no time named
    log = Stimulus(
        "life_log", (Medium(label="Life log", kind="life_log", start_s=100.0, end_s=400.0, clock_start="12:30:00"),)
    )
    assert _qa.time_problem("What did I do at 12:31:41?", log, _Pair) == ""  # its wall clock
    assert _qa.time_problem("What did I do at 13:31:41?", log, _Pair) == outside
    assert _qa.time_problem("What did I do at 12:34?", log, _Pair) == ""
    assert _qa.time_problem("What did I do at 12:29?", log, _Pair) == outside


def test_open_answer_items_come_only_from_open_questions_and_the_build_says_what_it_left_out(verified, project):
    _, units = verified(2, seconds=6.0)
    first_open, second_open = QAPair.objects.filter(unit=units[0], options__isnull=True).order_by("id")
    # "at 4.5 s" of a 3-second clip cut from 3 s: the page plays 0-3 s, so the time is nowhere.
    QAPair.objects.filter(pk=first_open.pk).update(
        question="How many cups are there at 4.5 s?", clip_start_s=3.0, clip_end_s=6.0
    )
    QAPair.objects.filter(pk=second_open.pk).update(
        question="How many cups are there at 2.0 s?", clip_start_s=0.0, clip_end_s=3.0
    )
    interval = QAType.objects.create(
        project=project, slug="temporal", name="Temporal", answer_kind=QAType.AnswerKind.INTERVAL
    )
    on_interval = QAPair.objects.filter(unit=units[1], options__isnull=True).order_by("id").first()
    QAPair.objects.filter(pk=on_interval.pk).update(qa_type=interval)
    with_options = QAPair.objects.filter(project=project, status="verified", options__isnull=False).count()
    assert with_options == 2

    study, report = create_study(project, "open", "open_answer", seed=1)

    assert report.skipped == {
        "QA pairs with options (multiple choice, no open question)": 2,
        "QA pairs whose answer is a time interval": 1,
        "QA pairs that cannot be shown (its question names a time the clip does not show)": 1,
    }
    assert study.sampling["skipped"] == report.skipped  # kept for builds run by a worker
    built = set(Item.objects.filter(condition__study=study).values_list("qa_pair_id", flat=True))
    expected = set(
        QAPair.objects.filter(project=project, status="verified", options__isnull=True)
        .exclude(pk__in=[first_open.pk, on_interval.pk])
        .values_list("pk", flat=True)
    )
    assert built == expected and second_open.pk in built and len(built) == 2


def test_a_text_ordering_item_with_two_same_texts_is_refused(project, tmp_path):
    repeats = stored_video(project, tmp_path / "a.mp4", seconds=20.0, name="a.mp4")
    distinct = stored_video(project, tmp_path / "b.mp4", seconds=21.0, name="b.mp4")  # other bytes
    repeats.annotations = {
        "actions": [
            {"label": t, "start_s": i * 4.0, "end_s": i * 4.0 + 3}
            for i, t in enumerate(["Open the door", "Walk in", "open the door.", "Sit down"])
        ]
    }
    distinct.annotations = {
        "actions": [
            {"label": t, "start_s": i * 4.0, "end_s": i * 4.0 + 3}
            for i, t in enumerate(["Wake up", "Make tea", "Drink it", "Leave"])
        ]
    }
    repeats.save()
    distinct.save()
    study, report = create_study(
        project,
        "summaries",
        "ordering",
        preset="xlebench-summary",
        seed=1,
        options={"conditions": [{"number": 1, "label": "4 summaries", "n_frames": 4, "item_kind": "texts"}]},
    )
    assert report.skipped == {REPEATED_TEXTS: 1}
    (item,) = Item.objects.filter(condition__study=study)
    assert item.key == f"record:{distinct.pk}"


def test_the_instructions_follow_the_study_and_say_no_paper(verified, project, tmp_path):
    verified(2)
    plain, _ = create_study(project, "plain", "mcq", seed=1, options={"practice_items": 0, "attention_items": 1})
    timed, _ = create_study(
        project, "timed", "mcq", seed=1, options={"practice_items": 1, "time_limits": [60, 180], "per_type": 1}
    )
    rated, _ = create_study(project, "rated", "likert", seed=1, options={"justify_below": 3, "control_groups": False})
    video = stored_video(project, tmp_path / "s.mp4", seconds=20.0, name="s.mp4")
    video.annotations = {
        "actions": [{"label": f"step {i}", "start_s": i * 4.0, "end_s": i * 4.0 + 3} for i in range(4)]
    }
    video.save()
    ordered, _ = create_study(
        project,
        "summaries",
        "ordering",
        preset="xlebench-summary",
        seed=1,
        options={"conditions": [{"number": 1, "label": "4", "n_frames": 4, "item_kind": "texts"}]},
    )

    text = instructions.text(plain)
    assert "There is no practice: every question counts." in text and "practice: afterwards" not in text
    assert "time limit" not in text.lower() and "Play the clips as often as you like" in text
    assert "they say which option to choose" in text  # its attention item
    text = instructions.text(timed)
    assert "The first question is practice: afterwards you see the right option." in text
    assert "You have **1 minute or 3 minutes** for each question" in text
    text = instructions.text(rated)
    assert "A score below **3** needs a short written justification" in text and "X-LeBench" not in text
    text = instructions.text(ordered)
    assert "short descriptions of events" in text and "frames" not in text and "pinned" not in text
    for study in (plain, timed, rated, ordered):
        assert not any(
            word in instructions.text(study) for word in ("Sec.", "seed 0", "X-LeBench", "EgoExoBench", "VUDG")
        )


def test_researchers_and_admins_edit_a_studys_instructions_and_participants_read_them(verified, project, annotator):
    verified(1)
    study, _ = create_study(project, "mc", "mcq", seed=1, options={"practice_items": 0, "independent": False})
    researcher = people(project, 1, role="researcher", prefix="r")[0]
    url = f"/projects/{project.slug}/studies/mc/instructions/"
    page = Client()
    page.force_login(researcher)
    res = page.get(url)
    assert res.status_code == 200 and "There is no practice" in res.content.decode()  # the made text, to start from

    res = page.post(url, {"instructions": "# Welcome\n\nWatch closely, then **choose**."})
    assert res.status_code == 302
    study.refresh_from_db()
    assert study.instructions == "# Welcome\n\nWatch closely, then **choose**."
    taker = Client()
    taker.force_login(annotator)
    body = taker.get(f"/projects/{project.slug}/studies/mc/").content.decode()
    assert "Watch closely, then <strong>choose</strong>." in body and "There is no practice" not in body

    too_long = "x" * (instructions.TEXT_MAX + 1)
    res = page.post(url, {"instructions": too_long})
    assert res.status_code == 400 and "at most 100,000 characters" in res.content.decode()
    assert too_long in res.content.decode()  # nothing the author wrote is lost
    study.refresh_from_db()
    assert study.instructions.startswith("# Welcome")

    page.post(url, {"instructions": "  "})  # empty: back to the made text
    study.refresh_from_db()
    assert (
        study.instructions == ""
        and "There is no practice" in taker.get(f"/projects/{project.slug}/studies/mc/").content.decode()
    )
    assert taker.get(url).status_code == 403  # an annotator does not edit them
    assert taker.post(url, {"instructions": "mine"}).status_code == 403
    assert Study.objects.get(pk=study.pk).instructions == ""
