"""The evaluation API: start, list, report, cancel, export, and the re-judge queue, over token auth;
every number a client sends is bounded (400 in plain words, nothing written), annotators get 403
and people outside the project 404."""

import pytest
from rest_framework.test import APIClient

from annotator.evaluation.models import Evaluation, Prediction, RejudgeItem, RejudgeSample
from annotator.projects.services import ensure_member, ensure_project, token_for


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


@pytest.fixture
def verified(make_unit, project, add_server):
    """A unit of 2 open and 1 multiple-choice verified QA pairs, and a model server."""
    unit = make_unit(n_open=2)
    unit.qa_pairs.update(status="verified", provenance="machine_kept")
    add_server("vlm", model="served")
    return unit


@pytest.fixture
def roles(project):
    return {
        role: ensure_member(f"api-{role}", role=role, project=project)[0]
        for role in ("admin", "researcher", "reviewer", "annotator")
    }


@pytest.mark.django_db
def test_a_researcher_starts_an_evaluation_and_everyone_overseeing_reads_it(verified, roles, project):
    res = _client(roles["researcher"]).post(
        f"/api/projects/{project.slug}/evaluations/",
        {"server": "vlm", "model": "other-vlm", "frames": 16},
        format="json",
    )
    assert res.status_code == 201, res.content
    body = res.json()
    assert (body["model"], body["judge_model"], body["frames"], body["rubric"], body["status"], body["created_by"]) == (
        "other-vlm",
        "served",
        16,
        "egonight",
        "queued",
        "api-researcher",
    )
    e = Evaluation.objects.get()
    assert list(e.predictions.values_list("kind", flat=True).order_by("kind")) == ["mcq", "open", "open"]
    listed = _client(roles["reviewer"]).get(f"/api/projects/{project.slug}/evaluations/").json()
    assert [(r["id"], r["items"]) for r in listed] == [(e.pk, {"total": 3, "done": 0, "failed": 0, "pending": 3})]
    report = _client(roles["admin"]).get(f"/api/evaluations/{e.pk}/").json()
    assert report["items"]["queued"] == 3 and report["rejudge"] is None
    assert report["summary"]["judge_score"] == {"n": 0, "value": None, "sd": None, "ci": None}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, field",
    [
        ({"server": "vlm", "frames": 0}, "frames"),
        ({"server": "vlm", "frames": 65}, "frames"),
        ({"server": "vlm", "frames": "many"}, "frames"),
        ({"server": "vlm", "frames": 10**30}, "frames"),
        ({"server": "vlm", "frames": 2.5}, "frames"),
        ({"server": "vlm", "rubric": "strict"}, "rubric"),
        ({"server": "x" * 65}, "server"),
        ({"server": "vlm", "model": "m" * 201}, "model"),
        ({"server": "nope"}, "server"),
        ({"server": "vlm", "judge_server": "nope"}, "judge_server"),
        ({"server": "vlm", "qa_type": "no_such_type"}, "qa_type"),
        ({}, "server"),
    ],
)
def test_bad_input_to_start_is_a_400_naming_the_field_and_nothing_is_started(verified, roles, project, body, field):
    res = _client(roles["admin"]).post(f"/api/projects/{project.slug}/evaluations/", body, format="json")
    assert res.status_code == 400, res.content
    assert field in res.json()["errors"]
    assert Evaluation.objects.count() == 0 and Prediction.objects.count() == 0


@pytest.mark.django_db
def test_a_project_without_verified_qa_has_nothing_to_evaluate(make_unit, project, add_server, roles):
    make_unit(n_open=1)  # drafts, not verified
    add_server("vlm")
    res = _client(roles["admin"]).post(f"/api/projects/{project.slug}/evaluations/", {"server": "vlm"}, format="json")
    assert res.status_code == 400 and "no verified QA pair" in res.json()["detail"]
    assert Evaluation.objects.count() == 0


@pytest.mark.django_db
def test_annotators_get_403_and_outsiders_404_on_every_endpoint(verified, roles, project, judged_evaluation):
    e = judged_evaluation(["correct", "incorrect"])
    from annotator.evaluation import rejudge

    item = rejudge.create_sample(e, size=2, seed=1).items.first()
    outsider = ensure_member("api-outsider", role="admin", project=ensure_project("elsewhere"))[0]
    calls = [
        ("get", f"/api/projects/{project.slug}/evaluations/", None),
        ("post", f"/api/projects/{project.slug}/evaluations/", {"server": "vlm"}),
        ("get", f"/api/evaluations/{e.pk}/", None),
        ("post", f"/api/evaluations/{e.pk}/cancel/", None),
        ("get", f"/api/evaluations/{e.pk}/predictions/", None),
        ("get", f"/api/evaluations/{e.pk}/rejudge/", None),
        ("post", f"/api/evaluations/{e.pk}/rejudge/", {"size": 1}),
        ("post", f"/api/evaluations/{e.pk}/rejudge/next/", None),
        ("post", f"/api/rejudge/{item.pk}/", {"verdict": "right"}),
    ]
    for method, url, body in calls:
        for who, code in ((roles["annotator"], 403), (outsider, 404)):
            res = getattr(_client(who), method)(url, body, format="json")
            assert res.status_code == code, (method, url, res.status_code)
    assert Evaluation.objects.count() == 1 and RejudgeItem.objects.exclude(verdict="").count() == 0
    assert RejudgeItem.objects.filter(claimed_by__isnull=False).count() == 0
    # Reviewers re-judge but neither start, cancel nor draw samples.
    reviewer = _client(roles["reviewer"])
    assert (
        reviewer.post(f"/api/projects/{project.slug}/evaluations/", {"server": "vlm"}, format="json").status_code == 403
    )
    assert reviewer.post(f"/api/evaluations/{e.pk}/rejudge/", {"size": 1}, format="json").status_code == 403
    assert reviewer.post(f"/api/evaluations/{e.pk}/rejudge/next/").status_code == 200


