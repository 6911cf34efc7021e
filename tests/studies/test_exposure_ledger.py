"""The exposure ledger (issue 19): what one study or queue showed a person never answers an item
they get later. Each test is a person who takes what the platform offers in turn, as the security
review did, and checks that nothing served later rests on what they were shown before.

The three leaks the review found, each reproduced here:
1. a Likert study's real items show verified answers that are the truth of an open-answer study;
2. MCQ trials play clips of source footage, and ordering items lie inside those clips;
3. a queue unit skipped, or whose lease lapsed, left no record that its videos and answers were seen.
"""

from __future__ import annotations

import pytest

from annotator.exposure import ledger
from annotator.exposure.models import Exposure
from annotator.qa.models import QAPair
from annotator.studies.exposures import refusal_counts
from annotator.studies.models import Item, Trial
from annotator.studies.services import answer_trial, create_study, current_trial, enroll, mark_shown, start
from tests.studies.conftest import people


def _take(person, study, response) -> list[Trial]:
    """Take the whole study through the services the API calls; ``response(trial)`` answers."""
    participant = enroll(study, person)
    start(participant)
    served = []
    while (trial := current_trial(participant)) is not None:
        served.append(trial)
        mark_shown(participant, trial.pk)
        answer_trial(participant, trial.pk, response(trial), 1.0, f"k{trial.pk}")
    return served


def _scored_items(participant) -> list[Item]:
    return [
        t.item
        for t in Trial.objects.filter(participant=participant, practice=False).select_related("item")
        if t.item.role == Item.Role.SCORED
    ]


def test_answers_a_likert_study_showed_are_never_asked_in_an_open_answer_study(verified, project):
    verified(3)
    likert, _ = create_study(
        project,
        "vudg",
        "likert",
        preset="vudg-quality",
        seed=2,
        options={"criteria": ["correctness"], "questions_per_participant": 30, "attention_items": 0},
    )
    opened, report = create_study(project, "open", "open_answer", options={"questions_per_participant": 9})
    real = set(Item.objects.filter(condition__study=likert, group="real").values_list("qa_pair_id", flat=True))
    # The build says how many of its items the Likert study gives away (to whoever takes both).
    assert (
        report.exposure["given away by study vudg"]
        == Item.objects.filter(condition__study=opened, qa_pair_id__in=real).count()
        > 0
    )
    assert opened.sampling["exposure"] == report.exposure
    person, fresh = people(project, 2)
    _take(person, likert, lambda trial: {"score": 3})
    # Real items show their own pair's verified answer, random-matched ones another verified pair's.
    rated = Trial.objects.filter(participant__user=person, participant__study=likert).select_related("item")
    shown = {t.item.payload["answer_of"] for t in rated if t.item.group in ("real", "random_matched")}
    assert {t.item.group for t in rated} >= {"real", "random_matched"}
    open_pairs = set(Item.objects.filter(condition__study=opened).values_list("qa_pair_id", flat=True))
    assert shown & open_pairs  # the leak's precondition: the Likert study showed answers the open study asks for

    asked = {i.qa_pair_id for i in _scored_items(enroll(opened, person))}
    assert asked and not asked & shown
    assert refusal_counts(opened) == {ledger.ANSWER_SHOWN: len(shown & open_pairs)}
    # Somebody who was shown nothing is asked everything.
    assert {i.qa_pair_id for i in _scored_items(enroll(opened, fresh))} == open_pairs


def test_ordering_items_inside_clips_an_mcq_study_played_are_never_served(verified, project):
    verified(1, seconds=100.0)  # one unit: its pairs' clips span the whole 100 s video
    mcq, _ = create_study(
        project,
        "mc",
        "mcq",
        options={"time_limits": [60], "questions_per_participant": 5, "attention_items": 0, "practice_items": 0},
    )
    person, fresh = people(project, 2)
    served = _take(person, mcq, lambda trial: 0)
    assert served
    played = Exposure.objects.filter(person=f"user:{person.pk}", kind="footage", source="study")
    assert played.exists() and {(e.start_s, e.end_s) for e in played} == {(0.0, 100.0)}

    flight, report = create_study(
        project,
        "flight",
        "ordering",
        preset="ego-flight",
        seed=7,
        options={"frame_size": 32, "practice_items": 1, "questions_per_participant": 12},
    )
    scored = Item.objects.filter(condition__study=flight, role=Item.Role.SCORED).count()
    assert report.exposure["given away by study mc"] == scored  # every ordering clip lies inside the MCQ clips
    participant = enroll(flight, person)
    assert _scored_items(participant) == []  # every scored ordering item lies inside a clip the person played
    candidates = Item.objects.filter(condition__in=participant.conditions.all(), role=Item.Role.SCORED).count()
    # The person's conditions hold as few as 7 scored items, by a draw seeded with ids that earlier tests
    # move on (it asked for at least 10 and failed after other tests had made users; seen at 4 to 8
    # users made first): every one of them is refused.
    assert candidates >= 5 and refusal_counts(flight) == {ledger.FOOTAGE_PLAYED: candidates}
    assert len(_scored_items(enroll(flight, fresh))) >= 5  # somebody shown nothing orders clips of the same video


