"""Progress, QA types and QA pair history pages: what admins and researchers see."""

import pytest
from django.test import Client

from annotator.qa.models import QAType
from annotator.qa.queue import claim_next
from annotator.qa.selectors import progress, word_diff
from annotator.qa.services import Addition, Decision, edit_qa_pair, set_queue_policy, submit_unit


@pytest.fixture
def worked(make_unit, project, annotator):
    """One unit verified: 1 kept, 1 modified, 1 deleted, MC kept, 1 added; 12 s on the unit."""
    set_queue_policy(project, double_check_share=0)
    unit = claim_next(make_unit(n_open=3).project, annotator).unit
    a, b, c, mc = unit.qa_pairs.order_by("id")
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="w",
        time_spent_ms=12000,
        decisions=[
            Decision(a.pk, "keep", time_spent_ms=1000),
            Decision(b.pk, "modify", answer="a better answer", time_spent_ms=4000),
            Decision(c.pk, "delete", reason="vague", time_spent_ms=500),
            Decision(mc.pk, "keep", time_spent_ms=1500),
        ],
        additions=[Addition("scene_description", "Is the light on?", "yes", time_spent_ms=3000)],
    )
    return {"unit": unit, "modified": b}


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def test_progress_counts_every_decision_per_person_type_and_video(worked, project, annotator):
    p = progress(project)
    assert p["queue"]["first_pass"] == {"label": "first pass", "open": 0, "leased": 0, "done": 1}
    assert p["provenance"] == {
        "machine_kept": 2,
        "machine_modified": 1,
        "human_added": 1,
        "kept_share": 0.5,
        "kept_percent": 50,
        "changed_percent": 50,
    }
    (person,) = p["by_annotator"]
    assert person == {
        "user_id": annotator.pk,
        "username": "ann",
        "passes": 1,
        "time_ms": 12000,
        "time_min": 0.2,
        "unfinished_ms": 0,
        "unfinished_min": 0.0,
        "s_per_pass": 12.0,
        "keep": 2,
        "modify": 1,
        "delete": 1,
        "add": 1,
    }
    assert {r["qa_type"]: (r["keep"], r["modify"], r["delete"], r["add"], r["time_ms"]) for r in p["by_qa_type"]} == {
        "object_recognition": (1, 0, 0, 0, 1500),
        "scene_description": (1, 1, 1, 1, 8500),
    }
    assert p["by_video"] == [
        {
            "video_id": worked["unit"].video_id,
            "filename": "clip1.mp4",
            "passes": 1,
            "time_ms": 12000,
            "unfinished_ms": 0,
            "time_min": 0.2,
            "unfinished_min": 0.0,
        }
    ]


def test_the_progress_page_shows_the_kept_share(worked, project, admin_user):
    html = _client(admin_user).get(f"/projects/{project.slug}/progress/").content.decode()
    assert "50 : 50" in html and "2 kept, 1 modified, 1 added" in html
    assert "<td>ann</td>" in html


def test_the_history_shows_each_change_from_the_draft(worked, project, admin_user):
    pair = worked["modified"]
    edit_qa_pair(pair.pk, admin_user, version=2, question="What happens in the second part?")
    res = _client(admin_user).get(f"/projects/{project.slug}/qa/{pair.pk}/")
    html = res.content.decode()
    assert [a for a in ("draft", "modify", "edit") if f'data-action="{a}"' in html] == ["draft", "modify", "edit"]
    assert "<ins>a better</ins> answer <del>1</del>" in html  # the annotator's modify, word by word
    assert "<del>part 1 of clip 1?</del> <ins>the second part?</ins>" in html  # the admin's edit
    assert "by ann" in html and "by boss" in html and "templates/templates-v1" in html


def test_a_conflicting_page_edit_keeps_what_was_typed(worked, project, admin_user):
    pair = worked["modified"]
    client = _client(admin_user)
    edit_qa_pair(pair.pk, admin_user, version=2, answer="someone else's answer")  # after the page was opened
    res = client.post(
        f"/projects/{project.slug}/qa/{pair.pk}/",
        {"version": 2, "question": pair.question, "answer": "my careful answer"},
    )
    assert res.status_code == 409
    html = res.content.decode()
    assert 'id="conflict"' in html and "my careful answer" in html and "someone else&#x27;s answer" in html
    pair.refresh_from_db()
    assert pair.answer == "someone else's answer"


