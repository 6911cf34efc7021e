"""Entries through a study link racing (issue 19): ``links.open_link`` reads what no other entry
changes before it takes the study's lock, and holds the lock for the cap's reads and the inserts
only. Threads with their own database connections enter at the same moment; the raters-per-item
cap, the link's maximum and one participant per panel id hold."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.db.models import Count

from annotator.studies import links
from annotator.studies.models import Item, Participant, StudyLink, Trial
from tests.studies.conftest import verified  # noqa: F401 (a fixture)
from tests.studies.test_link_participants import panel  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def at_once(link: StudyLink, pids: list[str]) -> list[tuple[str, object]]:
    """Open ``link`` with each panel id in its own thread, all released together; returns
    (pid, participant id or the exception's class name) in the order of ``pids``."""
    barrier = threading.Barrier(len(pids))
    out: dict[int, tuple[str, object]] = {}

    def enter(i: int, pid: str) -> None:
        try:
            barrier.wait(timeout=30)
            participant, _ = links.open_link(StudyLink.objects.select_related("study").get(pk=link.pk),
                                             links.PanelIds(pid))
            out[i] = (pid, participant.pk)
        except Exception as exc:  # noqa: BLE001 - recorded, asserted below
            out[i] = (pid, type(exc).__name__)
        finally:
            connection.close()

    threads = [threading.Thread(target=enter, args=(i, pid)) for i, pid in enumerate(pids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return [out[i] for i in range(len(pids))]


def test_six_people_entering_at_once_fill_two_places_and_no_item_gets_a_second_rater(panel):
    study, token = panel                                # 2 scored items, 1 rater each, 1 question a person
    link = links.link_of(token)
    results = at_once(link, [f"racer-{i}" for i in range(6)])
    entered = [r for r in results if isinstance(r[1], int)]
    assert len(entered) == 2
    assert sorted(r[1] for r in results if not isinstance(r[1], int)) == ["StudyFull"] * 4
    assert Participant.objects.filter(study=study).count() == 2       # the refused keep nothing
    raters = dict(Item.objects.filter(condition__study=study, role=Item.Role.SCORED)
                  .annotate(n=Count("trials")).values_list("pk", "n"))
    assert sorted(raters.values()) == [1, 1]
    assert Trial.objects.filter(participant__study=study).count() == 4  # 1 practice + 1 scored each


def test_a_link_admits_its_maximum_when_people_enter_at_once(panel):
    study, _ = panel
    study.raters_per_item = 5                           # the cap leaves room for 10: the link's maximum decides
    study.save()
    link = links.create_link(study, max_participants=3).link
    results = at_once(link, [f"crowd-{i}" for i in range(7)])
    assert sum(isinstance(r[1], int) for r in results) == 3
    assert sorted(r[1] for r in results if not isinstance(r[1], int)) == ["StudyFull"] * 4
    assert Participant.objects.filter(link=link).count() == 3


def test_one_panel_id_opening_the_link_four_times_at_once_is_one_participant(panel):
    study, token = panel
    results = at_once(links.link_of(token), ["same-person"] * 4)
    ids = {r[1] for r in results}
    assert len(ids) == 1 and isinstance(ids.pop(), int)                # each got the same participant
    assert Participant.objects.filter(study=study).count() == 1
    assert Trial.objects.filter(participant__study=study).count() == 2