def test_a_skipped_queue_unit_still_keeps_its_footage_and_answers_from_the_person(verified, project):
    from annotator.qa.queue import claim_next
    from annotator.qa.services import set_queue_policy, skip_unit

    set_queue_policy(project, double_check_share=1.0)  # the builder's pass queues a double-check showing the answers
    verified(1, seconds=100.0)
    opened, _ = create_study(project, "open", "open_answer", options={"questions_per_participant": 3})
    flight, _ = create_study(
        project,
        "flight",
        "ordering",
        preset="ego-flight",
        seed=7,
        options={"frame_size": 32, "practice_items": 0, "questions_per_participant": 6},
    )
    person, fresh = people(project, 2)
    item = claim_next(project, person)
    assert item.kind == "double_check"
    skip_unit(item.unit_id, person, reason="unclear")  # the skip ends the lease: no queue item names them now
    pairs = set(QAPair.objects.filter(unit_id=item.unit_id).values_list("id", flat=True))
    assert (
        set(
            Exposure.objects.filter(person=f"user:{person.pk}", ref=f"unit:{item.unit_id}", kind="answer").values_list(
                "qa_pair_id", flat=True
            )
        )
        == pairs
    )

    assert _scored_items(enroll(opened, person)) == []  # every open question's answer was on the unit's page
    participant = enroll(flight, person)
    assert _scored_items(participant) == []  # and every ordering clip inside its video
    candidates = Item.objects.filter(condition__in=participant.conditions.all(), role=Item.Role.SCORED).count()
    # its two open questions (the unit's multiple-choice pair is no open question: not an item, issue 21)
    assert refusal_counts(opened) == {ledger.ANSWER_SHOWN: 2}
    assert refusal_counts(flight) == {ledger.FOOTAGE_PLAYED: candidates}
    assert len(_scored_items(enroll(opened, fresh))) == 2 and len(_scored_items(enroll(flight, fresh))) == 6


def test_an_answer_practice_feedback_showed_is_never_asked_again(verified, project):
    """Found by the review: a practice trial's feedback shows the right option, and the same pair
    came back as a scored item of another MCQ study."""
    verified(3)
    first, _ = create_study(
        project,
        "mca",
        "mcq",
        seed=1,
        options={"time_limits": [60], "per_type": 1, "practice_items": 1, "attention_items": 0},
    )
    second, _ = create_study(
        project,
        "mcb",
        "mcq",
        seed=2,
        options={"time_limits": [60], "practice_items": 0, "attention_items": 0, "questions_per_participant": 9},
    )
    person = people(project, 1)[0]
    served = _take(person, first, lambda trial: 0)
    practice = [t.item.qa_pair_id for t in served if t.practice]
    assert (
        len(practice) == 1
        and Exposure.objects.filter(person=f"user:{person.pk}", kind="answer", qa_pair_id=practice[0]).exists()
    )
    asked = {i.qa_pair_id for i in _scored_items(enroll(second, person))}
    assert asked and practice[0] not in asked


@pytest.mark.django_db
def test_the_ledger_is_append_only():
    from django.db import IntegrityError, transaction

    row = Exposure.objects.create(
        person="user:1", project_id=1, kind="footage", video_id=1, source="queue", ref="unit:1"
    )
    for change in (
        lambda: Exposure.objects.filter(pk=row.pk).update(kind="frames"),
        lambda: Exposure.objects.filter(pk=row.pk).delete(),
    ):
        with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
            change()
    assert Exposure.objects.get(pk=row.pk).kind == "footage"


@pytest.mark.django_db
def test_one_record_writes_source_footage_once_in_order_and_a_guard_decides_whether_it_writes(project):
    """``ledger.record`` in one statement: a night rendition is written as its day source, rows
    equal after that mapping once, in the order shown; whole and fractional seconds together (a
    list of ints and floats, which the database driver refuses mixed); with a guard, nothing is
    written when the guard's statement returns no row."""
    from annotator.media.models import Video

    day = Video.objects.create(project=project, sha256="d" * 64, filename="day.mp4")
    night = Video.objects.create(project=project, sha256="n" * 64, filename="night.mp4", derived_from=day)
    shown = [
        ledger.Shown(ledger.FOOTAGE, night.pk, 0, 12.5),
        ledger.Shown(ledger.ANSWER, qa_pair_id=7),
        ledger.Shown(ledger.FOOTAGE, day.pk, 0.0, 12.5),
        ledger.Shown(ledger.FOOTAGE, night.pk),
    ]
    assert ledger.record("user:1", project.pk, shown, source="queue", ref="unit:1") == 3
    rows = list(
        Exposure.objects.order_by("pk").values_list(
            "person", "kind", "video_id", "start_s", "end_s", "qa_pair_id", "ref"
        )
    )
    assert rows == [
        ("user:1", "footage", day.pk, 0.0, 12.5, None, "unit:1"),
        ("user:1", "answer", None, None, None, 7, "unit:1"),
        ("user:1", "footage", day.pk, None, None, None, "unit:1"),
    ]
    never = ('UPDATE "media_video" SET filename = filename WHERE id = %(guard_id)s RETURNING id', {"guard_id": -1})
    assert ledger.record("user:2", project.pk, shown, source="queue", ref="unit:2", guard=never) == (False, 0)
    once = ('UPDATE "media_video" SET filename = filename WHERE id = %(guard_id)s RETURNING id', {"guard_id": day.pk})
    assert ledger.record("user:2", project.pk, shown[1:2], source="queue", ref="unit:2", guard=once) == (True, 1)
    assert Exposure.objects.filter(person="user:2").count() == 1


