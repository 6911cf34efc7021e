"""Assignment, answers and exclusion in the study engine, on ordering items (EGO-FLIGHT Sec. 3.5)."""

from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from annotator.errors import Conflict, DomainError, Forbidden, Invalid
from annotator.media.models import Video
from annotator.projects.services import ensure_member
from annotator.scoring.ordering import shown_order
from annotator.studies.handles import handles_of
from annotator.studies.kinds.ordering import EGO_FLIGHT
from annotator.studies.models import Condition, Element, Item, Participant, Study, Trial
from annotator.studies.services import answer_trial as _answer
from annotator.studies.services import current_trial, enroll, mark_shown, score_pending, start


@pytest.fixture
def experiment(project):
    """The nine preset conditions over 12 medium, 12 short and 12 long clips (fake video rows,
    text-less frame elements), one item per condition and clip of its class, and 2 practice items."""
    exp = Study.objects.create(
        project=project,
        name="pilot",
        kind="ordering",
        preset="ego-flight",
        questions_per_participant=10,
        conditions_per_participant=2,
        practice_items=2,
        exclusion={"min_median_rt_s": 2.0, "min_practice_score": 1},
    )
    video = Video.objects.create(project=project, sha256="e" * 64, filename="v.mp4", status="ready", duration_s=999)
    clips = {
        k: [(video, b + i * 40, b + i * 40 + 10) for i in range(12)]
        for b, k in ((0, "short"), (1000, "medium"), (2000, "long"))
    }
    for spec in EGO_FLIGHT:
        variables = {
            "n_frames": spec["n_frames"],
            "clip_length": spec["clip_length"],
            "annotation": spec["annotation"],
            "hints": spec.get("hints", []),
            "item_kind": "frames",
        }
        cond = Condition.objects.create(
            study=exp, number=spec["number"], label=spec["label"], variables=variables, baseline=spec["number"] == 2
        )
        for index, clip in enumerate(clips[spec["clip_length"]]):
            _item(cond, clip, index, practice=False)
        if cond.baseline:
            for j in range(2):
                _item(cond, (video, 3000 + j * 20, 3010 + j * 20), 100 + j, practice=True)
    return exp


def _item(cond, clip, index, practice):
    video, a, b = clip
    n, hints = cond.variables["n_frames"], cond.variables["hints"]
    elements = [Element.objects.create(kind="text", text=f"{a}-{i}") for i in range(n)]
    order = shown_order(len(elements), index * 31 + cond.number, hints)
    return Item.objects.create(
        condition=cond,
        index=index,
        role="practice" if practice else "scored",
        seed=index,
        key=f"clip:{video.pk}:{a}:{b}",
        footage=video,
        truth=[e.pk for e in elements],
        payload={
            "shown": [elements[i].pk for i in order],
            "hints": hints,
            "annotation": "",
            "clip": {"video_id": video.pk, "start_s": a, "end_s": b},
        },
    )


def answer_trial(p, trial_id, order, rt_ms, key):
    """Answer as the page does: the order as this trial's handles (element ids the page never sees)."""
    trial = Trial.objects.get(pk=trial_id)
    handles = handles_of(trial.pk, trial.item.truth)
    return _answer(p, trial_id, [handles.get(e, "0" * 16) for e in order], rt_ms, key)


def _shown(p, trial, ms_ago: float):
    """The page reports ``trial`` shown, and the report is dated ``ms_ago`` ms back (as if the person
    had been looking at it that long)."""
    mark_shown(p, trial.pk)
    Trial.objects.filter(pk=trial.pk).update(shown_at=F("shown_at") - timedelta(milliseconds=ms_ago))


def _people(project, n):
    return [ensure_member(f"p{i}", role="annotator", project=project)[0] for i in range(n)]


