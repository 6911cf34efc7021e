"""Submitting a unit: decisions applied with append-only revisions, retries replayed, bad input and
version conflicts refused whole, overlap passes kept as verdicts only, autosave and edits."""

import pytest

from annotator.errors import DomainError
from annotator.qa.models import Autosave, QAPair, QueueItem, Revision, Submission, Verdict
from annotator.qa.queue import claim_next
from annotator.qa.services import Addition, Decision, autosave, edit_qa_pair, set_queue_policy, submit_unit
from api.exceptions import status_of
from tests.conftest import qh


def _claim(unit, user):
    return claim_next(unit.project, user).unit


def _state(unit):
    """Everything a submit may change, to compare before and after a refused one."""
    return (
        list(QueueItem.objects.filter(unit=unit).order_by("id").values_list("status", "leased_by")),
        list(
            QAPair.objects.filter(unit=unit).order_by("id").values_list("id", "status", "question", "answer", "version")
        ),
        Revision.objects.count(),
        Submission.objects.count(),
        Verdict.objects.count(),
    )


def _decisions(unit):
    a, b, c, mc = unit.qa_pairs.order_by("id")
    return (
        a,
        b,
        c,
        mc,
        [
            Decision(a.pk, "keep", time_spent_ms=1200),
            Decision(b.pk, "modify", answer="a better answer", time_spent_ms=5300),
            Decision(c.pk, "delete", reason="vague", time_spent_ms=800),
            Decision(mc.pk, "modify", options=["pan", "cup", "lamp", "kettle"], answer_index=1),
        ],
    )


def test_it_applies_every_decision_and_addition_with_revisions(make_unit, annotator):
    unit = _claim(make_unit(), annotator)
    a, b, c, mc, decisions = _decisions(unit)

    result = submit_unit(
        unit.pk,
        annotator,
        idempotency_key="k1",
        decisions=decisions,
        additions=[Addition("scene_description", " Is the tap running? ", "no", 2.0, 5.0, 9000)],
        time_spent_ms=21000,
    )

    item = QueueItem.objects.get(unit=unit, kind="first_pass")
    assert result.as_dict() == {
        "unit_id": unit.pk,
        "item_id": item.pk,
        "kind": "first_pass",
        "status": "done",
        "replayed": False,
        "counts": {"kept": 1, "modified": 2, "deleted": 1, "added": 1},
    }
    a, b, c, mc = (QAPair.objects.get(pk=p.pk) for p in (a, b, c, mc))
    assert (a.status, a.provenance, a.version) == ("verified", "machine_kept", 2)
    assert (b.status, b.provenance, b.answer, b.question) == (
        "verified",
        "machine_modified",
        "a better answer",
        "What happens in part 1 of clip 1?",
    )
    assert (c.status, c.delete_reason, c.provenance) == ("deleted", "vague", "")
    assert (mc.options, mc.answer_index, mc.answer) == (["pan", "cup", "lamp", "kettle"], 1, "cup")
    added = QAPair.objects.get(origin="human")
    assert (added.question, added.clip_start_s, added.clip_end_s, added.provenance) == (
        "Is the tap running?",
        2.0,
        5.0,
        "human_added",
    )

    b_revs = list(
        Revision.objects.filter(qa_pair=b).values_list(
            "action", "actor_user", "actor_model", "time_spent_ms", "version"
        )
    )
    assert b_revs == [("draft", None, "templates/templates-v1", None, 1), ("modify", annotator.pk, "", 5300, 2)]
    assert Revision.objects.get(qa_pair=b, action="modify").before["answer"] == "answer 1"
    item.refresh_from_db()
    assert (item.status, item.completed_by, item.leased_by, item.time_spent_ms) == ("done", annotator, None, 21000)
    assert sorted(Verdict.objects.values_list("action", flat=True)) == ["add", "delete", "keep", "modify", "modify"]


def test_a_retried_submit_changes_nothing_the_second_time(make_unit, annotator):
    unit = _claim(make_unit(), annotator)
    *_, decisions = _decisions(unit)
    adds = [Addition("scene_description", "Q?", "A")]
    first = submit_unit(
        unit.pk, annotator, idempotency_key="same", decisions=decisions, additions=adds, time_spent_ms=10
    )
    before = _state(unit)

    again = submit_unit(
        unit.pk, annotator, idempotency_key="same", decisions=decisions, additions=adds, time_spent_ms=10
    )

    assert again.replayed is True and again.counts == first.counts
    assert _state(unit) == before
    assert QAPair.objects.filter(origin="human").count() == 1


