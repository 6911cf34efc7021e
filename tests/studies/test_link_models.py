"""studies.0007 (issue 19, study links): participants without an account. Every row stored before
stays valid; an anonymous person (no user, a pseudonym) is allowed; one pseudonym never enrols
twice in a study; a person with neither an account nor a pseudonym is refused."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from annotator.studies.links import pseudonym_of
from annotator.studies.models import Participant, Study
from tests.migrating import at_state

BEFORE = [("studies", "0006_model_participants")]


@pytest.mark.django_db(transaction=True)
def test_account_and_model_participants_stored_before_stay_valid_and_read_as_before():
    with at_state(BEFORE) as old:
        project = old.get_model("projects", "Project").objects.create(slug="links-mig", name="L")
        user = old.get_model("auth", "User").objects.create(username="old-ann")
        OldStudy, OldParticipant = old.get_model("studies", "Study"), old.get_model("studies", "Participant")
        study = OldStudy.objects.create(project=project, name="before", kind="mcq")
        person = OldParticipant.objects.create(study=study, user=user, stage="trials")
        model = OldParticipant.objects.create(study=study, kind="model", model="gpt-4o", stage="done")
    person, model = Participant.objects.get(pk=person.pk), Participant.objects.get(pk=model.pk)
    assert (person.kind, person.user_id, person.pseudonym, person.link_id, person.status, person.export_status) == (
        "person",
        user.pk,
        "",
        None,
        "in_progress",
        "in_progress",
    )
    assert (model.kind, model.model, model.pseudonym, model.export_status) == ("model", "gpt-4o", "", "completed")
    study = Study.objects.get(pk=study.pk)
    assert (study.min_viewport_width, study.min_viewport_height, study.abandon_after_min, study.consent) == (
        1024,
        600,
        60,
        "",
    )


@pytest.fixture
def study(project):
    return Study.objects.create(project=project, name="anon", kind="mcq")


def test_an_anonymous_person_is_allowed_and_a_pseudonym_enrols_once_per_study(study, project):
    first = Participant.objects.create(study=study, pseudonym=pseudonym_of("5f1e0000aa"), external_id="5f1e0000aa")
    assert (first.kind, first.user_id) == ("person", None)
    with pytest.raises(IntegrityError), transaction.atomic():
        Participant.objects.create(study=study, pseudonym=pseudonym_of("5f1e0000aa"), external_id="5f1e0000aa")
    other = Study.objects.create(project=project, name="other", kind="mcq")
    Participant.objects.create(study=other, pseudonym=pseudonym_of("5f1e0000aa"))  # another study: allowed
    assert Participant.objects.filter(pseudonym=pseudonym_of("5f1e0000aa")).count() == 2


def test_a_person_with_neither_an_account_nor_a_pseudonym_is_refused(study, annotator):
    with pytest.raises(IntegrityError), transaction.atomic():
        Participant.objects.create(study=study)
    with pytest.raises(IntegrityError), transaction.atomic():  # an account has no pseudonym
        Participant.objects.create(study=study, user=annotator, pseudonym=pseudonym_of("x"))
    with pytest.raises(IntegrityError), transaction.atomic():  # a preview is an account's
        Participant.objects.create(study=study, kind="preview")
    assert Participant.objects.filter(study=study).count() == 0


def test_the_pseudonym_is_a_keyed_hash_of_the_panel_id(settings):
    one = pseudonym_of("5f1e0000aa")
    assert len(one) == 64 and int(one, 16) >= 0 and one != pseudonym_of("5f1e0000ab")
    settings.PSEUDONYM_KEY = "another-key-of-another-deployment-0123456789"
    assert pseudonym_of("5f1e0000aa") != one