def test_a_panel_participant_is_one_person_across_studies_by_their_pseudonym(verified, project):
    from annotator.studies import links

    verified(1, seconds=100.0)
    mcq, _ = create_study(
        project,
        "mc",
        "mcq",
        options={"time_limits": [60], "questions_per_participant": 5, "attention_items": 0, "practice_items": 0},
    )
    flight, _ = create_study(
        project,
        "flight",
        "ordering",
        preset="ego-flight",
        seed=7,
        options={"frame_size": 32, "practice_items": 0, "questions_per_participant": 6},
    )
    ids = links.PanelIds("5f8a-panel-person", "S1", "X1")
    participant, _ = links.open_link(links.create_link(mcq).link, ids)
    start(participant)
    while (trial := current_trial(participant)) is not None:
        mark_shown(participant, trial.pk)
        answer_trial(participant, trial.pk, 0, 1.0, f"k{trial.pk}")
    person = f"anon:{links.pseudonym_of('5f8a-panel-person')}"
    assert Exposure.objects.filter(person=person, kind="footage").exists()
    assert not Exposure.objects.filter(person__contains="5f8a").exists()  # the raw panel id is not the key
    # The same panel id on the ordering study's link: every clip inside the played footage, nothing to give.
    with pytest.raises(links.StudyFull):
        links.open_link(links.create_link(flight).link, ids)
    assert not flight.participants.exists()  # nothing kept of the attempt
    # Another panel id gets the ordering items.
    other, _ = links.open_link(links.create_link(flight).link, links.PanelIds("another-person"))
    assert _scored_items(other)


def test_a_claim_records_the_units_video_its_group_its_pairs_labelled_videos_and_answers(project):
    """``qa.queue.record_exposure``, the reads and the write in one statement: the unit's video, its
    group's members and the labelled videos of its QA pairs (a rendition as its source footage; a
    ``video_id`` that is not a whole number, an entry that is no object, or ``videos`` that is no
    list, names no video), each once and in id order, then each QA pair's answer, as the Python of
    before did in three statements. A unit that is gone records nothing."""
    from annotator.media.models import Video, VideoGroup, VideoGroupMember
    from annotator.qa.models import QAType, QueueItem, WorkUnit
    from annotator.qa.queue import record_exposure

    def video(name, **kw):
        return Video.objects.create(
            project=project,
            sha256=(name * 64)[:64],
            filename=f"{name}.mp4",
            status="ready",
            duration_s=10,
            fps=25,
            **kw,
        )

    day, night, query, option, stranger = (video(n) for n in "dnqos")
    copy = video("c", derived_from=option)  # a rendition of the option's footage
    group = VideoGroup.objects.create(project=project, kind="day_night", name="pair")
    VideoGroupMember.objects.create(group=group, video=day, role="day")
    VideoGroupMember.objects.create(group=group, video=night, role="night")
    unit = WorkUnit.objects.create(project=project, video=day, group=group, start_s=0, end_s=10)
    qa_type = QAType.objects.create(project=project, slug="which_video", name="Which video")
    labelled = [
        {"video_id": query.pk, "label": "Query video"},
        {"video_id": copy.pk, "label": "Video 1"},
        {"video_id": day.pk, "label": "Video 2"},
        {"video_id": stranger.pk + 0.5, "label": "a fraction"},
        {"video_id": str(stranger.pk), "label": "a string"},
        [stranger.pk],
    ]
    first, second = (
        QAPair.objects.create(
            project=project, unit=unit, video=day, qa_type=qa_type, origin="human", question="q", answer="a",
            clip_start_s=0, clip_end_s=5, videos=videos,
        )
        for videos in (labelled, {"video_id": stranger.pk})  # an object, not a list: no video
    )  # fmt: skip

    assert record_exposure(QueueItem(project=project, unit=unit), 42) == 6
    rows = Exposure.objects.filter(person="user:42", ref=f"unit:{unit.pk}").order_by("id")
    assert list(rows.values_list("kind", "video_id", "start_s", "end_s", "qa_pair_id", "source")) == [
        ("footage", day.pk, None, None, None, "queue"),
        ("footage", night.pk, None, None, None, "queue"),
        ("footage", query.pk, None, None, None, "queue"),
        ("footage", option.pk, None, None, None, "queue"),
        ("answer", None, None, None, first.pk, "queue"),
        ("answer", None, None, None, second.pk, "queue"),
    ]
    assert record_exposure(QueueItem(project=project, unit_id=unit.pk + 1000), 42) == 0
