"""Issue 20, section 4: an overlap pass's edits are not dropped. Where the blind passes disagree on
a QA pair, the pair goes to the consensus round, and the outcome is exported with the pair."""

from __future__ import annotations

import pyarrow as pa

from annotator.agreement import services
from annotator.agreement.models import ConsensusItem
from annotator.core.models import Job
from annotator.qa.exports.rows import iter_rows
from annotator.qa.exports.schema import row_schema
from annotator.qa.queue import claim_next
from annotator.qa.selectors import pseudonym
from annotator.qa.services import Decision, set_queue_policy, submit_unit
from tests.agreement.conftest import second_opinion, verify_blind


def test_disagreements_of_blind_passes_go_to_consensus_and_the_outcome_is_exported(
    project, make_unit, annotator, annotator2, admin_user
):
    # As the two_raters fixture, with the after-submit hook on.
    set_queue_policy(project, overlap_share=1.0, overlap_k=2, double_check_share=0)
    units = [make_unit(3) for _ in range(3)]
    verify_blind(project, [(annotator, lambda p, i: Decision(p.pk, "keep")), (annotator2, second_opinion)])
    # Both passes of each of the 3 units queued the check once (a queued job of one key is not queued again).
    jobs = Job.objects.filter(task="agreement.overlap_consensus")
    assert sorted(j.args[0] for j in jobs) == sorted(u.pk for u in units)
    two_raters = units
    sent = [ci for unit in two_raters for ci in services.send_overlap_disagreements(unit.pk)]
    # Per unit: the second person deleted one pair and reworded another that the first kept.
    assert len(sent) == 6
    disputed = {int(ci.item) for ci in sent}
    assert all(ci.scope.key == "verification" and ci.subset == "" and ci.level == "nominal" for ci in sent)
    names = {pseudonym(annotator.pk), pseudonym(annotator2.pk)}
    assert all({a["rater"] for a in ci.answers} == names for ci in sent)
    # A second check sends nothing new.
    assert services.send_overlap_disagreements(two_raters[0].pk) == []

    deleted = next(ci for ci in sent if "delete" in {a["value"] for a in ci.answers})
    services.record_consensus(deleted.pk, project, admin_user, consensus="delete", revised={}, note="too vague")

    rows = {r["id"]: r for r in iter_rows(project)}
    # One pass kept it and the other deleted it; the reviewer agreed to delete.
    assert rows[int(deleted.item)]["consensus"] == {
        "status": "reconciled",
        "decision": "delete",
        "keep": 1,
        "modify": 0,
        "delete": 1,
    }
    still_open = disputed - {int(deleted.item)}
    assert {rows[q]["consensus"]["status"] for q in still_open if q in rows} == {"open"}
    agreed = set(rows) - disputed
    assert agreed and all(
        rows[q]["consensus"] == {"status": "", "decision": "", "keep": 0, "modify": 0, "delete": 0} for q in agreed
    )
    # The field is in the explicit schema: pyarrow takes the rows as they are.
    table = pa.Table.from_pylist(list(rows.values()), schema=row_schema())
    assert table.schema.field("consensus").type.names == ["status", "decision", "keep", "modify", "delete"]


def test_a_unit_without_overlap_queues_no_check(project, make_unit, annotator):
    set_queue_policy(project, overlap_share=0.0, double_check_share=0)
    unit = make_unit(1)
    item = claim_next(project, annotator)
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="k",
        time_spent_ms=1000,
        additions=[],
        decisions=[Decision(p.pk, "keep") for p in item.unit.qa_pairs.all()],
    )
    assert not Job.objects.filter(task="agreement.overlap_consensus").exists()
    assert not ConsensusItem.objects.exists()
