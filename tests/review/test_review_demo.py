"""The demo's review round (annotator.demo.review.run_demo): a round, a rejection with comments, the
rework through the queue, acceptance; a second run adds nothing."""

from io import StringIO

import pytest

from annotator.demo.review import run_demo
from annotator.qa.models import QAPair, QueueItem, Revision
from annotator.review.models import Review, ReviewRound, ReviewState, RoundSummary

pytestmark = pytest.mark.django_db


def test_the_demo_round_rejects_one_unit_which_is_reworked_and_a_rerun_adds_nothing(
    make_unit, first_pass, annotator, annotator2, project
):
    out = StringIO()
    assert run_demo(project, out) == {"round": None}
    assert "no unit awaits review yet" in out.getvalue()
    for _ in range(4):
        make_unit()
    for person in (annotator, annotator, annotator2, annotator2):
        first_pass(person)

    out = StringIO()
    result = run_demo(project, out)
    round_ = ReviewRound.objects.get()
    assert result["round"] == round_.pk and len(result["units"]) == 3
    [rejected] = result["rejected"]
    assert rejected == min(result["units"])
    assert sorted(result["accepted"] + result["rejected"]) == sorted(result["units"])
    assert (result["reworked"], result["accepted_after_rework"]) == ([rejected], [rejected])
    assert result["summaries"] == 2 and RoundSummary.objects.count() == 2
    assert ReviewState.objects.get(unit_id=rejected).state == "accepted"
    rework = QueueItem.objects.get(unit_id=rejected, kind="rework")
    assert rework.status == "done" and rework.completed_by == rework.assigned_to
    restored = (
        QAPair.objects.filter(unit_id=rejected, revisions__action="review")
        .filter(revisions__action="delete")
        .distinct()
        .get()
    )
    assert restored.status == "verified"
    assert [r.action for r in Revision.objects.filter(qa_pair=restored).order_by("id")] == [
        "draft",
        "delete",
        "review",
        "keep",
        "review",
    ]
    text = out.getvalue()
    assert f"rejected unit {rejected} with 2 comments" in text and f"reworked unit {rejected}: 1 modified" in text
    assert "issue tags: wrong_answer 1, wrong_delete 1; summaries sent to 2 annotators" in text

    counts = (ReviewRound.objects.count(), Review.objects.count(), QueueItem.objects.count(), Revision.objects.count())
    again = run_demo(project, StringIO())
    assert (
        ReviewRound.objects.count(),
        Review.objects.count(),
        QueueItem.objects.count(),
        Revision.objects.count(),
    ) == counts
    assert again == {**result, "reworked": [], "accepted_after_rework": []}


def test_the_demo_rework_leaves_the_projects_last_deleted_pair_deleted(make_unit, first_pass, annotator, project):
    """The demo must keep deleted QA pairs (the Likert study's filtered control group and
    ``test_demo_setup`` rely on them): the reviewer asks to restore a deleted pair only when another
    deleted pair remains in the project. A CI run whose sample held the only deleted pair lost it."""
    make_unit()
    unit = first_pass(annotator)
    [deleted] = QAPair.objects.filter(project=project, status="deleted")
    out = StringIO()
    result = run_demo(project, out)
    assert result["rejected"] == [unit.pk] and result["reworked"] == [unit.pk]
    assert f"rejected unit {unit.pk} with 1 comment;" in out.getvalue()
    deleted.refresh_from_db()
    assert deleted.status == "deleted"
