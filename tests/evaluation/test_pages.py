"""The evaluation pages with Django's test client: the leaderboard's start form (a refused form keeps
what was typed), the evaluation page's re-judge sample form and agreement, and the re-judge page
without JavaScript (take an answer, mark it, the next one loads)."""

import pytest
from django.test import Client

from annotator.agreement import services as agreement
from annotator.evaluation import rejudge
from annotator.evaluation.models import Evaluation, RejudgeItem
from annotator.projects.services import ensure_member


@pytest.fixture
def admin_client(project):
    client = Client()
    client.force_login(ensure_member("page-admin", role="admin", project=project)[0])
    return client


@pytest.mark.django_db
def test_the_start_form_starts_an_evaluation_and_a_refused_one_keeps_what_was_typed(
    make_unit, project, add_server, admin_client
):
    make_unit(n_open=1).qa_pairs.update(status="verified", provenance="human_added")
    add_server("vlm", model="served")
    url = f"/projects/{project.slug}/evaluation/"
    page = admin_client.get(url).content.decode()
    assert 'id="start-form"' in page and "vlm (served)" in page and "No evaluation yet" in page

    res = admin_client.post(url, {"server": "vlm", "model": "typed-model", "frames": "99", "rubric": "vudg"})
    assert res.status_code == 400
    page = res.content.decode()
    assert "Nothing was started: frames is a whole number from 1 to 64" in page
    assert 'value="typed-model"' in page and 'value="99"' in page and '<option value="vudg" selected>' in page
    assert Evaluation.objects.count() == 0

    res = admin_client.post(url, {"server": "vlm", "model": "typed-model", "frames": "3", "rubric": "vudg"})
    e = Evaluation.objects.get()
    assert res.status_code == 302 and res["Location"] == f"/projects/{project.slug}/evaluation/{e.pk}/"
    assert (e.model, e.n_frames, e.rubric, e.judge_model) == ("typed-model", 3, "vudg", "served")
    assert "typed-model" in admin_client.get(url).content.decode()


@pytest.mark.django_db
def test_a_reviewer_sees_the_leaderboard_without_the_forms_and_cannot_post(project, judged_evaluation):
    e = judged_evaluation(["correct"])
    client = Client()
    client.force_login(ensure_member("page-reviewer", role="reviewer", project=project)[0])
    page = client.get(f"/projects/{project.slug}/evaluation/").content.decode()
    assert f'data-evaluation="{e.pk}"' in page and 'id="start-form"' not in page
    assert 'id="sample-form"' not in client.get(f"/projects/{project.slug}/evaluation/{e.pk}/").content.decode()
    assert (
        client.post(f"/projects/{project.slug}/evaluation/{e.pk}/", {"action": "sample", "size": "1"}).status_code
        == 403
    )


@pytest.mark.django_db
def test_the_sample_form_draws_the_sample_and_the_page_shows_the_engines_agreement(
    project, judged_evaluation, admin_client
):
    e = judged_evaluation(["correct", "correct", "incorrect"])
    url = f"/projects/{project.slug}/evaluation/{e.pk}/"
    res = admin_client.post(url, {"action": "sample", "size": "0"})
    assert res.status_code == 400 and "the sample size is a whole number from 1 to 5000" in res.content.decode()
    res = admin_client.post(url, {"action": "sample", "size": "3", "seed": "11"})
    assert res.status_code == 302
    sample = e.rejudge
    assert (sample.n_items, sample.seed) == (3, 11)
    user = ensure_member("page-admin", role="admin", project=project)[0]
    for verdict in ("right", "right", "wrong"):
        rejudge.record(rejudge.next_item(sample, user).pk, user, verdict)
    page = admin_client.get(url).content.decode()
    assert "3 re-judged,\n    2 marked right and 1 wrong (66.67% right)" in page
    assert "has not measured the verdicts yet" in page
    agreement.compute(project, f"ratings:{sample.rating_set}", n_resamples=100)
    page = admin_client.get(url).content.decode()
    assert 'id="rejudge-agreement"' in page and "66.67%" in page and "Cohen" in page


@pytest.mark.django_db
def test_the_rejudge_page_takes_an_answer_records_a_verdict_and_loads_the_next(
    project, judged_evaluation, admin_client
):
    e = judged_evaluation(["correct", "incorrect"])
    url = f"/projects/{project.slug}/evaluation/{e.pk}/rejudge/"
    assert 'id="no-sample"' in admin_client.get(url).content.decode()
    rejudge.create_sample(e, size=2, seed=8)
    page = admin_client.get(url).content.decode()
    assert 'id="start"' in page and 'id="rejudge-item"' not in page

    admin_client.post(url, {"action": "next"})
    first = RejudgeItem.objects.get(claimed_by__isnull=False)
    page = admin_client.get(url).content.decode()
    p = first.prediction
    for text in (p.question, p.truth, p.prediction, p.judge_reason, 'id="legend"', "<kbd>R</kbd>", "<kbd>W</kbd>"):
        assert text in page
    res = admin_client.post(url, {"item": str(first.pk), "verdict": "right"})
    assert res.status_code == 302
    first.refresh_from_db()
    assert (first.verdict, first.human_label) == ("right", first.judge_label)
    second = RejudgeItem.objects.get(claimed_by__isnull=False)
    assert second.pk != first.pk and f'data-item="{second.pk}"' in admin_client.get(url).content.decode()
    admin_client.post(url, {"item": str(first.pk), "verdict": "wrong"})  # a second verdict changes nothing
    first.refresh_from_db()
    assert first.verdict == "right"
    admin_client.post(url, {"item": str(second.pk), "verdict": "wrong"})
    assert 'id="all-done"' in admin_client.get(url).content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "form",
    [
        {"server": "vlm\x00"},
        {"server": "vlm", "model": "m\x00"},
        {"server": "vlm", "frames": "²"},
        {"server": "vlm", "qa_type": "x\x00"},
        {"server": "vlm", "judge_server": "a b"},
    ],
)
def test_form_input_that_cannot_be_stored_is_refused_in_words_not_a_500(
    make_unit, project, add_server, admin_client, form
):
    make_unit(n_open=1).qa_pairs.update(status="verified", provenance="human_added")
    add_server("vlm")
    res = admin_client.post(f"/projects/{project.slug}/evaluation/", form)
    assert res.status_code == 400  # NUL: refused by the middleware; the rest by the service, in words
    assert any("\x00" in v for v in form.values()) or "Nothing was started" in res.content.decode()
    assert Evaluation.objects.count() == 0


@pytest.mark.django_db
def test_a_rejudge_post_naming_no_answer_records_nothing(project, judged_evaluation, admin_client):
    e = judged_evaluation(["correct"])
    rejudge.create_sample(e, size=1, seed=1)
    url = f"/projects/{project.slug}/evaluation/{e.pk}/rejudge/"
    for item in ("²", "", "99999999999999999999", "-1"):
        res = admin_client.post(url, {"item": item, "verdict": "right"})
        assert res.status_code == 302
    assert RejudgeItem.objects.exclude(verdict="").count() == 0


@pytest.mark.django_db
def test_the_breakdown_names_qa_types_by_their_name_not_their_slug(project, judged_evaluation, admin_client):
    from annotator.qa.services import ensure_qa_type

    ensure_qa_type(project, "scene", name="Scene description")
    e = judged_evaluation(["correct", "incorrect"])
    html = admin_client.get(f"/projects/{project.slug}/evaluation/{e.pk}/").content.decode()
    assert '<th scope="row">Scene description</th>' in html and '<th scope="row">scene</th>' not in html
    assert '<th scope="row">night</th>' in html  # other values are words already
