"""The schedule (Celery beat's ``agreement.schedule``): a scope is computed by a real worker once
after new responses, and not again without them."""

import pytest

from annotator.agreement import services
from annotator.agreement.models import Computation
from annotator.qa.services import Decision
from tests.agreement.conftest import verify_blind
from tests.conftest import wait_for


@pytest.mark.django_db(transaction=True)
def test_a_scope_is_recomputed_once_after_new_responses_and_not_again(
    worker, project, make_unit, annotator, annotator2, settings
):
    from annotator.qa.services import set_queue_policy

    settings.AGREEMENT_RESAMPLES = 20
    set_queue_policy(project, overlap_share=1.0, overlap_k=2, double_check_share=0)

    def keep(p, i):
        return Decision(p.pk, "keep")

    make_unit(1)
    verify_blind(project, [(annotator, keep), (annotator2, keep)])
    services.import_ratings(
        project,
        "sheets",
        "nominal",
        [{"item": "a", "rater": "x", "value": "yes"}, {"item": "a", "rater": "y", "value": "no"}],
    )

    def done(n):
        return wait_for(
            lambda: Computation.objects.count() >= n and Computation.objects.count(),
            timeout=120,
            what=f"{n} computations",
        )

    assert len(services.schedule()) == 2  # both scopes are new
    assert done(2) == 2
    assert services.schedule() == []  # nothing new: nothing queued
    assert Computation.objects.count() == 2

    make_unit(1)
    verify_blind(project, [(annotator, keep), (annotator2, keep)])
    queued = services.schedule()
    assert len(queued) == 1  # only the verification scope has new responses
    assert done(3) == 3
    assert services.schedule() == []
    assert sorted(Computation.objects.values_list("scope__key", flat=True)) == [
        "ratings:sheets",
        "verification",
        "verification",
    ]