def test_an_admin_defines_a_qa_type_and_a_bad_form_keeps_the_input(project, admin_user):
    client = _client(admin_user)
    res = client.post(
        f"/projects/{project.slug}/qa-types/",
        {
            "action": "create",
            "slug": "Bad Slug",
            "name": "Glare",
            "clip_policy": "window",
            "window_s": "",
            "guidelines": "Look for **lens flare**.",
        },
    )
    assert res.status_code == 400
    html = res.content.decode()
    assert "use lower-case letters" in html and "a window clip policy needs a length" in html
    assert "Look for **lens flare**." in html and 'value="Glare"' in html
    res = client.post(
        f"/projects/{project.slug}/qa-types/",
        {
            "action": "create",
            "slug": "glare",
            "name": "Glare",
            "clip_policy": "window",
            "window_s": "3",
            "paired": "on",
        },
    )
    assert res.status_code == 302
    assert QAType.objects.filter(project=project, slug="glare", paired=True, window_s=3.0).exists()
    client.post(f"/projects/{project.slug}/qa-types/", {"action": "preset", "preset": "egonight"})
    assert QAType.objects.filter(project=project).count() == 13


def test_word_diff_marks_removed_and_added_words():
    assert word_diff("a red cup on the table", "a blue cup on the table") == [
        ("=", "a"),
        ("-", "red"),
        ("+", "blue"),
        ("=", "cup on the table"),
    ]


def test_admins_write_guidelines_that_the_verify_page_shows(project, admin_user, annotator):
    from annotator.qa.services import ensure_qa_type

    ensure_qa_type(project, "counting_statics", name="Counting of statics")
    admin = _client(admin_user)
    admin.post(f"/projects/{project.slug}/qa-types/", {"action": "guidelines", "guidelines": "Answer in **one** word."})
    admin.post(
        f"/projects/{project.slug}/qa-types/",
        {"action": "type-guidelines", "slug": "counting_statics", "guidelines": "Count only what stays still."},
    )
    html = _client(annotator).get(f"/projects/{project.slug}/verify/").content.decode()
    assert "Answer in <strong>one</strong> word." in html
    assert "<h3>Counting of statics</h3>" in html and "Count only what stays still." in html
    assert (
        _client(annotator)
        .post(f"/projects/{project.slug}/qa-types/", {"action": "guidelines", "guidelines": "x"})
        .status_code
        == 403
    )


def test_the_home_page_costs_the_same_queries_for_one_or_many_projects(admin_user, django_assert_max_num_queries):
    from annotator.projects.services import ensure_member, ensure_project

    client = _client(admin_user)
    client.get("/")  # session, user
    for i in range(5):
        ensure_member(admin_user.username, role="admin", project=ensure_project(f"extra{i}"))
    with django_assert_max_num_queries(6):
        html = client.get("/").content.decode()
    assert all(f"extra{i}" in html for i in range(5))


def test_the_qa_types_page_holds_the_apis_bounds_and_changes_nothing_beyond_them(project, admin_user, make_unit):
    from annotator.projects.models import Project
    from annotator.qa.models import QueueItem

    make_unit(1)
    client = _client(admin_user)
    url = f"/projects/{project.slug}/qa-types/"
    before = (
        list(Project.objects.values_list("double_check_share", "overlap_share", "overlap_k")),
        QueueItem.objects.count(),
    )

    res = client.post(
        url, {"action": "policy", "double_check_share": "0", "overlap_share": "1", "overlap_k": "32767"}, follow=True
    )
    assert "queue policy not changed: overlap_k: Ensure this value is less than or equal to 20." in res.content.decode()
    res = client.post(
        url, {"action": "create", "slug": "glare", "name": "G" * 201, "clip_policy": "window", "window_s": "1e999"}
    )
    assert res.status_code == 400
    assert set(res.context["form"]["errors"]) == {"name", "window_s"}
    res = client.post(url, {"action": "guidelines", "guidelines": "x" * 50_001}, follow=True)
    assert "guidelines not saved: longer than 50,000 characters" in res.content.decode()

    assert (
        list(Project.objects.values_list("double_check_share", "overlap_share", "overlap_k")),
        QueueItem.objects.count(),
    ) == before
    assert not QAType.objects.filter(slug="glare").exists() and Project.objects.get().guidelines == ""
