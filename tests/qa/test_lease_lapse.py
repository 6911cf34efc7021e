"""A lease that lapses loses nothing: the holder who comes back keeps the unit if nobody took it; if
someone did, a first pass or double-check carries their saved work over to the new holder (named),
a blind overlap pass keeps it for the admins only, and their time stays credited to them."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotator.errors import NotHeld
from annotator.projects.services import ensure_member
from annotator.qa import queue
from annotator.qa.models import Autosave, QueueItem
from annotator.qa.queue import claim_next
from annotator.qa.selectors import progress, unit_history, unit_payload
from annotator.qa.services import Decision, autosave, set_queue_policy, submit_unit

STATE = {
    "key": "a-key",
    "timeMs": 90000,
    "items": [
        {
            "kind": "draft",
            "qaId": None,
            "version": 1,
            "decision": {"action": "modify", "question": "Q?", "answer": "the first holder's answer"},
            "ms": 40000,
        },
        {
            "kind": "added",
            "qaId": None,
            "version": None,
            "decision": {"qa_type": "scene_description", "question": "Is it raining?", "answer": "no"},
            "ms": 20000,
        },
    ],
}


def _state_for(unit):
    state = {**STATE, "items": [dict(it) for it in STATE["items"]]}
    state["items"][0]["qaId"] = unit.qa_pairs.order_by("id").first().pk
    return state


def _claimed_minutes_ago(item, minutes):
    QueueItem.objects.filter(pk=item.pk).update(claimed_at=timezone.now() - timedelta(minutes=minutes))


def _lapse(item):
    QueueItem.objects.filter(pk=item.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def _keep_all(item, user, key, time_spent_ms=1000):
    return submit_unit(
        item.unit_id,
        user,
        idempotency_key=key,
        time_spent_ms=time_spent_ms,
        additions=[],
        decisions=[
            Decision(p.pk, "keep")
            for p in queue.QueueItem.objects.get(pk=item.pk).unit.qa_pairs.filter(
                **(
                    {"origin": "machine"}
                    if item.kind == "overlap"
                    else {"status": "verified" if item.kind == "double_check" else "draft"}
                )
            )
        ],
    )


def _item_held_by(user, kind, make_unit, project):
    """Get ``user`` holding a pass of ``kind`` on a fresh unit (a third person does the first pass
    of a double-check, or holds the first pass beside an overlap)."""
    other = ensure_member("ann3", role="annotator", project=project)[0]
    if kind == "first_pass":
        set_queue_policy(project, double_check_share=0, overlap_share=0)
        make_unit(n_open=1)
        return claim_next(project, user)
    if kind == "double_check":
        set_queue_policy(project, double_check_share=1.0, overlap_share=0)
        make_unit(n_open=1)
        _keep_all(claim_next(project, other), other, "first")
        return claim_next(project, user)
    set_queue_policy(project, double_check_share=0, overlap_share=1.0, overlap_k=2)
    make_unit(n_open=1)
    assert claim_next(project, other).kind == "first_pass"
    return claim_next(project, user)


def test_a_holder_back_after_a_lapse_nobody_took_gets_heartbeat_autosave_and_submit(make_unit, project, annotator):
    set_queue_policy(project, double_check_share=0)
    item = claim_next(make_unit(n_open=1).project, annotator)
    _claimed_minutes_ago(item, 10)
    _lapse(item)

    assert queue.renew(item.unit_id, annotator).pk == item.pk
    _lapse(item)
    assert autosave(item.unit_id, annotator, _state_for(item.unit), client_saved_at_ms=1, time_spent_ms=9 * 60000) == (
        item.pk
    )
    assert Autosave.objects.get(item=item, user=annotator).time_spent_ms == 540000
    _lapse(item)
    result = _keep_all(
        item, annotator, "back", time_spent_ms=9 * 60000 + 30000
    )  # the sleep counts: 10 min since the claim
    assert result.counts == {"kept": 2, "modified": 0, "deleted": 0, "added": 0}
    done = QueueItem.objects.get(pk=item.pk)
    assert (done.status, done.completed_by, done.time_spent_ms) == ("done", annotator, 570000)
    assert Autosave.objects.count() == 0


@pytest.mark.parametrize("kind", ["first_pass", "double_check"])
def test_a_takeover_carries_the_first_holders_work_over_and_keeps_their_time(
    kind, make_unit, project, annotator, annotator2
):
    a_item = _item_held_by(annotator, kind, make_unit, project)
    assert a_item.kind == kind
    _claimed_minutes_ago(a_item, 5)
    state = _state_for(a_item.unit)
    autosave(a_item.unit_id, annotator, state, client_saved_at_ms=111, time_spent_ms=90000)
    _lapse(a_item)

    b_item = claim_next(project, annotator2)
    assert b_item.pk == a_item.pk and b_item.leased_by == annotator2
    payload = unit_payload(b_item, annotator2)
    saved = Autosave.objects.get(user=annotator)
    assert payload["autosave"] is None
    assert payload["carried"] == {
        "state": state,
        "client_saved_at_ms": 111,
        "username": "ann",
        "saved_at": saved.updated_at.isoformat(),
        "time_spent_ms": 90000,
    }

    at = timezone.localtime(saved.updated_at).strftime("%H:%M %Z")
    message = (
        f"Your lease on this unit lapsed (no heartbeat for a while) and another annotator took it. Your work saved "
        f"at {at} is kept. Your work was passed on to them, so they continue from where you left off. "
        f"Your 1.5 min on it stay credited to you."
    )
    for attempt in (
        lambda: queue.renew(a_item.unit_id, annotator),
        lambda: autosave(a_item.unit_id, annotator, {"newer": True}, client_saved_at_ms=999, time_spent_ms=1),
        lambda: _keep_all(a_item, annotator, "a-late"),
    ):
        with pytest.raises(NotHeld) as err:
            attempt()
        assert str(err.value) == message
    assert Autosave.objects.get(user=annotator).state == state  # the refused autosave changed nothing

    _keep_all(b_item, annotator2, "b", time_spent_ms=30000)
    kept = Autosave.objects.get(user=annotator)  # B's submit did not delete A's work
    assert (kept.item_id, kept.state, kept.time_spent_ms) == (a_item.pk, state, 90000)

    p = progress(project)
    times = {r["username"]: (r["passes"], r["time_ms"], r["unfinished_ms"]) for r in p["by_annotator"]}
    assert times["ann"] == (0, 90000, 90000) and times["ann2"] == (1, 30000, 0)
    video = next(v for v in p["by_video"] if v["video_id"] == a_item.unit.video_id)
    first_pass_ms = 1000 if kind == "double_check" else 0
    assert (video["time_ms"], video["unfinished_ms"]) == (90000 + 30000 + first_pass_ms, 90000)
    assert [(k["unit_id"], k["username"], k["kind"]) for k in p["kept_work"]] == [(a_item.unit_id, "ann", kind)]


def test_an_overlap_pass_never_carries_work_over_and_the_admins_see_it_on_the_unit(
    make_unit, project, annotator, annotator2, admin_user
):
    a_item = _item_held_by(annotator, "overlap", make_unit, project)
    assert a_item.kind == "overlap"
    state = _state_for(a_item.unit)
    autosave(a_item.unit_id, annotator, state, client_saved_at_ms=5, time_spent_ms=45000)
    _lapse(a_item)

    b_item = claim_next(project, annotator2)
    assert b_item.pk == a_item.pk
    payload = unit_payload(b_item, annotator2)
    assert (payload["autosave"], payload["carried"]) == (None, None)
    with pytest.raises(NotHeld) as err:
        queue.renew(a_item.unit_id, annotator)
    assert (
        "This is a blind overlap pass, so your work was not passed on: it is kept, and the project's admins can "
        "see it on the unit's history. Your 0.8 min on it stay credited to you." in str(err.value)
    )

    _keep_all(b_item, annotator2, "b")
    (work,) = unit_history(a_item.unit)["work"]
    first = a_item.unit.qa_pairs.order_by("id").first()
    assert {k: work[k] for k in ("username", "kind", "kept", "carried", "time_spent_ms")} == {
        "username": "ann",
        "kind": "overlap",
        "kept": True,
        "carried": False,
        "time_spent_ms": 45000,
    }
    assert work["state"] == {
        "raw": None,
        "items": [
            {
                "what": f"QA {first.pk} “{first.question}”: modify",
                "details": ["question: Q?", "answer: the first holder's answer"],
                "time_s": 40.0,
            },
            {
                "what": "added a QA pair (scene_description)",
                "details": ["question: Is it raining?", "answer: no"],
                "time_s": 20.0,
            },
        ],
    }

    admin = Client()
    admin.force_login(admin_user)
    html = admin.get(f"/projects/{project.slug}/units/{a_item.unit_id}/").content.decode()
    assert 'data-user="ann" data-kept="yes"' in html and "not carried over (blind pass)" in html
    assert "the first holder&#x27;s answer" in html and "0.8 min on it" in html
    progress_html = admin.get(f"/projects/{project.slug}/progress/").content.decode()
    assert f'href="/projects/{project.slug}/units/{a_item.unit_id}/"' in progress_html
    qa_html = admin.get(f"/projects/{project.slug}/qa/{first.pk}/").content.decode()
    assert f'href="/projects/{project.slug}/units/{a_item.unit_id}/" id="unit-link"' in qa_html
    assert (
        admin.get(f"/projects/{project.slug}/progress/?unit={a_item.unit_id}").url
        == f"/projects/{project.slug}/units/{a_item.unit_id}/"
    )

    annotator_client = Client()
    annotator_client.force_login(annotator)
    assert annotator_client.get(f"/projects/{project.slug}/units/{a_item.unit_id}/").status_code == 403


def test_state_the_page_did_not_write_is_shown_raw(make_unit, project, annotator):
    item = claim_next(make_unit(n_open=1).project, annotator)
    autosave(item.unit_id, annotator, {"anything": ["goes", 1]}, client_saved_at_ms=1)
    (work,) = unit_history(item.unit)["work"]
    assert (work["kept"], work["state"]) == (False, {"items": [], "raw": '{"anything": ["goes", 1]}'})
