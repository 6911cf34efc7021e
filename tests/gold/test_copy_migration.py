"""Migration ``gold.0003`` on a database that already holds a person's gold copy of one source made
twice (premake and a claim at the same moment, before the constraint ``gold_copy_once_per_person``
existed; issue 20, M3 of the security review). Without its data step, the constraint could not be
added and the migration failed (IntegrityError, seen). With it: one copy row names the person (the
one served first), a copy never served is never served, and nothing a person saw or did is lost."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotator.gold import services
from annotator.gold.models import Copy, Source
from annotator.qa.models import QAPair, QueueItem, Revision
from tests.migrating import at_state

pytestmark = pytest.mark.django_db(transaction=True)


def _copy_for(source: Source, person, *, served_at=None) -> Copy:
    copy = services.make_copy(source, user=person, kind=QueueItem.Kind.FIRST_PASS)
    if served_at is not None:  # claimed (and let go) at that moment
        QueueItem.objects.filter(unit_id=copy.unit_id).update(claimed_at=served_at)
    return copy


def test_a_person_s_copies_made_twice_keep_one_row_naming_them_and_lose_nothing_they_saw(
    project, make_verified, annotator, django_user_model
):
    make_verified(2)
    first, second = services.make_sources(project, Source.Role.GOLD, 2)
    other = django_user_model.objects.create_user("other", password="x")
    now = timezone.now()
    with at_state([("gold", "0002_pause_delay")]):
        # Source one: three copies for the person; the second made was served first.
        a = _copy_for(first, annotator, served_at=now)
        b = _copy_for(first, annotator, served_at=now - timedelta(minutes=5))
        c = _copy_for(first, annotator)
        # Source two: two copies, neither served; and another person's one copy of it.
        d = _copy_for(second, annotator)
        e = _copy_for(second, annotator)
        f = _copy_for(second, other)
        pairs, revisions = QAPair.objects.count(), Revision.objects.count()
    # at_state migrated forward on leaving: the data step ran, then the constraint was added.
    copies = Copy.objects.in_bulk([x.pk for x in (a, b, c, d, e, f)])
    assert {k: v.user_id for k, v in copies.items()} == {
        a.pk: None,
        b.pk: annotator.pk,
        c.pk: None,  # b was served first
        d.pk: annotator.pk,
        e.pk: None,  # neither served: the older one is kept
        f.pk: other.pk,
    }
    # The served copies keep their queue items; the never-served extras have none left to serve.
    items = dict(
        QueueItem.objects.filter(unit_id__in=[x.unit_id for x in (a, b, c, d, e, f)]).values_list(
            "unit_id", "assigned_to_id"
        )
    )
    assert set(items) == {a.unit_id, b.unit_id, d.unit_id, f.unit_id}
    assert items[a.unit_id] == annotator.pk
    assert (QAPair.objects.count(), Revision.objects.count()) == (pairs, revisions)
    # The constraint holds from now on.
    with pytest.raises(Exception, match="gold_copy_once_per_person"):
        services.make_copy(second, user=annotator, kind=QueueItem.Kind.FIRST_PASS)
