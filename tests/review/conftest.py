"""Review fixtures: a reviewer, and units first-passed through the real queue and submit services."""

import pytest

from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, set_queue_policy, submit_unit
from tests.conftest import _member


@pytest.fixture
def reviewer(project):
    return _member(project, "rev", "reviewer")


@pytest.fixture
def researcher(project):
    return _member(project, "res", "researcher")


@pytest.fixture
def no_double_check(project):
    """No random double-check after a first pass (the project default sends 20% of units to one)."""
    set_queue_policy(project, double_check_share=0.0)


@pytest.fixture
def first_pass(project, no_double_check):
    """``first_pass(user)``: ``user`` claims the next unit and submits it: every pair kept except the
    last open-ended one, deleted as vague (make_unit's units have open pairs, then the multiple-choice
    one). Returns the unit."""

    def run(user):
        item = claim_next(project, user)
        assert item is not None and item.kind == "first_pass", item
        pairs = list(item.unit.qa_pairs.filter(status="draft").order_by("id"))
        deleted = pairs[-2]
        submit_unit(
            item.unit_id,
            user,
            idempotency_key=f"fp-{item.pk}",
            additions=[],
            time_spent_ms=None,
            decisions=[
                Decision(
                    p.pk,
                    "delete" if p is deleted else "keep",
                    reason="vague" if p is deleted else "",
                    version=p.version,
                )
                for p in pairs
            ],
        )
        return item.unit

    return run
