"""python manage.py review_round: a seeded sample or all units awaiting review, a tag vocabulary,
and when its reviews are in, the summary to the annotators and the rejected units back as rework
(EgoNight seed 000 App. A.2.1, the second round)."""

import json
import random
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.errors import Invalid
from annotator.qa.models import QueueItem
from annotator.review.models import ReviewRound, ReviewState, RoundSummary
from annotator.review.services import Comment, review_unit

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("review_round", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def six(make_unit, first_pass, annotator, annotator2):
    for _ in range(6):
        make_unit()
    return [first_pass(annotator if i % 2 == 0 else annotator2) for i in range(6)]


def test_a_sample_round_is_seeded_and_its_summary_goes_to_the_annotators(six, project, annotator, annotator2, reviewer):
    out = json.loads(
        run(
            "--project",
            project.slug,
            "--sample",
            "3",
            "--seed",
            "5",
            "--tag",
            "wrong_answer",
            "--tag",
            "vague_question",
            "--json",
        )
    )
    ids = sorted(u.pk for u in six)
    assert out["units"] == sorted(random.Random(5).sample(ids, 3))
    assert (out["sample_size"], out["tags"], out["reviewed"], out["summary"]) == (
        3,
        ["wrong_answer", "vague_question"],
        0,
        None,
    )
    round_ = ReviewRound.objects.get()
    by_id = {u.pk: u for u in six}
    first, second, third = (by_id[i] for i in out["units"])

    with pytest.raises(Invalid) as refused:  # a tag outside the round's vocabulary
        review_unit(
            first.pk,
            reviewer,
            "reject",
            [Comment(first.qa_pairs.filter(status="verified").first().pk, "x", ["typo"])],
            "t-0",
        )
    assert list(refused.value.errors) == ["comments[0].tags[0]"]

    def verified(u, n=0):
        return u.qa_pairs.filter(status="verified").order_by("id")[n].pk

    review_unit(
        first.pk,
        reviewer,
        "reject",
        [
            Comment(verified(first), "Wrong colour.", ["wrong_answer"]),
            Comment(verified(first, 1), "Which person?", ["vague_question"]),
        ],
        "t-1",
    )
    review_unit(
        second.pk, reviewer, "accept", [Comment(verified(second), "Fine, but say 'mug'.", ["wrong_answer"])], "t-2"
    )
    assert ReviewRound.objects.get().closed_at is None and not RoundSummary.objects.exists()
    last = review_unit(
        third.pk, reviewer, "reject", [Comment(verified(third), "Not visible.", ["wrong_answer"])], "t-3"
    )
    assert last.round_closed is True

    round_.refresh_from_db()
    s = round_.summary
    assert (s["units"], s["reviewed"], s["accepted"], s["rejected"]) == (3, 3, 1, 2)
    assert [(t["tag"], t["count"], t["units"]) for t in s["tags"]] == [("wrong_answer", 3, 3), ("vague_question", 1, 1)]
    assert [e["text"] for e in s["tags"][0]["examples"]] == ["Wrong colour.", "Fine, but say 'mug'.", "Not visible."]
    # Rejected units are back with their annotators as rework, first in their queue.
    assert sorted(QueueItem.objects.filter(kind="rework").values_list("unit_id", "assigned_to")) == sorted(
        [
            (first.pk, ReviewState.objects.get(unit=first).annotator_id),
            (third.pk, ReviewState.objects.get(unit=third).annotator_id),
        ]
    )

    # Each annotator: the round's counts, theirs, and examples from their own units only.
    mine = {r.user_id: r.summary for r in RoundSummary.objects.filter(round=round_)}
    assert set(mine) == {annotator.pk, annotator2.pk}
    owner = {u.pk: ReviewState.objects.get(unit=u).annotator_id for u in (first, second, third)}
    for person, summary in mine.items():
        own = [u for u in (first, second, third) if owner[u.pk] == person]
        assert summary["yours"]["reviewed"] == len(own)
        assert summary["yours"]["rework_units"] == [u.pk for u in (first, third) if owner[u.pk] == person]
        wrong = summary["tags"][0]
        assert (wrong["tag"], wrong["count"]) == ("wrong_answer", 3)
        assert {e["unit_id"] for e in wrong["examples"]} <= {u.pk for u in own}
        assert wrong["yours"] == len(wrong["examples"]) == sum(1 for u in own)

    text = run("--project", project.slug, "--show")
    assert f"round {round_.pk} of proj (closed): 3 units, 3 reviewed" in text
    assert "summary: 3 reviewed, 1 accepted, 2 rejected" in text
    assert "  wrong_answer: 3 comments on 3 units" in text and "summaries sent to 2 annotators" in text


def test_all_takes_every_unit_awaiting_review_and_one_round_is_open_at_a_time(six, project, reviewer):
    out = run("--project", project.slug, "--all")
    round_ = ReviewRound.objects.get()
    assert f"round {round_.pk} of proj (open): 6 units, 0 reviewed, all units awaiting review" in out
    assert "tags: any" in out
    assert sorted(round_.units.values_list("unit_id", flat=True)) == sorted(u.pk for u in six)
    with pytest.raises(
        CommandError, match=f"round {round_.pk} of this project is still open \\(0 of 6 units reviewed\\)"
    ):
        run("--project", project.slug, "--sample", "2")
    assert ReviewRound.objects.count() == 1

    review_unit(six[0].pk, reviewer, "accept", [], "all-1")
    closed = run("--project", project.slug, "--close", str(round_.pk))
    assert "(closed): 6 units, 1 reviewed" in closed and "summary: 1 reviewed, 1 accepted, 0 rejected" in closed
    assert not ReviewState.objects.filter(round__isnull=False).exists()
    again = json.loads(run("--project", project.slug, "--all", "--json"))
    assert sorted(again["units"]) == sorted(u.pk for u in six[1:])  # the accepted one awaits nothing


def test_the_command_refuses_bad_arguments_in_plain_words(project, six):
    with pytest.raises(CommandError, match="no project 'nope'"):
        run("--project", "nope", "--all")
    with pytest.raises(CommandError, match="--sample must be 1 or more"):
        run("--project", project.slug, "--sample", "0")
    with pytest.raises(CommandError, match="a tag is 1 to 40 lowercase letters"):
        run("--project", project.slug, "--all", "--tag", "Bad Tag")
    with pytest.raises(CommandError, match="this project has no round yet"):
        run("--project", project.slug, "--show")
    with pytest.raises(CommandError):
        run("--project", project.slug)  # none of --sample, --all, --show, --close
    assert not ReviewRound.objects.exists()


def test_a_round_with_nothing_awaiting_review_is_refused(project):
    with pytest.raises(CommandError, match="no unit of this project awaits review"):
        run("--project", project.slug, "--all")
