"""Agreement fixtures: QA pairs verified blind by two people through the real queue, and the
studies' fixtures (``build``: an ordering study; ``verified``: verified QA pairs) for study scopes."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, set_queue_policy, submit_unit
from tests.studies.conftest import build, verified  # noqa: F401 (fixtures, re-exported)


@pytest.fixture(autouse=True)
def _jobs_unsent(jobs_unsent_without_a_worker):
    """Here, jobs are written but not sent unless the test starts a worker (``tests/conftest.py``). A
    consensus decision queues ``agreement.compute`` on commit, and the session's worker thread, alive
    once any earlier test of the process started it, ran that job while the test computed the scope
    itself: the test's ``compute`` found the scope's lock taken and stored nothing, and its reports
    lacked the consensus round (seen under two xdist workers, whose files run in another order;
    reproduced in one process by running ``test_schedule``'s worker test first)."""


def verify_blind(project, people_and_decisions):
    """Each person in turn claims every unit the queue serves them and submits a decision per
    machine QA pair (``decide(pair, index)`` gives their Decision)."""
    for person, decide in people_and_decisions:
        while (item := claim_next(project, person)) is not None:
            pairs = list(item.unit.qa_pairs.filter(origin="machine").order_by("id"))
            submit_unit(
                item.unit_id,
                person,
                idempotency_key=f"{person.pk}-{item.pk}",
                time_spent_ms=1000,
                additions=[],
                decisions=[decide(p, i) for i, p in enumerate(pairs)],
            )


def second_opinion(pair, index):
    """The second person deletes the first open pair, rewords the second's answer, keeps the rest."""
    if index == 0:
        return Decision(pair.pk, "delete", reason="vague")
    if index == 1:
        return Decision(pair.pk, "modify", question=pair.question, answer=pair.answer.replace("answer", "reply"))
    return Decision(pair.pk, "keep")


@pytest.fixture
def two_raters(project, make_unit, annotator, annotator2):
    """Three units of four QA pairs (three open, one multiple choice) verified blind by ``ann``
    (keeps all) and ``ann2`` (``second_opinion``): they agree on 6 of 12 pairs; the 3 deletes and the
    3 modifies are the pairs in dispute. Returns the units."""
    set_queue_policy(project, overlap_share=1.0, overlap_k=2, double_check_share=0)
    units = [make_unit(3) for _ in range(3)]
    # These tests send the consensus round by hand: without the after-submit hook that would queue
    # it (issue 20; tests/agreement/test_overlap_consensus.py tests the hook), so a Celery worker
    # running in the session cannot send the disagreements first.
    with without_overlap_hook():
        verify_blind(project, [(annotator, lambda p, i: Decision(p.pk, "keep")), (annotator2, second_opinion)])
    return units


@contextmanager
def without_overlap_hook():
    """Submits in this block queue no ``agreement.overlap_consensus`` job."""
    from annotator.agreement.services import overlap_submitted
    from annotator.qa.services import AFTER_SUBMIT

    at = AFTER_SUBMIT.index(overlap_submitted)
    AFTER_SUBMIT.remove(overlap_submitted)
    try:
        yield
    finally:
        AFTER_SUBMIT.insert(at, overlap_submitted)
