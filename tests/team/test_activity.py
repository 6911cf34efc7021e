"""Active time from beats (annotator.team.activity): gaps under the idle cut count, longer ones add
nothing, heartbeats alone stop counting 10 minutes after the last input, and a period clips gaps.
Beats are written at known times; every expected number is worked out in the comments."""

from datetime import UTC, datetime, timedelta

import pytest

from annotator.team import activity
from annotator.team.figures import Period

T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)


def _beats(project, user, offsets_kinds, item=None):
    for offset, kind in offsets_kinds:
        activity.beat(project.pk, user.pk, item.pk if item else None, kind, at=T0 + timedelta(seconds=offset))


def test_the_idle_cut_is_two_heartbeats_and_15_seconds(settings):
    settings.QUEUE_HEARTBEAT_SECONDS = 30
    assert activity.idle_cut() == timedelta(seconds=75)


@pytest.mark.django_db
def test_gaps_under_the_cut_count_and_an_idle_gap_adds_nothing(project, annotator):
    _beats(
        project,
        annotator,
        [
            (0, "claim"),
            (30, "heartbeat"),
            (60, "heartbeat"),
            (80, "autosave"),
            (80 + 7200, "claim"),
            (80 + 7200 + 20, "submit"),
        ],
    )
    # 30 + 30 + 20 (claim to the autosave), then 2 h asleep: nothing, then 20 s to the submit = 100 s.
    assert activity.active_seconds(project, [annotator.pk], Period()) == {annotator.pk: 100.0}


@pytest.mark.django_db
def test_a_gap_of_exactly_the_cut_is_idle_and_one_second_less_is_work(project, annotator, annotator2):
    _beats(project, annotator, [(0, "claim"), (75, "autosave")])
    _beats(project, annotator2, [(0, "claim"), (74, "autosave")])
    assert activity.active_seconds(project, [annotator.pk, annotator2.pk], Period()) == {annotator2.pk: 74.0}


@pytest.mark.django_db
def test_a_page_left_open_counts_only_ten_minutes_of_heartbeats(project, annotator):
    # Claimed at 0, then nothing but heartbeats every 30 s for two hours (a page left open, the
    # computer awake), then an autosave 10 s after the last heartbeat.
    _beats(project, annotator, [(0, "claim")] + [(30 * k, "heartbeat") for k in range(1, 241)] + [(7210, "autosave")])
    # Heartbeat gaps count while they start within 600 s of the claim: starts 0, 30, ..., 600 = 21 gaps
    # of 30 s = 630 s. The autosave's gap (7200 -> 7210) ends in an input: 10 s. Total 640 s, not 7210.
    assert activity.active_seconds(project, [annotator.pk], Period()) == {annotator.pk: 640.0}


@pytest.mark.django_db
def test_a_period_clips_a_gap_across_midnight(project, annotator):
    midnight = datetime(2026, 3, 3, tzinfo=UTC)
    for at, kind in (
        (midnight - timedelta(seconds=30), "claim"),
        (midnight + timedelta(seconds=20), "autosave"),
        (midnight + timedelta(seconds=50), "submit"),
    ):
        activity.beat(project.pk, annotator.pk, None, kind, at=at)
    day1 = Period(midnight - timedelta(days=1), midnight)
    day2 = Period(midnight, midnight + timedelta(days=1))
    assert activity.active_seconds(project, [annotator.pk], day1) == {annotator.pk: 30.0}  # 23:59:30 -> 24:00
    assert activity.active_seconds(project, [annotator.pk], day2) == {
        annotator.pk: 50.0
    }  # 00:00 -> 00:00:20 -> 00:00:50
    assert activity.active_seconds(project, [annotator.pk], Period()) == {annotator.pk: 80.0}


@pytest.mark.django_db
def test_the_last_input_before_the_period_still_lets_its_heartbeats_count(project, annotator):
    # An autosave at 09:00, heartbeats at 09:05 and 09:05:30, period from 09:05: the heartbeat gap
    # starts 300 s after the last input (under 600), so its 30 s count although the input is outside.
    _beats(project, annotator, [(0, "autosave"), (300, "heartbeat"), (330, "heartbeat")])
    period = Period(T0 + timedelta(seconds=300), None)
    assert activity.active_seconds(project, [annotator.pk], period) == {annotator.pk: 30.0}


@pytest.mark.django_db
def test_time_is_credited_to_the_unit_of_the_beat_that_ends_the_gap(project, annotator, make_unit):
    first, second = make_unit(n_open=1), make_unit(n_open=1)
    a, b = first.queue_items.get(), second.queue_items.get()
    _beats(project, annotator, [(0, "claim"), (30, "submit")], item=a)
    _beats(project, annotator, [(40, "claim"), (70, "submit")], item=b)
    got = {(s.unit_id, s.purpose, s.kind): s.seconds for s in activity.stretches(project, [annotator.pk], Period())}
    # 0 -> 30 on the first unit; 30 -> 40 (submit to the next claim) and 40 -> 70 on the second.
    assert got == {(first.pk, "real", "first_pass"): 30.0, (second.pk, "real", "first_pass"): 40.0}
