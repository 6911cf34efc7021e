"""The groups API (issue 11, "Media in and out by API: create groups"): admins make day-night pairs
and ego-exo sets from video ids; every member lists and reads them; bad input is a 400 in plain
words that writes nothing."""

import pytest
from rest_framework.test import APIClient

from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.projects.services import ensure_member, ensure_project, token_for


def _client(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


def _video(project, name, duration_s=10.0):
    return Video.objects.create(
        project=project, sha256=(name * 64)[:64], filename=f"{name}.mp4", status="ready", duration_s=duration_s, fps=25
    )


@pytest.fixture
def setup(project):
    admin = ensure_member("g-admin", role="admin", project=project)[0]
    # A researcher reads the lists; an annotator may not (issue 20: they name every video by id, file
    # name and duration), nor make a group.
    ann = ensure_member("g-res", role="researcher", project=project)[0]
    videos = {n: _video(project, n) for n in "eabcd"}
    return _client(admin), _client(ann), videos


def test_an_admin_makes_an_ego_exo_set_and_members_read_it(setup, project):
    admin, ann, v = setup
    body = {
        "kind": "ego_exo",
        "name": "kitchen",
        "members": [
            {"video": v["e"].pk, "role": "ego"},
            {"video": v["a"].pk, "role": "exo", "offset_s": 0.5},
            {"video": v["b"].pk, "role": "exo", "offset_s": -1.0},
        ],
    }
    res = admin.post(f"/api/projects/{project.slug}/groups/", body, format="json")
    assert res.status_code == 201, res.content
    group = res.json()
    assert (group["kind"], group["name"]) == ("ego_exo", "kitchen")
    assert [
        (m["video"], m["filename"], m["role"], m["position"], m["label"], m["offset_s"]) for m in group["members"]
    ] == [
        (v["e"].pk, "e.mp4", "ego", 0, "ego", 0.0),
        (v["a"].pk, "a.mp4", "exo", 1, "exo 1", 0.5),
        (v["b"].pk, "b.mp4", "exo", 2, "exo 2", -1.0),
    ]
    listed = ann.get(f"/api/projects/{project.slug}/groups/").json()
    assert listed["count"] == 1 and listed["results"] == [group]
    assert ann.get(f"/api/projects/{project.slug}/groups/{group['id']}/").json() == group
    annotator = _client(ensure_member("g-ann", role="annotator", project=project)[0])
    assert annotator.get(f"/api/projects/{project.slug}/groups/").status_code == 403
    assert annotator.get(f"/api/projects/{project.slug}/groups/{group['id']}/").status_code == 403


def test_an_admin_makes_a_day_night_pair(setup, project):
    admin, _, v = setup
    res = admin.post(
        f"/api/projects/{project.slug}/groups/",
        {
            "kind": "day_night",
            "members": [{"video": v["c"].pk, "role": "night", "offset_s": 2.0}, {"video": v["d"].pk, "role": "day"}],
        },
        format="json",
    )
    assert res.status_code == 201, res.content
    assert res.json()["name"] == "d.mp4 / c.mp4"
    assert [(m["label"], m["offset_s"]) for m in res.json()["members"]] == [("day", 0.0), ("night", 2.0)]


@pytest.mark.parametrize(
    "members, kind, field, words",
    [
        (lambda v: [{"video": v["e"].pk, "role": "ego"}], "ego_exo", "members", "at least 2"),
        (
            lambda v: [{"video": v["e"].pk, "role": "ego"}] + [{"video": 10**6 + i, "role": "exo"} for i in range(9)],
            "ego_exo",
            "members",
            "no more than 9",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "ego"}, {"video": v["a"].pk, "role": "exo", "offset_s": 1e12}],
            "ego_exo",
            "members[1].offset_s",
            "less than or equal to 86400",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "ego"}, {"video": v["a"].pk, "role": "exo", "offset_s": "NaN"}],
            "ego_exo",
            "members[1].offset_s",
            "valid number",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "ego"}, {"video": 0, "role": "exo"}],
            "ego_exo",
            "members[1].video",
            "greater than or equal to 1",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "boss"}, {"video": v["a"].pk, "role": "exo"}],
            "ego_exo",
            "members[0].role",
            "not a valid choice",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "ego"}, {"video": 999999, "role": "exo"}],
            "ego_exo",
            "members[1].video",
            "no video 999999 in project proj",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "ego"}, {"video": v["a"].pk, "role": "exo", "offset_s": 9.5}],
            "ego_exo",
            "exos[1].offset_s",
            "keeps 0.5 s in common with the ego video",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "exo"}, {"video": v["a"].pk, "role": "exo"}],
            "ego_exo",
            "members",
            "needs one ego member",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "ego", "offset_s": 1}, {"video": v["a"].pk, "role": "exo"}],
            "ego_exo",
            "members",
            "the ego member's offset is 0",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "ego"}, {"video": v["e"].pk, "role": "exo"}],
            "ego_exo",
            "members",
            "a video is named twice",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "day"}, {"video": v["a"].pk, "role": "exo"}],
            "day_night",
            "members",
            "one day and one night",
        ),
        (
            lambda v: [{"video": v["e"].pk, "role": "day"}, {"video": v["a"].pk, "role": "night"}],
            "life_log",
            "kind",
            "not a valid choice",
        ),
    ],
)
def test_bad_groups_are_400s_in_plain_words_and_write_nothing(setup, project, members, kind, field, words):
    admin, _, v = setup
    res = admin.post(f"/api/projects/{project.slug}/groups/", {"kind": kind, "members": members(v)}, format="json")
    assert res.status_code == 400, res.content
    assert words in res.json()["errors"].get(field, "") + res.json()["detail"], res.json()
    assert (VideoGroup.objects.count(), VideoGroupMember.objects.count()) == (0, 0)


