"""The claim's message (issue 20, M2 and M4 of the security reviews): a claim never makes a gold
copy itself; each claim that takes a unit sends ``gold.premake_for`` on commit, and a real Celery
worker on the real Redis broker makes the copy the person's next claim serves, if it draws gold.
Every other test stands the message in with the same body run in line (``premake_in_line``)."""

import pytest

from annotator.gold import services
from annotator.gold.models import Copy, Source
from annotator.qa.queue import claim_next
from annotator.qa.services import skip_unit
from tests.conftest import wait_for
from tests.gold.conftest import seed_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_claim_sends_the_message_and_a_worker_makes_the_next_claims_copy(
    real_nudges, worker, project, make_verified, make_unit, annotator
):
    make_verified(1)
    assert len(services.make_sources(project, Source.Role.GOLD, 1)) == 1
    first, _ = make_unit(), make_unit()  # the first claim's, and a real unit left behind it
    services.set_policy(project, gold_rate=0.5, seed=seed_for(project, annotator, [False, True]))
    item = claim_next(project, annotator)
    assert item.unit_id == first.pk  # a first claim is real
    copy = wait_for(
        lambda: Copy.objects.filter(user=annotator, attempt__isnull=True).first(),
        timeout=30,
        what="the worker's gold copy for the next claim",
    )
    skip_unit(first.pk, annotator, "not now")
    assert claim_next(project, annotator).unit_id == copy.unit_id  # the next claim serves it


@pytest.mark.django_db(transaction=False)  # closer than the module's mark: on-commit hooks never run
def test_without_the_message_the_next_claim_is_real_however_it_draws(
    real_nudges, project, make_verified, make_unit, annotator
):
    """No worker ran the message (this test's transaction never commits, so it is never sent): the
    claim drawing gold serves real work, and makes no copy (it used to, about 23 ms slower)."""
    make_verified(1)
    assert len(services.make_sources(project, Source.Role.GOLD, 1)) == 1
    first, second, _ = make_unit(), make_unit(), make_unit()
    services.set_policy(project, gold_rate=0.5, seed=seed_for(project, annotator, [False, True]))
    assert claim_next(project, annotator).unit_id == first.pk
    skip_unit(first.pk, annotator, "not now")
    assert claim_next(project, annotator).unit_id == second.pk  # drew gold: missed, not made here
    assert not Copy.objects.filter(user=annotator).exists()


def test_a_claim_over_the_api_sends_the_message_once_its_response_is_out(
    real_nudges, monkeypatch, project, make_verified, make_unit, annotator
):
    from rest_framework.test import APIClient

    from workers.celery import app

    make_verified(1)
    assert len(services.make_sources(project, Source.Role.GOLD, 1)) == 1
    make_unit()
    services.set_policy(project, gold_rate=0.5)
    sent = []
    monkeypatch.setattr(app, "send_task", lambda task, args, **options: sent.append((task, args)))
    client = APIClient()
    client.force_authenticate(annotator)
    assert client.post(f"/api/projects/{project.slug}/queue/next/").status_code == 200
    assert sent == [("gold.premake_for", [project.pk, annotator.pk])]
