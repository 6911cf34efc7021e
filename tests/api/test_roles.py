"""The role matrix: every page and every API endpoint against every role, allowed or refused.

Refusals are 403 for members whose role may not, 404 for people outside the project (its existence
is not disclosed) and a login redirect (pages) or 401/403 (API) for anonymous visitors.
"""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotator.projects.services import ensure_member, ensure_project, token_for
from tests.conftest import uh

ROLES = ["admin", "reviewer", "annotator", "researcher"]
ALL = set(ROLES)
ANNOTATE = {"admin", "reviewer", "annotator"}
OVERSEE = {"admin", "reviewer", "researcher"}
EDIT = {"admin", "reviewer"}
ADMIN = {"admin"}
# Only annotators take part in a study: the others can export its truth (issue 7, B).
TAKE_PART = {"annotator"}
STUDY_MAKERS = {"admin", "researcher"}
# Pipeline runs spend money on model servers: admins and researchers start, cancel and resume them (issue 10).
RUNNERS = {"admin", "researcher"}

# Row-id routes whose refusal an annotator gets as the 404 of a row that does not exist (issue 20).
ROW_IDS_HIDDEN = {"/api/qa/{qa}/", "/api/qa/{qa}/flag/"}

# (method, path template, allowed roles, JSON body)
API = [
    ("post", "/api/projects/{slug}/queue/next/", ANNOTATE, None),
    ("post", "/api/units/{uh}/submit/", ANNOTATE, {}),
    ("post", "/api/units/{uh}/heartbeat/", ANNOTATE, None),
    ("post", "/api/units/{uh}/skip/", ANNOTATE, {}),
    ("put", "/api/units/{uh}/autosave/", ANNOTATE, {}),
    ("get", "/api/projects/{slug}/videos/", OVERSEE, None),  # not annotators: ids, names, durations (issue 20)
    # Videos in by API: admins, as only the people who run the platform run the ingest command (issue 11).
    ("post", "/api/projects/{slug}/videos/", ADMIN, {}),
    ("post", "/api/projects/{slug}/videos/register/", ADMIN, {}),
    ("get", "/api/projects/{slug}/groups/", OVERSEE, None),
    ("post", "/api/projects/{slug}/groups/", ADMIN, {}),
    ("get", "/api/projects/{slug}/groups/{grp}/", OVERSEE, None),
    # Life logs by API: admins, as they make other groups (issue 11).
    ("post", "/api/projects/{slug}/lifelogs/", ADMIN, {}),
    ("get", "/api/projects/{slug}/qa-types/", ALL, None),
    ("post", "/api/projects/{slug}/qa-types/", ADMIN, {}),
    ("get", "/api/projects/{slug}/policy/", OVERSEE, None),
    ("patch", "/api/projects/{slug}/policy/", ADMIN, {}),
    ("get", "/api/projects/{slug}/progress/", OVERSEE, None),
    ("get", "/api/projects/{slug}/export/", ADMIN, None),
    ("get", "/api/qa/{qa}/", OVERSEE, None),
    ("patch", "/api/qa/{qa}/", EDIT, {}),
    ("post", "/api/qa/{qa}/flag/", ADMIN, {}),
    ("get", "/api/projects/{slug}/studies/", ALL, None),
    ("post", "/api/projects/{slug}/studies/", STUDY_MAKERS, {}),
    ("get", "/api/studies/{exp}/items/", STUDY_MAKERS, None),
    ("post", "/api/studies/{exp}/enroll/", TAKE_PART, None),
    ("get", "/api/studies/{exp}/current/", TAKE_PART, None),
    # Agreement: annotators see no agreement data (issue 9).
    ("get", "/api/projects/{slug}/agreement/", OVERSEE, None),
    ("get", "/api/projects/{slug}/agreement/?format=csv", OVERSEE, None),
    ("post", "/api/projects/{slug}/agreement/compute/", OVERSEE, {}),
    ("post", "/api/projects/{slug}/agreement/ratings/", STUDY_MAKERS, {}),
    ("get", "/api/projects/{slug}/agreement/consensus/", OVERSEE, None),
    ("post", "/api/projects/{slug}/agreement/consensus/", OVERSEE, {}),
    ("post", "/api/agreement/consensus/{ci}/", OVERSEE, {}),
    # Pipeline runs: reviewers read them, annotators see none (issue 10).
    ("get", "/api/projects/{slug}/runs/", OVERSEE, None),
    ("post", "/api/projects/{slug}/runs/", RUNNERS, {}),
    ("get", "/api/runs/{run}/", OVERSEE, None),
    ("post", "/api/runs/{run}/cancel/", RUNNERS, None),
    ("post", "/api/runs/{run}/resume/", RUNNERS, None),
    ("get", "/api/projects/{slug}/model-servers/", OVERSEE, None),
    # Model evaluation: reviewers read and re-judge; admins and researchers start, cancel and draw samples.
    ("get", "/api/projects/{slug}/evaluations/", OVERSEE, None),
    ("get", "/api/projects/{slug}/report/", OVERSEE, None),
    ("post", "/api/projects/{slug}/evaluations/", RUNNERS, {}),
    ("get", "/api/evaluations/{ev}/", OVERSEE, None),
    ("post", "/api/evaluations/{ev}/cancel/", RUNNERS, None),
    ("get", "/api/evaluations/{ev}/predictions/", OVERSEE, None),
    ("get", "/api/evaluations/{ev}/predictions/?format=csv", OVERSEE, None),
    ("get", "/api/evaluations/{ev}/rejudge/", OVERSEE, None),
    ("post", "/api/evaluations/{ev}/rejudge/", RUNNERS, {}),
    ("post", "/api/evaluations/{ev}/rejudge/next/", OVERSEE, None),
    ("post", "/api/rejudge/{rj}/", OVERSEE, {}),
]
PAGES = [
    ("get", "/projects/{slug}/verify/", ANNOTATE),
    ("get", "/projects/{slug}/videos/", OVERSEE),
    ("get", "/projects/{slug}/lifelogs/", OVERSEE),
    ("get", "/projects/{slug}/qa-types/", ALL),
    ("post", "/projects/{slug}/qa-types/", ADMIN),
    ("get", "/projects/{slug}/progress/", OVERSEE),
    ("get", "/projects/{slug}/qa/", OVERSEE),
    ("get", "/projects/{slug}/qa/{qa}/", OVERSEE),
    ("post", "/projects/{slug}/qa/{qa}/", EDIT),
    ("get", "/projects/{slug}/export.jsonl", ADMIN),
    ("get", "/projects/{slug}/studies/pilot/", TAKE_PART),
    ("get", "/projects/{slug}/studies/pilot/results/", OVERSEE),
    ("get", "/projects/{slug}/studies/pilot/trials.jsonl", OVERSEE),
    ("get", "/projects/{slug}/studies/pilot/trials.csv", OVERSEE),
    ("get", "/projects/{slug}/studies/pilot/scores.csv", OVERSEE),
    ("get", "/projects/{slug}/agreement/", OVERSEE),
    ("post", "/projects/{slug}/agreement/", OVERSEE),
    ("get", "/projects/{slug}/agreement/consensus/", OVERSEE),
    ("post", "/projects/{slug}/agreement/consensus/", OVERSEE),
    ("get", "/projects/{slug}/agreement/consensus/{ci}/", OVERSEE),
    ("post", "/projects/{slug}/agreement/consensus/{ci}/", OVERSEE),
    ("get", "/projects/{slug}/runs/", OVERSEE),
    ("post", "/projects/{slug}/runs/", RUNNERS),
    ("get", "/projects/{slug}/runs/{run}/", OVERSEE),
    ("post", "/projects/{slug}/runs/{run}/", RUNNERS),
    ("get", "/projects/{slug}/evaluation/", OVERSEE),
    ("post", "/projects/{slug}/evaluation/", RUNNERS),
    ("get", "/projects/{slug}/evaluation/{ev}/", OVERSEE),
    ("post", "/projects/{slug}/evaluation/{ev}/", RUNNERS),
    ("get", "/projects/{slug}/evaluation/{ev}/rejudge/", OVERSEE),
    ("post", "/projects/{slug}/evaluation/{ev}/rejudge/", OVERSEE),
    ("get", "/projects/{slug}/report/", OVERSEE),
    ("get", "/projects/{slug}/report/report.csv", OVERSEE),
]


