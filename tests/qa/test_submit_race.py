"""A retried submit racing the first (issue 19 finding): parallel submits of one unit with one
idempotency key all get the one saved result, not "nothing of yours was saved"."""

import threading

import pytest
from django.db import connection

from annotator.errors import DomainError
from annotator.qa.models import QAPair, Revision, Submission
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, set_queue_policy, submit_unit

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("overlap", [False, True])
def test_parallel_submits_with_one_key_all_get_the_one_saved_result(make_unit, annotator, project, overlap):
    if overlap:  # the unit has a second open item (a blind overlap pass): the old refusal was NotHeld
        set_queue_policy(project, overlap_share=1.0, overlap_k=2)
    make_unit()
    unit = claim_next(project, annotator).unit
    decisions = [Decision(p.pk, "keep", version=p.version) for p in unit.qa_pairs.order_by("id")]
    start = threading.Barrier(6)
    results, errors = [], []

    def submit():
        try:
            start.wait()
            results.append(
                submit_unit(
                    unit.pk,
                    annotator,
                    idempotency_key="same-key",
                    decisions=decisions,
                    additions=[],
                    time_spent_ms=None,
                )
            )
        except DomainError as exc:
            errors.append(str(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    assert sorted(r.replayed for r in results) == [False] + [True] * 5
    assert len({(r.unit_id, r.item_id, tuple(sorted(r.counts.items()))) for r in results}) == 1
    assert Submission.objects.filter(idempotency_key="same-key").count() == 1
    kept = QAPair.objects.filter(unit=unit, status="verified").count()
    assert kept == len(decisions) and Revision.objects.filter(action="keep", qa_pair__unit=unit).count() == kept
