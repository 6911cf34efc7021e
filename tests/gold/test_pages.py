"""The tutorial page (Markdown sanitised, examples with the expected decision and an explanation per QA
pair, admins edit it) and the admins' gold page (every attempt and pause, lifting one, the policy)."""

import pytest
from django.test import Client
from django.utils import timezone

from annotator.exposure import ledger
from annotator.gold import services
from annotator.gold.models import Attempt, Known, Pause, Source, Standing
from annotator.media.file_access import may_see_video


def _client(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def with_example(project, make_verified, admin_user):
    units = make_verified(2)
    services.set_tutorial(
        project, "# Welcome\n\nKeep **correct** pairs.<script>alert(1)</script><img src=x onerror=alert(2)>"
    )
    source = services.add_example(project, units[0].pk, admin_user)
    return units, source


def test_an_annotator_reads_the_tutorial_with_its_examples(project, with_example, annotator, make_unit):
    units, source = with_example
    page = _client(annotator).get(f"/projects/{project.slug}/tutorial/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "<h1>Welcome</h1>" in html and "<strong>correct</strong>" in html
    assert "<script>alert(1)" not in html and "onerror" not in html
    expected = [li.split('data-expected="')[1].split('"')[0] for li in html.split('class="example-pair"')[1:]]
    assert expected == ["keep", "modify", "delete", "keep"]
    assert "(reason: vague)" in html and "answer becomes: answer 1 (fixed)" in html
    assert 'name="action"' not in html  # no admin forms for an annotator
    # No file name: it would tell old footage (gold copies are of verified units) from new (issue 20).
    assert units[0].video.filename not in html and "of its video" in html
    # The examples' footage and answers are in the reader's ledger, once however often they read.
    _client(annotator).get(f"/projects/{project.slug}/tutorial/")
    seen = ledger.Ledger.of(ledger.person_key(user_id=annotator.pk), project.pk)
    assert units[0].video_id in seen.played and units[1].video_id not in seen.played
    assert {k.qa_pair_id for k in source.known.all()} <= seen.answers
    from annotator.exposure.models import Exposure

    assert Exposure.objects.filter(person=f"user:{annotator.pk}", kind="footage").count() == 1
    # The example's video plays for them (the tutorial's player), another unit's does not.
    assert may_see_video(annotator, units[0].video) and not may_see_video(annotator, units[1].video)
    assert (
        _client(annotator)
        .post(f"/projects/{project.slug}/tutorial/", {"action": "markdown", "tutorial": "x"})
        .status_code
        == 403
    )
    assert services.policy_of(project).tutorial.startswith("# Welcome")


def test_admins_edit_the_tutorial_and_its_examples(project, with_example, admin_user):
    units, source = with_example
    client = _client(admin_user)
    url = f"/projects/{project.slug}/tutorial/"
    known = Known.objects.filter(source=source).order_by("qa_pair_id")[2]
    assert (
        client.post(url, {"action": "explain", "known": known.pk, "explanation": "Too vague to answer."}).status_code
        == 302
    )
    assert "Too vague to answer." in client.get(url).content.decode()
    bad = client.post(url, {"action": "add-example", "unit": units[0].pk})  # already an example
    assert bad.status_code == 400 and "is not a verified unit of this project" in bad.content.decode()
    assert client.post(url, {"action": "add-example", "unit": units[1].pk}).status_code == 302
    assert Source.objects.filter(role="example", active=True).count() == 2
    assert client.post(url, {"action": "remove-example", "source": source.pk}).status_code == 302
    assert list(Source.objects.filter(role="example", active=True).values_list("unit_id", flat=True)) == [units[1].pk]
    assert client.post(url, {"action": "markdown", "tutorial": "x" * 100_001}).status_code == 400


def test_the_admins_page_lists_every_attempt_and_pause_and_lifts_one(project, admin_user, annotator, annotator2):
    Attempt.objects.create(
        project=project,
        user=annotator,
        number=1,
        threshold=0.8,
        decisions=8,
        agreed=5,
        score=0.625,
        passed=False,
        finished_at=timezone.now(),
    )
    Attempt.objects.create(project=project, user=annotator2, number=1, threshold=0.8)
    Standing.objects.create(project=project, user=annotator, paused=True)
    pause = Pause.objects.create(
        project=project,
        user=annotator,
        reason="gold accuracy 50% over the last 10 gold units, below 80%",
        accuracy=0.5,
        window=10,
        threshold=0.8,
    )
    client = _client(admin_user)
    html = client.get(f"/projects/{project.slug}/gold/").content.decode()
    attempts = html.split('id="attempts"')[1]
    assert "5 / 8" in attempts and "0.625" in attempts and "failed" in attempts and "in progress" in attempts
    assert "gold accuracy 50% over the last 10 gold units, below 80%" in html
    assert _client(annotator).get(f"/projects/{project.slug}/gold/").status_code == 403
    res = client.post(f"/projects/{project.slug}/gold/", {"action": "lift", "pause": pause.pk, "note": "ok now"})
    assert res.status_code == 302
    pause.refresh_from_db()
    assert (pause.lifted_by, pause.note) == (admin_user, "ok now")
    again = client.post(f"/projects/{project.slug}/gold/", {"action": "lift", "pause": pause.pk})
    assert again.status_code == 409
    bad = client.post(
        f"/projects/{project.slug}/gold/",
        {"action": "policy", "gold_rate": "2", "threshold": "0.8", "tries": "3", "window": "10"},
    )
    assert bad.status_code == 400 and "gold_rate must be a number from 0 to 0.5" in bad.content.decode()
    assert services.policy_of(project).gold_rate == 0.05
    ok = client.post(
        f"/projects/{project.slug}/gold/",
        {
            "action": "policy",
            "gold_rate": "0.1",
            "threshold": "0.9",
            "tries": "2",
            "window": "5",
            "qualification_required": "on",
        },
    )
    assert ok.status_code == 302
    p = services.policy_of(project)
    assert (p.gold_rate, p.threshold, p.tries, p.window, p.qualification_required) == (0.1, 0.9, 2, 5, True)