@pytest.fixture
def world(make_unit, project):
    unit = make_unit(n_open=1)
    users = {role: ensure_member(f"m-{role}", role=role, project=project, password="pw-matrix-1")[0] for role in ROLES}
    users["outsider"] = ensure_member(
        "m-outsider", role="admin", project=ensure_project("elsewhere"), password="pw-matrix-1"
    )[0]
    from annotator.agreement.models import ConsensusItem, Scope
    from annotator.studies.models import Study

    experiment = Study.objects.create(project=project, name="pilot", kind="ordering")
    # An item of the consensus round with two raters' answers (the POSTs of the matrix record nothing).
    scope = Scope.objects.create(project=project, key="verification")
    consensus = ConsensusItem.objects.create(
        scope=scope,
        item="1",
        level="nominal",
        disagreement=1.0,
        answers=[{"rater": "a", "value": "keep"}, {"rater": "b", "value": "delete"}],
    )
    from annotator.drafts.models import DraftJob, DraftRun

    run = DraftRun.objects.create(project=project, pipeline="egonight", prompt_version="v", status="running")
    DraftJob.objects.create(run=run, video=unit.video, status="running")
    from annotator.evaluation import rejudge
    from annotator.evaluation.models import Evaluation, Prediction

    # A done evaluation with two judged answers in a re-judge sample (the matrix's POSTs are refused or change nothing
    # that a later role's request depends on).
    evaluation = Evaluation.objects.create(
        project=project, model="m", judge_model="j", endpoint={}, judge_endpoint={}, prompt_version="v", status="done"
    )
    Prediction.objects.bulk_create(
        [
            Prediction(
                evaluation=evaluation,
                kind="open",
                qa_type="t",
                illumination="day",
                source="real",
                question="q",
                truth="t",
                clip_start_s=0,
                clip_end_s=1,
                status="done",
                judge_pred="correct",
                judge_score=5,
            )
            for _ in range(2)
        ]
    )
    sample = rejudge.create_sample(evaluation, size=2, seed=1)
    from annotator.media.models import VideoGroup

    group = VideoGroup.objects.create(project=project, kind="ego_exo", name="a set")
    ids = {
        "grp": group.pk,
        "slug": project.slug,
        "unit": unit.pk,
        "uh": uh(unit),
        "qa": unit.qa_pairs.first().pk,
        "exp": experiment.pk,
        "ci": consensus.pk,
        "run": run.pk,
        "ev": evaluation.pk,
        "rj": sample.items.first().pk,
    }
    return users, ids