def test_assignment_gives_two_conditions_and_never_the_same_clip_twice(experiment, project):
    for person in _people(project, 12):
        p = enroll(experiment, person)
        trials = list(Trial.objects.filter(participant=p, practice=False).select_related("item"))
        assert p.conditions.count() == 2
        assert len(trials) == 10
        assert {t.item.condition_id for t in trials} == set(p.conditions.values_list("pk", flat=True))
        assert len({t.item.key for t in trials}) == 10  # e.g. never the 4-frame and the hinted 4-frame of one clip
        assert Trial.objects.filter(participant=p, practice=True).count() == 2
    # Conditions are handed out evenly: 12 people x 2 = 24 slots over 9 conditions -> 2 or 3 each.
    loads = [c.participants.count() for c in Condition.objects.all()]
    assert sorted(set(loads)) in ([2, 3], [3]) and sum(loads) == 24


def test_enrolling_twice_returns_the_same_assignment(experiment, annotator):
    first = enroll(experiment, annotator)
    assert enroll(experiment, annotator).pk == first.pk
    assert Trial.objects.filter(participant=first).count() == 12


def test_practice_comes_first_and_answers_are_checked(experiment, annotator):
    p = enroll(experiment, annotator)
    start(p)
    t = current_trial(p)
    assert t.practice and t.served_at is not None
    served = t.served_at
    assert current_trial(p).served_at == served  # a reload serves the same trial and keeps the first time
    _shown(p, t, 4500)
    with pytest.raises(DomainError, match="exactly once"):
        answer_trial(p, t.pk, t.item.truth[:-1], 3000, "k0")
    later = Trial.objects.filter(participant=p, practice=False).first()
    with pytest.raises(DomainError, match="not your current trial") as err:
        answer_trial(p, later.pk, later.item.truth, 3000, "k1")
    assert isinstance(err.value, Conflict)
    answer_trial(p, t.pk, t.item.truth, 4000, "k2")
    again = answer_trial(p, t.pk, t.item.truth, 4000, "k2")  # the same answer resent: no error, no change
    assert again.client_rt_ms == 4000
    with pytest.raises(DomainError, match="already answered"):
        answer_trial(p, t.pk, t.item.truth, 4000, "other-key")


def test_hint_frames_must_stay_in_place(experiment, annotator):
    p = enroll(experiment, annotator)
    hinted = Item.objects.filter(condition__number=8).first()
    Trial.objects.filter(participant=p).delete()
    trial = Trial.objects.create(participant=p, item=hinted, position=0)
    truth = hinted.truth
    moved = [truth[1], truth[0], truth[2], truth[3]]  # the pinned first frame moved
    p.stage = "trials"
    p.save()
    _shown(p, trial, 5000)
    with pytest.raises(DomainError, match="hint at position 1"):
        answer_trial(p, trial.pk, moved, 3000, "h")


def _finish(p, rt_ms, practice_right=True):
    start(p)
    while (t := current_trial(p)) is not None:
        order = t.item.truth if (practice_right or not t.practice) else t.item.truth[::-1]
        _shown(p, t, rt_ms)
        answer_trial(p, t.pk, order, rt_ms, f"k{t.pk}")
    p.refresh_from_db()
    return p


def test_fast_or_confused_participants_are_flagged_and_kept(experiment, project):
    careful, hasty, confused = (enroll(experiment, u) for u in _people(project, 3))
    careful = _finish(careful, 5000)
    hasty = _finish(hasty, 800)
    confused = _finish(confused, 5000, practice_right=False)
    assert (careful.stage, careful.excluded, careful.exclusion_reasons) == ("done", False, [])
    assert hasty.excluded and hasty.exclusion_reasons == ["median response time 0.80 s is under 2 s"]
    assert confused.excluded and confused.exclusion_reasons == ["0 practice items right, fewer than 1"]
    assert Trial.objects.filter(participant=hasty, answered_at__isnull=False).count() == 12  # data kept
    assert score_pending(experiment.pk) == 36
    taus = {t.scores["kendall_tau_b"] for t in Trial.objects.filter(participant=careful, practice=False)}
    assert taus == {1.0}, taus