def test_a_submit_with_errors_saves_nothing_and_says_where(make_unit, annotator):
    unit = _claim(make_unit(), annotator)
    a, b, c, mc, _ = _decisions(unit)
    before = _state(unit)
    with pytest.raises(DomainError) as err:
        submit_unit(
            unit.pk,
            annotator,
            idempotency_key="bad",
            time_spent_ms=None,
            decisions=[
                Decision(a.pk, "keep"),
                Decision(b.pk, "modify", answer="   "),
                Decision(c.pk, "delete", reason=""),
                Decision(mc.pk, "modify", options=["pan", "Pan", "lamp", "shoe"], answer_index=4),
            ],
            additions=[Addition("no_such_type", "Q?", "A")],
        )
    assert status_of(err.value) == 400
    assert err.value.errors == {
        "decisions[1].answer": "answer must not be empty",
        "decisions[2].reason": "choose a reason: meaningless, vague, duplicate, inconsistent, wrong",
        "decisions[3].options": "options must all differ",
        "decisions[3].answer_index": "answer_index must be an integer from 0 to 3",
        "added[0].qa_type": "unknown QA type 'no_such_type'",
    }
    assert _state(unit) == before


def test_every_draft_needs_a_decision(make_unit, annotator):
    unit = _claim(make_unit(), annotator)
    a, b, c, mc, decisions = _decisions(unit)
    with pytest.raises(DomainError) as err:
        submit_unit(unit.pk, annotator, idempotency_key="k", decisions=decisions[:3], additions=[], time_spent_ms=None)
    assert err.value.errors == {f"qa[{mc.pk}]": f"QA pair {mc.pk} has no decision"}


def test_a_unit_leased_to_someone_else_is_refused_with_409(make_unit, annotator, annotator2):
    unit = _claim(make_unit(), annotator)
    *_, decisions = _decisions(unit)
    before = _state(unit)
    with pytest.raises(DomainError) as err:
        submit_unit(unit.pk, annotator2, idempotency_key="k2", decisions=decisions, additions=[], time_spent_ms=None)
    assert status_of(err.value) == 409 and str(err.value) == (
        "You no longer hold this unit: your lease lapsed (no heartbeat for a while) and another annotator took it, "
        "or you never claimed it. Nothing of yours was saved on it."
    )
    assert _state(unit) == before


def test_a_done_unit_cannot_be_submitted_again_with_a_new_key(make_unit, annotator):
    unit = make_unit()
    set_queue_policy(unit.project, double_check_share=0)
    unit = _claim(unit, annotator)
    *_, decisions = _decisions(unit)
    submit_unit(unit.pk, annotator, idempotency_key="one", decisions=decisions, additions=[], time_spent_ms=None)
    with pytest.raises(match="already submitted") as err:
        submit_unit(unit.pk, annotator, idempotency_key="two", decisions=decisions, additions=[], time_spent_ms=None)
    assert status_of(err.value) == 409
    assert QueueItem.objects.get(unit=unit, kind="first_pass").status == "done"


def test_revisions_are_append_only(make_unit):
    revision = Revision.objects.filter(qa_pair__unit=make_unit()).first()
    revision.after = {"question": "rewritten history"}
    with pytest.raises(Exception, match="append-only"):
        revision.save()


def test_a_changed_qa_pair_is_a_conflict_not_an_overwrite(make_unit, annotator, admin_user):
    unit = _claim(make_unit(), annotator)
    a, b, c, mc, _ = _decisions(unit)
    edit_qa_pair(b.pk, admin_user, version=1, answer="fixed by the admin")  # while the annotator works
    before = _state(unit)
    decisions = [
        Decision(a.pk, "keep", version=1),
        Decision(b.pk, "modify", answer="the annotator's answer", version=1),
        Decision(c.pk, "keep", version=1),
        Decision(mc.pk, "keep", version=1),
    ]
    with pytest.raises(DomainError) as err:
        submit_unit(unit.pk, annotator, idempotency_key="c1", decisions=decisions, additions=[], time_spent_ms=None)
    assert status_of(err.value) == 409
    (conflict,) = err.value.conflicts
    assert (conflict["qa_id"], conflict["your_version"], conflict["version"]) == (b.pk, 1, 2)
    assert conflict["current"]["answer"] == "fixed by the admin"
    assert _state(unit) == before

    decisions[1] = Decision(b.pk, "modify", answer="the annotator's answer", version=2)  # seen, and overruled
    submit_unit(unit.pk, annotator, idempotency_key="c1", decisions=decisions, additions=[], time_spent_ms=None)
    b.refresh_from_db()
    assert (b.answer, b.version) == ("the annotator's answer", 3)
    assert list(b.revisions.values_list("action", flat=True)) == ["draft", "edit", "modify"]


