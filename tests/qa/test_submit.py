"""Submitting a unit: decisions applied with append-only revisions, retries replayed, bad input refused whole."""

import pytest

from annotator.qa.models import QAPair, Revision, Submission, WorkUnit
from annotator.qa.queue import claim_next
from annotator.qa.services import Addition, Decision, SubmitError, submit_unit


def _state(unit):
    """Everything a submit may change, to compare before and after a refused one."""
    unit.refresh_from_db()
    return (
        unit.status, unit.leased_by_id,
        list(QAPair.objects.filter(unit=unit).order_by("id").values_list("id", "status", "question", "answer", "version")),
        Revision.objects.count(), Submission.objects.count(),
    )


def _decisions(unit):
    a, b, c, mc = unit.qa_pairs.order_by("id")
    return a, b, c, mc, [
        Decision(a.pk, "keep", time_spent_ms=1200),
        Decision(b.pk, "modify", answer="a better answer", time_spent_ms=5300),
        Decision(c.pk, "delete", reason="vague", time_spent_ms=800),
        Decision(mc.pk, "modify", options=["pan", "cup", "lamp", "kettle"], answer_index=1),
    ]


def test_it_applies_every_decision_and_addition_with_revisions(make_unit, annotator):
    unit = claim_next(make_unit().project, annotator)
    a, b, c, mc, decisions = _decisions(unit)

    result = submit_unit(unit.pk, annotator, idempotency_key="k1", decisions=decisions,
                         additions=[Addition("scene_description", " Is the tap running? ", "no", 2.0, 5.0, 9000)],
                         time_spent_ms=21000)

    assert result.as_dict() == {"unit_id": unit.pk, "status": "done", "replayed": False,
                                "counts": {"kept": 1, "modified": 2, "deleted": 1, "added": 1}}
    a, b, c, mc = (QAPair.objects.get(pk=p.pk) for p in (a, b, c, mc))
    assert (a.status, a.provenance, a.version) == ("verified", "machine_kept", 2)
    assert (b.status, b.provenance, b.answer, b.question) == ("verified", "machine_modified", "a better answer", "What happens in part 1 of clip 1?")
    assert (c.status, c.delete_reason, c.provenance) == ("deleted", "vague", "")
    assert (mc.options, mc.answer_index, mc.answer) == (["pan", "cup", "lamp", "kettle"], 1, "cup")
    added = QAPair.objects.get(origin="human")
    assert (added.question, added.clip_start_s, added.clip_end_s, added.provenance) == ("Is the tap running?", 2.0, 5.0, "human_added")

    b_revs = list(Revision.objects.filter(qa_pair=b).values_list("action", "actor_user", "actor_model", "time_spent_ms"))
    assert b_revs == [("draft", None, "templates/templates-v1", None), ("modify", annotator.pk, "", 5300)]
    assert Revision.objects.get(qa_pair=b, action="modify").before["answer"] == "answer 1"
    unit.refresh_from_db()
    assert (unit.status, unit.completed_by, unit.leased_by, unit.time_spent_ms) == ("done", annotator, None, 21000)


def test_a_retried_submit_changes_nothing_the_second_time(make_unit, annotator):
    unit = claim_next(make_unit().project, annotator)
    *_, decisions = _decisions(unit)
    adds = [Addition("scene_description", "Q?", "A")]
    first = submit_unit(unit.pk, annotator, idempotency_key="same", decisions=decisions, additions=adds, time_spent_ms=10)
    before = _state(unit)

    again = submit_unit(unit.pk, annotator, idempotency_key="same", decisions=decisions, additions=adds, time_spent_ms=10)

    assert again.replayed is True and again.counts == first.counts
    assert _state(unit) == before
    assert QAPair.objects.filter(origin="human").count() == 1


def test_a_submit_with_errors_saves_nothing_and_says_where(make_unit, annotator):
    unit = claim_next(make_unit().project, annotator)
    a, b, c, mc, _ = _decisions(unit)
    before = _state(unit)
    with pytest.raises(SubmitError) as err:
        submit_unit(unit.pk, annotator, idempotency_key="bad", time_spent_ms=None, decisions=[
            Decision(a.pk, "keep"),
            Decision(b.pk, "modify", answer="   "),
            Decision(c.pk, "delete", reason=""),
            Decision(mc.pk, "modify", options=["pan", "Pan", "lamp", "shoe"], answer_index=4),
        ], additions=[Addition("no_such_type", "Q?", "A")])
    assert err.value.status == 400
    assert err.value.errors == {
        "decisions[1].answer": "answer must not be empty",
        "decisions[2].reason": "choose a reason: meaningless, vague, duplicate, inconsistent, wrong",
        "decisions[3].options": "options must all differ",
        "decisions[3].answer_index": "answer_index must be an integer from 0 to 3",
        "added[0].qa_type": "unknown QA type 'no_such_type'",
    }
    assert _state(unit) == before


def test_every_draft_needs_a_decision(make_unit, annotator):
    unit = claim_next(make_unit().project, annotator)
    a, b, c, mc, decisions = _decisions(unit)
    with pytest.raises(SubmitError) as err:
        submit_unit(unit.pk, annotator, idempotency_key="k", decisions=decisions[:3], additions=[], time_spent_ms=None)
    assert err.value.errors == {f"qa[{mc.pk}]": f"QA pair {mc.pk} has no decision"}


def test_a_unit_leased_to_someone_else_is_refused_with_409(make_unit, annotator, annotator2):
    unit = claim_next(make_unit().project, annotator)
    *_, decisions = _decisions(unit)
    before = _state(unit)
    with pytest.raises(SubmitError) as err:
        submit_unit(unit.pk, annotator2, idempotency_key="k2", decisions=decisions, additions=[], time_spent_ms=None)
    assert (err.value.status, str(err.value)) == (409, "this unit is leased to another annotator")
    assert _state(unit) == before


def test_a_done_unit_cannot_be_submitted_again_with_a_new_key(make_unit, annotator):
    unit = claim_next(make_unit().project, annotator)
    *_, decisions = _decisions(unit)
    submit_unit(unit.pk, annotator, idempotency_key="one", decisions=decisions, additions=[], time_spent_ms=None)
    with pytest.raises(SubmitError, match="already submitted") as err:
        submit_unit(unit.pk, annotator, idempotency_key="two", decisions=decisions, additions=[], time_spent_ms=None)
    assert err.value.status == 409
    assert WorkUnit.objects.get(pk=unit.pk).status == "done"


def test_revisions_are_append_only(make_unit):
    revision = Revision.objects.filter(qa_pair__unit=make_unit()).first()
    revision.after = {"question": "rewritten history"}
    with pytest.raises(Exception, match="append-only"):
        revision.save()
