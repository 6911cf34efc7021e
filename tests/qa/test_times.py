"""Client-reported times are bounded by what the server knows: the wall time since the person's
claim plus ``QUEUE_TIME_SLACK_S``. Beyond it a submit or an autosave is refused whole, per field."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotator.errors import Invalid
from annotator.qa.models import Autosave, QAPair, QueueItem, Revision, Submission, Verdict
from annotator.qa.queue import claim_next
from annotator.qa.selectors import progress
from annotator.qa.services import Addition, Decision, autosave, set_queue_policy, submit_unit
from tests.conftest import qh, uh


@pytest.fixture
def held(make_unit, project, annotator, settings):
    """ann holds a unit (1 open draft + 1 multiple-choice) claimed 100 s ago; slack 20 s: bound 120 s."""
    settings.QUEUE_TIME_SLACK_S = 20
    set_queue_policy(project, double_check_share=0)
    item = claim_next(make_unit(n_open=1).project, annotator)
    QueueItem.objects.filter(pk=item.pk).update(claimed_at=timezone.now() - timedelta(seconds=100))
    return item


def _state(unit):
    return (
        list(QueueItem.objects.filter(unit=unit).values_list("status", "time_spent_ms")),
        list(QAPair.objects.filter(unit=unit).order_by("id").values_list("status", "version")),
        Revision.objects.count(),
        Submission.objects.count(),
        Verdict.objects.count(),
        list(Autosave.objects.values_list("state", "time_spent_ms")),
    )


def _too_long(seconds: str) -> re.Pattern:
    """The refusal for ``seconds``; the bound is 120 s plus the seconds the test itself took."""
    return re.compile(
        re.escape(f"{seconds} s is more time than has passed since you took this unit (at most ") + r"12\d s\)"
    )


def _matches(errors: dict, expected: dict) -> bool:
    return errors.keys() == expected.keys() and all(
        e.fullmatch(errors[k]) if isinstance(e, re.Pattern) else e == errors[k] for k, e in expected.items()
    )


def _submit(item, user, *, total, first=None, second=None, added=None):
    a, b = item.unit.qa_pairs.order_by("id")
    return submit_unit(
        item.unit_id,
        user,
        idempotency_key="t",
        time_spent_ms=total,
        decisions=[Decision(a.pk, "keep", time_spent_ms=first), Decision(b.pk, "keep", time_spent_ms=second)],
        additions=[Addition("scene_description", "Is it dark?", "no", time_spent_ms=added)]
        if added is not None
        else [],
    )


def test_times_within_the_claims_wall_time_are_kept(held, annotator):
    _submit(held, annotator, total=115000, first=60000, second=50000, added=5000)
    assert QueueItem.objects.get(pk=held.pk).time_spent_ms == 115000
    assert sorted(Verdict.objects.values_list("time_spent_ms", flat=True)) == [5000, 50000, 60000]


def test_a_time_of_three_billion_ms_is_refused_whole_with_per_field_errors(held, annotator):
    before = _state(held.unit)
    with pytest.raises(Invalid) as err:
        _submit(held, annotator, total=3_000_000_000, first=130000, second=1000, added=-1)
    assert _matches(
        err.value.errors,
        {
            "time_spent_ms": _too_long("3,000,000"),
            "decisions[0].time_spent_ms": _too_long("130"),
            "added[0].time_spent_ms": "a time must be a whole number of milliseconds, 0 or more",
        },
    ), err.value.errors
    assert _state(held.unit) == before


def test_an_autosave_time_beyond_the_bound_is_refused_and_changes_nothing(held, annotator):
    autosave(held.unit_id, annotator, {"v": 1}, client_saved_at_ms=1, time_spent_ms=100000)
    before = _state(held.unit)
    with pytest.raises(Invalid) as err:
        autosave(held.unit_id, annotator, {"v": 2}, client_saved_at_ms=2, time_spent_ms=125000)
    assert _matches(err.value.errors, {"time_spent_ms": _too_long("125")}), err.value.errors
    assert (
        _state(held.unit) == before == ([("open", None)], [("draft", 1), ("draft", 1)], 2, 0, 0, [({"v": 1}, 100000)])
    )


def test_a_long_claim_stores_a_64_bit_time_and_progress_stays_positive(held, annotator, project):
    QueueItem.objects.filter(pk=held.pk).update(claimed_at=timezone.now() - timedelta(days=40))
    _submit(held, annotator, total=3_000_000_000)
    assert QueueItem.objects.get(pk=held.pk).time_spent_ms == 3_000_000_000
    p = progress(project)
    assert (p["by_annotator"][0]["time_ms"], p["by_video"][0]["time_ms"]) == (3_000_000_000, 3_000_000_000)


def test_the_api_answers_400_with_the_field_and_saves_nothing(held, annotator):
    client = APIClient()
    client.force_authenticate(annotator)
    before = _state(held.unit)
    a, b = held.unit.qa_pairs.order_by("id")
    decisions = [{"qa_id": qh(a), "action": "keep"}, {"qa_id": qh(b), "action": "keep", "time_spent_ms": 7_200_000}]
    res = client.post(
        f"/api/units/{uh(held.unit_id)}/submit/", {"idempotency_key": "api-t", "decisions": decisions}, format="json"
    )
    assert res.status_code == 400
    assert _matches(res.json()["errors"], {"decisions[1].time_spent_ms": _too_long("7,200")}), res.json()
    res = client.put(
        f"/api/units/{uh(held.unit_id)}/autosave/",
        {"state": {}, "client_saved_at_ms": 1, "time_spent_ms": 7_200_000},
        format="json",
    )
    assert res.status_code == 400
    assert _matches(res.json()["errors"], {"time_spent_ms": _too_long("7,200")}), res.json()
    for url, method, body in (
        (
            f"/api/units/{uh(held.unit_id)}/submit/",
            "post",
            {"idempotency_key": "api-3e9", "decisions": decisions[:1], "time_spent_ms": 3_000_000_000},
        ),
        (
            f"/api/units/{uh(held.unit_id)}/autosave/",
            "put",
            {"state": {}, "client_saved_at_ms": 1, "time_spent_ms": 3_000_000_000},
        ),
    ):
        assert getattr(client, method)(url, body, format="json").status_code == 400
    assert _state(held.unit) == before


def test_a_person_who_lost_the_unit_and_claims_it_again_may_report_their_earlier_time(held, annotator, annotator2):
    from annotator.qa.services import skip_unit

    autosave(held.unit_id, annotator, {"v": 1}, client_saved_at_ms=1, time_spent_ms=90000)
    QueueItem.objects.filter(pk=held.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert claim_next(held.project, annotator2).pk == held.pk  # the lease lapsed: ann2 takes it
    skip_unit(held.unit_id, annotator2, "cannot see the video")
    assert claim_next(held.project, annotator).pk == held.pk  # ann takes it back; claimed_at starts again

    _submit(held, annotator, total=95000)  # the page restored 90 s and ann worked 5 s more

    assert QueueItem.objects.get(pk=held.pk).time_spent_ms == 95000