def _api_client(user):
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


@pytest.mark.parametrize("method, path, allowed, body", API, ids=[f"{m} {p}" for m, p, _, _ in API])
def test_every_api_endpoint_checks_the_role(world, method, path, allowed, body):
    users, ids = world
    url = path.format(**ids)
    for who in [*ROLES, "outsider", None]:
        client = _api_client(users.get(who) if who else None)
        res = getattr(client, method)(url, body, format="json") if body is not None else getattr(client, method)(url)
        if who in allowed:
            assert res.status_code not in (401, 403, 404) and res.status_code < 500, (
                who,
                res.status_code,
                res.content[:200],
            )
        elif who in ROLES:
            # An annotator gets a missing row's 404 where a 403 would say the row id exists (issue 20).
            assert res.status_code == (404 if who == "annotator" and path in ROW_IDS_HIDDEN else 403), (
                who,
                res.status_code,
            )
        elif who == "outsider":
            assert res.status_code == 404, (who, res.status_code)
        else:
            assert res.status_code in (401, 403), (who, res.status_code)


@pytest.mark.parametrize("method, path, allowed", PAGES, ids=[f"{m} {p}" for m, p, _ in PAGES])
def test_every_page_checks_the_role(world, method, path, allowed):
    users, ids = world
    url = path.format(**ids)
    for who in [*ROLES, "outsider", None]:
        client = Client()
        if who:
            client.force_login(users[who])
        res = getattr(client, method)(url, {"action": "create"} if method == "post" else None)
        if who in allowed:
            assert res.status_code in (200, 302, 400, 409), (who, res.status_code)
            assert not (res.status_code == 302 and "/accounts/login/" in res["Location"])
        elif who in ROLES:
            assert res.status_code == 403, (who, res.status_code)
        elif who == "outsider":
            assert res.status_code == 404, (who, res.status_code)
        else:
            assert res.status_code == 302 and res["Location"].startswith("/accounts/login/"), (who, res.status_code)


def test_the_unit_an_annotator_sees_names_nobody(world, project):
    users, ids = world
    res = _api_client(users["annotator"]).post(f"/api/projects/{project.slug}/queue/next/")
    text = res.content.decode()
    for user in users.values():
        assert user.username not in text
    assert "leased_by" not in text and "completed_by" not in text


def test_nobody_answers_someone_elses_trial(world, project):
    from annotator.media.models import Video
    from annotator.studies.models import Condition, Participant, Study, Trial
    from tests.studies.test_taking_part import _item

    users, ids = world
    experiment = Study.objects.get(pk=ids["exp"])
    video = Video.objects.create(project=project, sha256="9" * 64, filename="x.mp4", status="ready", duration_s=30)
    cond = Condition.objects.create(
        study=experiment,
        number=1,
        label="c",
        variables={"n_frames": 2, "clip_length": "medium", "annotation": "none", "hints": []},
    )
    item = _item(cond, (video, 0, 15), 0, False)
    theirs = Participant.objects.create(study=experiment, user=users["annotator"], stage="trials")
    trial = Trial.objects.create(participant=theirs, item=item, position=0)
    res = _api_client(users["reviewer"]).post(
        f"/api/trials/{trial.pk}/answer/",
        {"response": item.truth, "client_rt_ms": 1000, "idempotency_key": "x"},
        format="json",
    )
    assert res.status_code == 404
    assert Trial.objects.get(pk=trial.pk).response is None
