"""Every change to a QA pair is a revision the database refuses to alter (SPEC "Qualities")."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError

from annotator.errors import Invalid
from annotator.qa.models import QAPair, Revision
from annotator.qa.services import flag_qa_pair


def _history(pair):
    return list(Revision.objects.filter(qa_pair=pair).order_by("id").values_list("id", "action", "after"))


@pytest.mark.parametrize(
    "sql",
    [
        'UPDATE qa_revision SET after = \'{"question": "rewritten"}\' WHERE qa_pair_id = %s',
        "DELETE FROM qa_revision WHERE qa_pair_id = %s",
    ],
)
def test_the_database_refuses_to_update_or_delete_a_revision_from_any_client(make_unit, sql):
    pair = make_unit(1).qa_pairs.first()
    before = _history(pair)
    with pytest.raises(IntegrityError, match="qa_revision is append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(sql, [pair.pk])
    assert _history(pair) == before


def test_the_orm_cannot_update_revisions_in_bulk_either(make_unit):
    pair = make_unit(1).qa_pairs.first()
    before = _history(pair)
    with pytest.raises(IntegrityError, match="UPDATE refused"), transaction.atomic():
        Revision.objects.filter(qa_pair=pair).update(version=99)
    assert _history(pair) == before


def test_a_qa_pair_with_revisions_cannot_be_deleted(make_unit):
    pair = make_unit(1).qa_pairs.first()
    with pytest.raises(ProtectedError), transaction.atomic():
        pair.delete()
    assert QAPair.objects.filter(pk=pair.pk).exists() and len(_history(pair)) == 1


def test_a_flag_records_the_person_and_the_model_that_set_it(make_unit, admin_user):
    pair = make_unit(1).qa_pairs.first()
    flag_qa_pair(pair.pk, reason="the answer contradicts the frames", source="reviewer-vlm", user=admin_user)
    pair.refresh_from_db()
    assert (pair.flag_reason, pair.flag_source, pair.flag_user) == (
        "the answer contradicts the frames",
        "reviewer-vlm",
        admin_user,
    )
    last = Revision.objects.filter(qa_pair=pair).last()
    assert (last.action, last.actor_user, last.actor_model) == ("flag", admin_user, "reviewer-vlm")


def test_a_flag_from_nobody_is_refused_and_nothing_changes(make_unit):
    pair = make_unit(1).qa_pairs.first()
    with pytest.raises(Invalid):
        flag_qa_pair(pair.pk, reason="looks wrong", source="  ")
    pair.refresh_from_db()
    assert (pair.flag_reason, pair.flag_user, len(_history(pair))) == ("", None, 1)


def test_the_api_flag_records_the_token_holder(make_unit, admin_user, client):
    pair = make_unit(1).qa_pairs.first()
    client.force_login(admin_user)
    response = client.post(
        f"/api/qa/{pair.pk}/flag/",
        {"reason": "fixable: wrong count", "source": "vudg-review"},
        content_type="application/json",
    )
    assert response.status_code == 200
    pair.refresh_from_db()
    assert (pair.flag_source, pair.flag_user) == ("vudg-review", admin_user)


def test_a_reviewer_on_a_blind_overlap_pass_cannot_open_the_units_or_its_qa_pairs_history(
    make_unit, project, annotator, client
):
    from annotator.projects.services import ensure_member
    from annotator.qa.queue import claim_next
    from annotator.qa.services import Decision, set_queue_policy, submit_unit

    set_queue_policy(project, double_check_share=0, overlap_share=1.0, overlap_k=2)
    unit = make_unit(1)
    first = claim_next(project, annotator)
    pairs = list(unit.qa_pairs.order_by("id"))
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="first",
        time_spent_ms=1000,
        decisions=[
            Decision(p.pk, "modify", answer="first pass answer") if i == 0 else Decision(p.pk, "keep")
            for i, p in enumerate(pairs)
        ],
        additions=[],
    )
    reviewer, _ = ensure_member("rev", role="reviewer", project=project)
    item = claim_next(project, reviewer)
    assert (first.kind, item.kind, item.unit_id) == ("first_pass", "overlap", unit.pk)
    client.force_login(reviewer)

    for url in (
        f"/projects/{project.slug}/units/{unit.pk}/",
        f"/projects/{project.slug}/qa/{pairs[0].pk}/",
        f"/api/qa/{pairs[0].pk}/",
    ):
        res = client.get(url)
        assert res.status_code == 403 and b"first pass answer" not in res.content, url

    submit_unit(
        unit.pk,
        reviewer,
        idempotency_key="overlap",
        time_spent_ms=1000,
        decisions=[Decision(p.pk, "keep") for p in pairs],
        additions=[],
    )
    assert client.get(f"/projects/{project.slug}/units/{unit.pk}/").status_code == 200  # open once submitted