def test_a_video_of_another_project_is_not_a_member_and_a_taken_name_is_refused(setup, project):
    admin, _, v = setup
    other = _video(ensure_project("other"), "o")
    url = f"/api/projects/{project.slug}/groups/"
    res = admin.post(
        url,
        {"kind": "ego_exo", "members": [{"video": v["e"].pk, "role": "ego"}, {"video": other.pk, "role": "exo"}]},
        format="json",
    )
    assert (res.status_code, res.json()["errors"]) == (400, {"members[1].video": "not a video of this project"})
    body = {
        "kind": "ego_exo",
        "name": "take",
        "members": [{"video": v["e"].pk, "role": "ego"}, {"video": v["a"].pk, "role": "exo"}],
    }
    assert admin.post(url, body, format="json").status_code == 201
    body["members"][1]["video"] = v["b"].pk
    res = admin.post(url, body, format="json")
    assert (res.status_code, res.json()["detail"]) == (400, "this project already has a group named 'take'")
    assert VideoGroup.objects.count() == 1


def test_annotators_cannot_make_groups_and_outsiders_see_none(setup, project):
    admin, ann, v = setup
    body = {"kind": "ego_exo", "members": [{"video": v["e"].pk, "role": "ego"}, {"video": v["a"].pk, "role": "exo"}]}
    assert ann.post(f"/api/projects/{project.slug}/groups/", body, format="json").status_code == 403
    group_id = admin.post(f"/api/projects/{project.slug}/groups/", body, format="json").json()["id"]
    outsider = _client(ensure_member("g-out", role="admin", project=ensure_project("other"))[0])
    assert outsider.get(f"/api/projects/{project.slug}/groups/").status_code == 404
    assert outsider.get(f"/api/projects/{project.slug}/groups/{group_id}/").status_code == 404
    assert outsider.get(f"/api/projects/other/groups/{group_id}/").status_code == 404  # not a group of that project
    assert admin.get(f"/api/projects/{project.slug}/groups/{group_id + 1}/").status_code == 404


def test_the_group_list_is_three_queries_whatever_its_size(setup, project, django_assert_max_num_queries):
    admin, ann, v = setup
    for k, n in enumerate("abcd"):
        admin.post(
            f"/api/projects/{project.slug}/groups/",
            {
                "kind": "ego_exo",
                "members": [{"video": v["e"].pk, "role": "ego"}, {"video": v[n].pk, "role": "exo", "offset_s": k}],
            },
            format="json",
        )
    with django_assert_max_num_queries(6):  # auth token, membership, count, page, members with their videos
        res = ann.get(f"/api/projects/{project.slug}/groups/")
    assert res.json()["count"] == 4


def test_admins_define_qa_types_asked_of_an_ego_exo_set(setup, project):
    admin, _, _ = setup
    url = f"/api/projects/{project.slug}/qa-types/"
    res = admin.post(
        url, {"slug": "direction_prediction", "name": "Direction prediction", "set_kind": "ego_exo"}, format="json"
    )
    assert res.status_code == 201, res.content
    assert (res.json()["set_kind"], res.json()["answer_kind"]) == ("ego_exo", "text")
    res = admin.post(url, {"slug": "both", "name": "Both", "set_kind": "ego_exo", "paired": True}, format="json")
    assert (res.status_code, res.json()["errors"]) == (
        400,
        {"set_kind": "a QA type is asked of a day-night pair (paired) or of a set, not both"},
    )
    assert admin.post(url, {"slug": "x", "name": "X", "set_kind": "triple"}, format="json").status_code == 400
