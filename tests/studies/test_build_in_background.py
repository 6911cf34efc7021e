"""A study created through the API is built by a worker (its frames and clips can take minutes of
ffmpeg, longer than a web request may): it is ``building``, then ``ready`` with its items, or
``failed`` with the reason in plain words; nobody can enrol before it is ready."""

from django.core.files.storage import default_storage

from annotator.studies.models import Item, Study
from tests.conftest import wait_for
from tests.studies.conftest import api_as, people, stored_video


def test_an_ordering_study_made_through_the_api_is_built_by_a_worker(worker, project, admin_user, tmp_path):
    stored_video(project, tmp_path / "v.mp4", seconds=40.0, name="v.mp4")
    client = api_as(admin_user)
    res = client.post(
        f"/api/projects/{project.slug}/studies/",
        {"name": "pilot", "kind": "ordering", "preset": "ego-flight", "seed": 4},
        format="json",
    )
    assert res.status_code == 202, res.content
    body = res.json()
    assert (body["name"], body["kind"], body["items"], body["status"]) == ("pilot", "ordering", 0, "building")
    study = wait_for(lambda: Study.objects.filter(pk=body["id"], status="ready").first(), what="the study built")
    listed = {s["name"]: s for s in client.get(f"/api/projects/{project.slug}/studies/").json()}
    assert (
        listed["pilot"]["status"] == "ready"
        and listed["pilot"]["items"] == Item.objects.filter(condition__study=study, role="scored").count() > 0
    )
    assert study.settings["conditions"][0]["label"] == "2 frames" and study.seed == 4


def test_a_build_that_finds_nothing_fails_with_its_reason_and_leaves_nothing(worker, project, admin_user):
    client = api_as(admin_user)
    res = client.post(f"/api/projects/{project.slug}/studies/", {"name": "mc", "kind": "mcq"}, format="json")
    assert res.status_code == 202
    study = wait_for(lambda: Study.objects.filter(name="mc", status="failed").first(), what="the build failed")
    assert study.build_error == "no items could be built for this mcq study (the project has no data of this kind)"
    assert not Item.objects.exists() and not default_storage.listdir("")[1]
    person = people(project, 1)[0]
    refused = api_as(person).post(f"/api/studies/{study.pk}/enroll/")
    assert refused.status_code == 409 and "not built" in refused.json()["detail"]


def test_bad_options_are_refused_before_anything_is_saved(project, admin_user):
    client = api_as(admin_user)
    for body, field in (
        ({"name": "x", "kind": "poll"}, "kind"),
        ({"name": "x", "kind": "mcq", "preset": "ego-flight"}, "preset"),
        ({"name": "x", "kind": "mcq", "time_limits": [0.5]}, "time_limits"),
        ({"name": "Not A Slug!", "kind": "mcq"}, "name"),
        ({"name": "x", "kind": "likert", "criteria": ["beauty"]}, "criteria"),
        ({"name": "x", "kind": "likert", "justify_below": 9}, "justify_below"),
        ({"name": "x", "kind": "mcq", "attention_items": 500}, "attention_items"),
    ):
        res = client.post(f"/api/projects/{project.slug}/studies/", body, format="json")
        assert res.status_code == 400, (body, res.content)
        assert field in str(res.json()), res.json()
    assert not Study.objects.exists()


def test_a_likert_study_of_records_made_through_the_api_asks_for_justifications_below_3(
    worker, project, admin_user, tmp_path
):
    stored_video(project, tmp_path / "v.mp4", seconds=5.0, name="v.mp4")
    res = api_as(admin_user).post(
        f"/api/projects/{project.slug}/studies/",
        {
            "name": "realism",
            "kind": "likert",
            "source": "records",
            "criteria": ["realism"],
            "justify_below": 3,
            "raters_per_item": 3,
        },
        format="json",
    )
    assert res.status_code == 202, res.content
    study = wait_for(lambda: Study.objects.filter(pk=res.json()["id"], status="ready").first(), what="the study built")
    item = Item.objects.get(condition__study=study, role="scored")
    assert (item.payload["criterion"], item.payload["justify_below"], item.subtask, study.raters_per_item) == (
        "realism",
        3,
        "record",
        3,
    )
