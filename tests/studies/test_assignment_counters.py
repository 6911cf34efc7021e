"""The counters assignment reads under the study's lock (``Item.raters``, ``Condition.people``,
kept by migration 0008's triggers) equal the counts they replace, through every way trials and
memberships come and go: link entries, an account's enrolment, a preview, a model's answers
(neither counted), a declined consent and an idle participant timed out (their unanswered trials
released), a trial withdrawn at serve, a participant deleted (cascade), and that the cap reads them:
a study whose items all have ``raters_per_item`` people is full."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db.models import Count, Q
from django.utils import timezone

from annotator.studies import exposures, links, services
from annotator.studies.models import Condition, Item, Participant, Trial
from annotator.studies.services import create_study
from tests.studies.conftest import people, verified  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

PERSON = Q(participants__kind=Participant.Kind.PERSON)


def counted(study) -> tuple[dict, dict]:
    """(item id -> person trials, condition id -> person participants) as counted from the rows,
    and as the counters hold them: asserted equal by the caller."""
    items = dict(
        Item.objects.filter(condition__study=study)
        .annotate(n=Count("trials", filter=Q(trials__participant__kind=Participant.Kind.PERSON)))
        .values_list("pk", "n")
    )
    conditions = dict(
        Condition.objects.filter(study=study).annotate(n=Count("participants", filter=PERSON)).values_list("pk", "n")
    )
    return items, conditions


def counters(study) -> tuple[dict, dict]:
    return (
        dict(Item.objects.filter(condition__study=study).values_list("pk", "raters")),
        dict(Condition.objects.filter(study=study).values_list("pk", "people")),
    )


def test_the_counters_follow_every_way_trials_and_memberships_come_and_go(verified, project, admin_user):
    cache.clear()
    verified(6)
    study, _ = create_study(
        project,
        "counted",
        "mcq",
        seed=3,
        options={
            "per_type": 5,
            "questions_per_participant": 2,
            "practice_items": 1,
            "attention_items": 0,
            "raters_per_item": 100,
        },
    )
    link = links.create_link(study).link
    assert set(counters(study)[0].values()) == {0}

    entered = [links.open_link(link, links.PanelIds(f"person-{i}"))[0] for i in range(4)]
    annotator = people(project, 1)[0]
    services.enroll(study, annotator)
    links.preview_participant(study, admin_user)  # not counted
    model = services.model_participant(study, "gpt-test")  # not counted
    scored = list(Item.objects.filter(condition__study=study, role=Item.Role.SCORED).values_list("pk", flat=True))
    services.record_model_answers(model, {scored[0]: 0, scored[1]: 1})
    assert counters(study) == counted(study)
    items, conditions = counters(study)
    assert sum(items.values()) == 5 * 3 and sum(conditions.values()) == 5  # 4 + 1 people, practice + 2 each

    links.consent(entered[0], False)  # declined: trials released
    Participant.objects.filter(pk=entered[1].pk).update(last_active_at=timezone.now() - timedelta(days=1))
    assert links.release_idle() == 1  # timed out: trials released
    trial = Trial.objects.filter(participant=entered[2], practice=False).first()
    assert exposures.withdraw(entered[2], trial, "footage played to them")
    entered[3].delete()  # a cascade
    assert counters(study) == counted(study)
    items, conditions = counters(study)
    assert sum(items.values()) == 1 * 3 + 2  # the account's 3; entered[2]'s practice and the trial left
    assert sum(conditions.values()) == 4  # memberships stay with a released participant; the deleted one's go


def test_a_study_whose_items_all_have_their_raters_is_full_by_the_counters(verified, project):
    cache.clear()
    verified(3)
    study, _ = create_study(
        project,
        "small",
        "mcq",
        seed=3,
        options={
            "per_type": 2,
            "questions_per_participant": 1,
            "practice_items": 1,
            "attention_items": 0,
            "raters_per_item": 1,
        },
    )
    link = links.create_link(study).link
    links.open_link(link, links.PanelIds("first"))
    assert not links.is_full(study)
    links.open_link(link, links.PanelIds("second"))
    assert links.is_full(study)
    with pytest.raises(links.StudyFull):
        links.open_link(link, links.PanelIds("third"))
    # A released place is free again, by the counter.
    links.consent(Participant.objects.get(pseudonym=links.pseudonym_of("first")), False)
    assert not links.is_full(study)
    assert links.open_link(link, links.PanelIds("third"))[1] is True


def test_entering_through_a_link_counts_nothing(verified, project):
    """The link's statements read the counters: none counts rows (the counts grew with every trial
    the study had, under the study's lock)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    cache.clear()
    verified(3)
    study, _ = create_study(
        project,
        "small",
        "mcq",
        seed=3,
        options={
            "per_type": 2,
            "questions_per_participant": 1,
            "practice_items": 1,
            "attention_items": 0,
            "raters_per_item": 5,
        },
    )
    token = links.create_link(study).token
    with CaptureQueriesContext(connection) as ctx:
        assert Client().get(f"/s/{token}/", {"pid": "someone"}).status_code == 302
    assert Participant.objects.filter(pseudonym=links.pseudonym_of("someone")).exists()
    assert [q["sql"] for q in ctx.captured_queries if "COUNT(" in q["sql"].upper()] == []
