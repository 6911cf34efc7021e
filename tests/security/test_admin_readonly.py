"""The Django admin shows the audit trail but cannot change it: a superuser's POST to the change,
delete and add forms (and the bulk delete action) of QA pairs, revisions, verdicts, submissions,
autosaves and trials changes nothing. QA pairs are edited on their own page, through the service."""

import pytest
from django.forms.models import model_to_dict
from django.utils import timezone

from annotator.projects.services import ensure_member
from annotator.qa.models import Autosave, QAPair, QueueItem, Revision, Submission, Verdict
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, autosave, submit_unit
from annotator.studies.models import Condition, Element, Item, Participant, Study, Trial


@pytest.fixture
def superuser(project):
    return ensure_member("root", role="admin", project=project, password="pw-root-123", superuser=True)[0]


@pytest.fixture
def trail(make_unit, annotator, annotator2, project):
    """One submitted unit (revisions, verdicts, a submission), one unit with an autosave, one trial."""
    make_unit(2)
    make_unit(2)
    unit = claim_next(project, annotator).unit
    pairs = list(unit.qa_pairs.order_by("id"))
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="k1",
        time_spent_ms=4000,
        decisions=[Decision(p.pk, "keep", time_spent_ms=1000) for p in pairs],
        additions=[],
    )
    other = claim_next(project, annotator2).unit
    autosave(other.pk, annotator2, {"note": "half done"}, 1_700_000_000_000)

    exp = Study.objects.create(project=project, name="pilot", kind="ordering")
    cond = Condition.objects.create(study=exp, number=1, label="baseline", variables={"n_frames": 2, "hints": []})
    a, b = (Element.objects.create(kind="text", text=t) for t in "ab")
    item = Item.objects.create(
        condition=cond,
        index=0,
        seed=0,
        truth=[a.pk, b.pk],
        footage=pairs[0].video,
        payload={"shown": [b.pk, a.pk], "hints": []},
    )
    participant = Participant.objects.create(study=exp, user=annotator)
    Trial.objects.create(
        participant=participant,
        item=item,
        position=0,
        response=[a.pk, b.pk],
        client_rt_ms=2500.0,
        answered_at=timezone.now(),
    )
    return pairs[0]


MODELS = [QAPair, Revision, Verdict, Submission, Autosave, QueueItem, Item, Participant, Trial]


def _snapshot():
    return {m.__name__: sorted((o.pk, repr(sorted(model_to_dict(o).items()))) for o in m.objects.all()) for m in MODELS}


def _url(obj, view):
    meta = obj._meta
    return f"/admin/{meta.app_label}/{meta.model_name}/{obj.pk}/{view}/"


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_a_superuser_can_view_but_not_change_delete_or_add(client, superuser, trail, model):
    client.force_login(superuser)
    obj = model.objects.order_by("pk").first()
    before = _snapshot()
    meta = obj._meta

    page = client.get(_url(obj, "change"))
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()  # a view-only page, no save button
    fields = {f.name: "changed" for f in meta.concrete_fields if f.get_internal_type() in ("TextField", "CharField")}
    assert client.post(_url(obj, "change"), {**fields, "_save": "Save"}).status_code == 403
    assert client.post(_url(obj, "delete"), {"post": "yes"}).status_code == 403
    assert client.post(f"/admin/{meta.app_label}/{meta.model_name}/add/", fields).status_code == 403
    bulk = client.post(
        f"/admin/{meta.app_label}/{meta.model_name}/",
        {"action": "delete_selected", "_selected_action": [obj.pk], "post": "yes"},
    )
    assert bulk.status_code == 200  # the action is not offered, so nothing happens

    assert _snapshot() == before


def test_the_qa_pair_admin_links_to_the_qa_pairs_own_page(client, superuser, trail, project):
    client.force_login(superuser)
    expected = f"/projects/{project.slug}/qa/{trail.pk}/"
    page = client.get(_url(trail, "change")).content.decode()
    assert f'<a href="{expected}">{expected}</a>' in page
    listing = client.get("/admin/qa/qapair/").content.decode()
    assert f'<a href="{expected}">' in listing
    # The link leads to the page where an edit writes a revision.
    assert client.get(expected).status_code == 200