def test_an_edit_naming_an_old_version_is_refused(make_unit, admin_user):
    pair = make_unit().qa_pairs.first()
    edit_qa_pair(pair.pk, admin_user, version=1, question="Reworded?")
    with pytest.raises(DomainError) as err:
        edit_qa_pair(pair.pk, admin_user, version=1, question="Another rewording?")
    assert status_of(err.value) == 409
    pair.refresh_from_db()
    assert (pair.question, pair.version) == ("Reworded?", 2)


def test_an_overlap_pass_records_verdicts_and_leaves_the_qa_pairs_alone(make_unit, project, annotator, annotator2):
    set_queue_policy(project, overlap_share=1.0, overlap_k=2, double_check_share=0)
    unit = make_unit(n_open=1)
    first = claim_next(project, annotator)
    overlap = claim_next(project, annotator2)
    assert overlap.kind == "overlap"
    a, mc = unit.qa_pairs.order_by("id")
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="f",
        additions=[],
        time_spent_ms=None,
        decisions=[Decision(a.pk, "modify", answer="first pass answer"), Decision(mc.pk, "keep")],
    )
    # The overlap annotator saw the drafts as drafted; their verdicts do not touch the QA pairs.
    submit_unit(
        unit.pk,
        annotator2,
        idempotency_key="o",
        time_spent_ms=None,
        decisions=[Decision(a.pk, "delete", reason="vague"), Decision(mc.pk, "modify", answer_index=2)],
        additions=[Addition("scene_description", "Is it raining?", "no")],
    )
    a.refresh_from_db()
    mc.refresh_from_db()
    assert (a.status, a.answer, mc.answer_index) == ("verified", "first pass answer", 1)
    assert QAPair.objects.filter(unit=unit).count() == 2
    verdicts = {(v.user_id, v.action, v.qa_pair_id) for v in Verdict.objects.all()}
    assert verdicts == {
        (annotator.pk, "modify", a.pk),
        (annotator.pk, "keep", mc.pk),
        (annotator2.pk, "delete", a.pk),
        (annotator2.pk, "modify", mc.pk),
        (annotator2.pk, "add", None),
    }
    assert Verdict.objects.get(user=annotator2, qa_pair=mc).after["answer"] == "lamp"  # options[2]
    assert first.pk != overlap.pk


def test_inconsistent_is_a_reason_only_for_day_night_pairs(make_unit, annotator):
    unit = _claim(make_unit(n_open=0), annotator)
    (mc,) = unit.qa_pairs.all()
    with pytest.raises(DomainError) as err:
        submit_unit(
            unit.pk,
            annotator,
            idempotency_key="i",
            time_spent_ms=None,
            additions=[],
            decisions=[Decision(mc.pk, "delete", reason="inconsistent")],
        )
    assert err.value.errors == {
        "decisions[0].reason": "inconsistent across day and night applies only to a day-night pair"
    }


def test_autosave_keeps_the_newest_state_and_goes_with_the_submit(make_unit, annotator, annotator2):
    unit = _claim(make_unit(n_open=0), annotator)
    autosave(unit.pk, annotator, {"typed": "second"}, client_saved_at_ms=2000)
    autosave(unit.pk, annotator, {"typed": "first, arriving late"}, client_saved_at_ms=1000)
    assert Autosave.objects.get().state == {"typed": "second"}
    with pytest.raises(DomainError) as err:
        autosave(unit.pk, annotator2, {"typed": "not mine"}, client_saved_at_ms=3000)
    assert status_of(err.value) == 409
    (mc,) = unit.qa_pairs.all()
    submit_unit(
        unit.pk, annotator, idempotency_key="s", decisions=[Decision(mc.pk, "keep")], additions=[], time_spent_ms=5
    )
    assert Autosave.objects.count() == 0


def test_an_overlap_claimant_sees_the_drafts_not_the_first_pass(make_unit, project, annotator, annotator2):
    from annotator.qa.selectors import unit_payload

    set_queue_policy(project, overlap_share=1.0, overlap_k=2, double_check_share=0)
    unit = make_unit(n_open=1)
    claim_next(project, annotator)
    a, mc = unit.qa_pairs.order_by("id")
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="f",
        additions=[Addition("scene_description", "Added?", "yes")],
        time_spent_ms=None,
        decisions=[Decision(a.pk, "modify", answer="first pass answer"), Decision(mc.pk, "keep")],
    )
    payload = unit_payload(claim_next(project, annotator2), annotator2)
    assert payload["queue"]["kind"] == "overlap"
    assert [(q["id"], q["answer"]) for q in payload["qa_pairs"]] == [(qh(a), "answer 0"), (qh(mc), "cup")]
    assert payload["qa_pairs"][1]["options"] == ["pan", "cup", "lamp", "shoe"]
    assert "first pass answer" not in str(payload) and "Added?" not in str(payload)