def test_a_person_given_no_practice_item_is_not_excluded_by_the_practice_rule(experiment, project):
    # The study was built with no practice item left to draw (the demo's small footage does this);
    # its rule "at least 1 practice item right" cannot be met, and must not exclude everyone.
    Item.objects.filter(condition__study=experiment, role="practice").delete()
    (person,) = (enroll(experiment, u) for u in _people(project, 1))
    person = _finish(person, 5000)
    assert (person.stage, person.excluded, person.exclusion_reasons) == ("done", False, [])


def test_text_items_order_a_videos_annotated_actions(project):
    from annotator.studies.services import create_study

    actions = [{"label": f"step {i}", "start_s": float(i), "end_s": i + 0.5} for i in (4, 0, 2, 3, 1)]
    Video.objects.create(
        project=project,
        sha256="f" * 64,
        filename="steps.mp4",
        status="ready",
        duration_s=20.0,
        annotations={"actions": actions},
    )
    Video.objects.create(
        project=project,
        sha256="0" * 64,
        filename="few.mp4",
        status="ready",
        duration_s=20.0,
        annotations={"actions": actions[:2]},
    )
    lines = []
    conditions = [
        {"number": 1, "label": "3 texts", "n_frames": 3, "item_kind": "texts"},
        {"number": 2, "label": "5 texts", "n_frames": 5, "item_kind": "texts"},
    ]
    study, report = create_study(
        project,
        "texts",
        "ordering",
        options={"conditions": conditions, "exclusion": {"min_median_rt_s": 1.5}},
        progress=lines.append,
    )
    assert "  condition 1 (3 texts): 1 items, 1 videos with too few actions" in lines
    assert report.items == {1: 1, 2: 1} and report.skipped == {
        "videos with fewer than 3 annotated actions": 1,
        "videos with fewer than 5 annotated actions": 1,
    }
    five = Item.objects.get(condition__number=2)
    assert [Element.objects.get(pk=pk).text for pk in five.truth] == ["step 0", "step 1", "step 2", "step 3", "step 4"]
    three = Item.objects.get(condition__number=1)
    assert [Element.objects.get(pk=pk).text for pk in three.truth] == ["step 0", "step 1", "step 3"]
    assert sorted(three.payload["shown"]) == sorted(three.truth)
    # A refused answer names no element (their ids are no business of the page).
    person = _people(project, 1)[0]
    participant = enroll(study, person)
    start(participant)
    trial = current_trial(participant)
    mark_shown(participant, trial.pk)
    handle = handles_of(trial.pk, trial.item.truth)[trial.item.truth[0]]
    with pytest.raises(Invalid) as refused:
        _answer(participant, trial.pk, [handle] * len(trial.item.truth), 5.0, "k")
    n = len(trial.item.truth)
    assert refused.value.as_body() == {
        "detail": f"the answer must name each of the {n} elements exactly once",
        "errors": {"response": f"the answer must name each of the {n} elements exactly once"},
    }
    assert Study.objects.get(name="texts").exclusion == {"min_median_rt_s": 1.5}


@pytest.mark.parametrize("role", ["admin", "reviewer", "researcher"])
def test_people_who_can_export_the_truth_cannot_enrol(experiment, project, role):
    from annotator.projects.services import ensure_member

    person = ensure_member(f"who-{role}", role=role, project=project)[0]
    with pytest.raises(Forbidden, match=f"your role \\({role}\\) lets you see or export its answers"):
        enroll(experiment, person)
    assert not Participant.objects.exists() and not Trial.objects.exists()


def test_a_superuser_cannot_enrol_even_as_an_annotator_member(experiment, annotator):
    annotator.is_superuser = True
    annotator.save()
    with pytest.raises(Forbidden, match="superuser"):
        enroll(experiment, annotator)
    assert not Participant.objects.exists()