@pytest.mark.django_db
def test_a_finished_evaluation_cannot_be_cancelled_and_a_running_one_can(judged_evaluation, roles):
    e = judged_evaluation(["correct"])
    assert _client(roles["admin"]).post(f"/api/evaluations/{e.pk}/cancel/").status_code == 409
    Evaluation.objects.filter(pk=e.pk).update(status="running")
    Prediction.objects.filter(evaluation=e).update(status="queued")
    res = _client(roles["researcher"]).post(f"/api/evaluations/{e.pk}/cancel/")
    assert res.status_code == 200 and res.json()["status"] == "cancelled"
    assert set(Prediction.objects.values_list("status", flat=True)) == {"cancelled"}


@pytest.mark.django_db
def test_an_unknown_export_format_is_a_400(judged_evaluation, roles):
    e = judged_evaluation(["correct"])
    res = _client(roles["reviewer"]).get(f"/api/evaluations/{e.pk}/predictions/?format=xlsx")
    assert res.status_code == 400 and res["Content-Type"] == "application/json"
    assert res.json()["detail"] == "format must be jsonl or csv"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, field",
    [
        ({"size": 0}, "size"),
        ({"size": 5001}, "size"),
        ({"size": "all"}, "size"),
        ({"size": 10**20}, "size"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**63}, "seed"),
        ({"seed": "x"}, "seed"),
        ({"replace": "perhaps"}, "replace"),
    ],
)
def test_bad_sample_sizes_and_seeds_are_400s_and_nothing_is_drawn(judged_evaluation, roles, body, field):
    e = judged_evaluation(["correct"] * 3)
    res = _client(roles["admin"]).post(f"/api/evaluations/{e.pk}/rejudge/", body, format="json")
    assert res.status_code == 400 and field in res.json()["errors"]
    assert RejudgeSample.objects.count() == 0


@pytest.mark.django_db
def test_the_rejudge_queue_over_the_api(judged_evaluation, roles):
    e = judged_evaluation(["correct", "incorrect"])
    admin, reviewer = _client(roles["admin"]), _client(roles["reviewer"])
    assert admin.get(f"/api/evaluations/{e.pk}/rejudge/").json() == {"evaluation": e.pk, "sample": None}
    assert admin.post(f"/api/evaluations/{e.pk}/rejudge/next/").status_code == 404  # no sample yet
    res = admin.post(f"/api/evaluations/{e.pk}/rejudge/", {"size": 300, "seed": 42}, format="json")
    assert res.status_code == 201
    assert {k: res.json()["sample"][k] for k in ("size", "seed", "n_items", "judged")} == {
        "size": 300,
        "seed": 42,
        "n_items": 2,
        "judged": 0,
    }
    assert admin.post(f"/api/evaluations/{e.pk}/rejudge/", {"size": 2}, format="json").status_code == 409

    seen = []
    for verdict in ("right", "wrong"):
        item = reviewer.post(f"/api/evaluations/{e.pk}/rejudge/next/").json()
        assert set(item) >= {"question", "truth", "prediction", "judge_label", "judge_score", "judge_reason"}
        assert item["score_max"] == 5 and item["verdict"] == ""
        seen.append(item["question"])
        assert reviewer.post(f"/api/rejudge/{item['id']}/", {"verdict": "maybe"}, format="json").status_code == 400
        res = reviewer.post(f"/api/rejudge/{item['id']}/", {"verdict": verdict}, format="json")
        assert res.status_code == 200 and res.json()["verdict"] == verdict and res.json()["judged"] == len(seen)
        assert reviewer.post(f"/api/rejudge/{item['id']}/", {"verdict": verdict}, format="json").status_code == 409
    assert sorted(seen) == ["Question 0?", "Question 1?"]
    assert reviewer.post(f"/api/evaluations/{e.pk}/rejudge/next/").status_code == 204
    sample = admin.get(f"/api/evaluations/{e.pk}/rejudge/").json()["sample"]
    assert (sample["judged"], sample["right"], sample["wrong"], sample["percent_right"]) == (2, 1, 1, 0.5)


@pytest.mark.django_db
def test_the_leaderboard_is_one_query_however_many_evaluations(judged_evaluation, project, django_assert_num_queries):
    from annotator.evaluation import selectors

    for labels in (["correct"], ["incorrect", "correct"], ["correct"] * 3):
        judged_evaluation(labels)
    with django_assert_num_queries(1):
        rows = selectors.leaderboard(project)
    assert [r["judge_accuracy"]["n"] for r in rows] == [3, 2, 1]
    assert [r["judge_score"]["value"] for r in rows] == [4.0, 2.5, 4.0]