def test_the_trial_clock_starts_when_the_page_reports_it_shown(experiment, annotator, settings):
    settings.STUDY_RT_SLACK_MS = 500
    p = enroll(experiment, annotator)
    start(p)
    t = current_trial(p)
    assert t.served_at is not None and t.shown_at is None
    with pytest.raises(Invalid, match="not reported this trial as shown"):
        answer_trial(p, t.pk, t.item.truth, 1500, "k")
    first = mark_shown(p, t.pk).shown_at
    assert mark_shown(p, t.pk).shown_at == first  # a reload reports it again: the first time is kept
    later = Trial.objects.filter(participant=p, practice=False).first()
    with pytest.raises(Conflict, match="not your current trial"):
        mark_shown(p, later.pk)
    assert Trial.objects.get(pk=later.pk).shown_at is None

    # Shown 1.5 s ago: 3 s is more than the server saw (plus 0.5 s of slack), so it is refused, nothing saved.
    Trial.objects.filter(pk=t.pk).update(shown_at=F("shown_at") - timedelta(milliseconds=1500))
    with pytest.raises(Invalid, match=r"^client_rt_ms 3000 is longer than the \d+ ms the server has seen") as err:
        answer_trial(p, t.pk, t.item.truth, 3000, "k")
    assert 1500 <= int(str(err.value).split()[6]) < 3000 - 500
    with pytest.raises(Invalid, match="positive"):
        answer_trial(p, t.pk, t.item.truth, 0, "k")
    kept = Trial.objects.get(pk=t.pk)
    assert (kept.response, kept.client_rt_ms, kept.answered_at, kept.idempotency_key) == (None, None, None, "")
    assert answer_trial(p, t.pk, t.item.truth, 1900, "k").client_rt_ms == 1900  # within the slack


def _second_video_clips(experiment, project):
    """A second source video with 12 clips in every condition, served before the first video's
    (lower item indexes, least-used first); returns it."""
    other = Video.objects.create(project=project, sha256="9" * 64, filename="w.mp4", status="ready", duration_s=999)
    Item.objects.filter(condition__study=experiment, role="scored").update(index=F("index") + 1000)
    for cond in Condition.objects.filter(study=experiment):
        for i in range(12):
            _item(cond, (other, 5000 + i * 40 + cond.number, 5010 + i * 40 + cond.number), i, practice=False)
    return other


def test_a_participant_never_orders_frames_of_footage_they_could_play_in_a_queue(experiment, project, make_unit):
    from annotator.qa.queue import claim_next

    other = _second_video_clips(experiment, project)
    person = _people(project, 1)[0]
    unit = make_unit(1)
    unit.video = other  # the person verifies a unit of the second video (its night rendition would count too)
    unit.save(update_fields=["video"])
    claim_next(project, person)

    p = enroll(experiment, person)

    videos = set(Trial.objects.filter(participant=p, practice=False).values_list("item__footage_id", flat=True))
    assert videos == {Video.objects.get(filename="v.mp4").pk}  # never the footage of their queue unit


def test_footage_a_participant_still_has_to_order_is_not_served_to_them_even_from_their_queue(
    experiment, project, make_unit, client
):
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    from annotator.qa.queue import claim_next

    person = _people(project, 1)[0]
    enroll(experiment, person)
    source = Video.objects.get(filename="v.mp4")
    name = default_storage.save("renditions/leak/v.mp4", ContentFile(b"\0" * 64))
    Video.objects.filter(pk=source.pk).update(rendition=name)
    unit = make_unit(1)
    unit.video = source  # after enrolling, the person asks for verification work: a unit of the study's footage is open
    unit.save(update_fields=["video"])
    client.force_login(person)
    try:
        assert claim_next(project, person) is None  # the queue does not serve it while they still have to order it
        assert client.get(f"/files/{name}").status_code == 404
        Trial.objects.filter(participant__user=person).update(
            answered_at=timezone.now()
        )  # all answered: the study is over
        assert claim_next(project, person).unit_id == unit.pk
        assert client.get(f"/files/{name}").status_code == 200
    finally:
        default_storage.delete(name)
