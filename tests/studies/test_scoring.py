"""Scoring claims its rows (issue 7, C; ``services.score_pending``): scorers running at once never
score one row twice, a row another scorer holds is skipped rather than waited for, and what is
written is the kind's score of the row (late answers wrong, unanswered trials left alone)."""

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotator.projects.services import ensure_member
from annotator.studies.kinds import ScoreRow, ordering
from annotator.studies.models import Condition, Item, Participant, Prediction, Study, Trial
from annotator.studies.services import score_pending


def _ordering_study(project, n_items: int = 40) -> tuple[Study, list[Item]]:
    """An ordering study of ``n_items`` 8-element items (element ids need no rows to be scored)."""
    study = Study.objects.create(project=project, name="race", kind="ordering")
    cond = Condition.objects.create(
        study=study,
        number=1,
        label="8 frames",
        variables={"n_frames": 8, "clip_length": "medium", "annotation": "none", "hints": [], "item_kind": "frames"},
    )
    items = [
        Item.objects.create(
            condition=cond,
            index=i,
            truth=list(range(100 * i, 100 * i + 8)),
            payload={"shown": list(range(100 * i, 100 * i + 8))[::-1], "hints": []},
        )
        for i in range(n_items)
    ]
    return study, items


def _answered_trials(study, items, people) -> list[Trial]:
    """Every person answered every item with the reversed order."""
    now = timezone.now()
    participants = [Participant.objects.create(study=study, user=u, stage="done") for u in people]
    return Trial.objects.bulk_create(
        [
            Trial(
                participant=p,
                item=item,
                position=i,
                response=item.truth[::-1],
                client_rt_ms=900.0,
                served_at=now,
                shown_at=now,
                answered_at=now,
            )
            for p in participants
            for i, item in enumerate(items)
        ]
    )


@pytest.mark.django_db(transaction=True)
def test_two_scorers_at_once_score_every_row_exactly_once(project):
    study, items = _ordering_study(project)
    Prediction.objects.bulk_create(
        [
            Prediction(study=study, model=f"m{m}", item=item, predicted=item.truth[::-1])
            for m in range(20)
            for item in items
        ]
    )  # 800 unscored predictions
    people = [ensure_member(f"p{i}", role="annotator", project=project)[0] for i in range(5)]
    _answered_trials(study, items, people)  # and 200 answered, unscored trials
    counts: list[int] = []
    errors: list[BaseException] = []
    go = threading.Barrier(2)

    def scorer():
        try:
            go.wait()
            counts.append(score_pending(study.pk, batch_size=20))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=scorer) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == [] and len(counts) == 2
    assert sum(counts) == 1000 and min(counts) > 0, counts  # both worked, and no row was scored twice
    assert Prediction.objects.filter(scored_at__isnull=True).count() == 0
    assert Trial.objects.filter(scored_at__isnull=True).count() == 0
    assert set(Prediction.objects.values_list("scores__kendall_tau_b", flat=True)) == {-1.0}
    assert set(Trial.objects.values_list("scores__kendall_tau_b", flat=True)) == {-1.0}
    assert score_pending(study.pk) == 0  # nothing left: a third run scores nothing


@pytest.mark.django_db(transaction=True)
def test_a_scorer_skips_rows_another_holds_instead_of_waiting_for_them(project):
    """Steps: a holder locks 10 predictions in an open transaction (as a scorer mid-batch does); a
    scorer then scores the 30 others and returns while they are held; once the holder lets go
    (rolls back, as a scorer that failed would), the next call scores the 10."""
    study, items = _ordering_study(project)
    Prediction.objects.bulk_create(
        [Prediction(study=study, model="m", item=item, predicted=item.truth) for item in items]
    )
    held_ids = list(Prediction.objects.order_by("pk").values_list("pk", flat=True)[:10])
    locked, release = threading.Event(), threading.Event()

    def holder():
        try:
            with transaction.atomic():
                list(Prediction.objects.select_for_update().filter(pk__in=held_ids))
                locked.set()
                release.wait(60)
                transaction.set_rollback(True)
        finally:
            connection.close()

    result: list[int] = []

    def scorer():
        try:
            result.append(score_pending(study.pk, batch_size=7))
        finally:
            connection.close()

    holding = threading.Thread(target=holder)
    holding.start()
    assert locked.wait(30)
    scoring = threading.Thread(target=scorer)
    scoring.start()
    scoring.join(20)
    finished_while_held = not scoring.is_alive()
    release.set()
    holding.join(30)
    scoring.join(30)
    assert finished_while_held, "the scorer waited for rows another transaction held"
    assert result == [30]
    assert set(Prediction.objects.filter(scored_at__isnull=True).values_list("pk", flat=True)) == set(held_ids)
    assert score_pending(study.pk) == 10
    assert Prediction.objects.filter(scored_at__isnull=True).count() == 0


def test_what_is_written_is_the_kinds_score_of_each_row(project, annotator):
    """Ordering trials and a prediction: the stored ``scores`` JSON is ``kinds.ordering.score`` of
    the row, a late right answer is scored wrong, an unanswered trial is not scored, and every row
    of a call gets one ``scored_at``."""
    study, items = _ordering_study(project, n_items=4)
    now = timezone.now()
    p = Participant.objects.create(study=study, user=annotator, stage="trials")
    right, swapped, late, open_ = (
        Trial.objects.create(participant=p, item=items[0], position=0, response=items[0].truth, answered_at=now),
        Trial.objects.create(
            participant=p,
            item=items[1],
            position=1,
            answered_at=now,
            response=[items[1].truth[1], items[1].truth[0], *items[1].truth[2:]],
        ),
        Trial.objects.create(
            participant=p, item=items[2], position=2, response=items[2].truth, timed_out=True, answered_at=now
        ),
        Trial.objects.create(participant=p, item=items[3], position=3),
    )
    model = Prediction.objects.create(study=study, model="m", item=items[3], predicted=items[3].truth[::-1])
    assert score_pending(study.pk) == 4
    rows = {t.pk: t for t in Trial.objects.all()}
    expected = ordering.score(
        [ScoreRow(t.item.truth, t.item.payload, t.response, t.timed_out) for t in (right, swapped, late)]
    )
    assert [rows[t.pk].scores for t in (right, swapped, late)] == expected
    assert rows[right.pk].scores["exact_match"] == 1.0
    assert rows[swapped.pk].scores["kendall_tau_b"] == round((27 - 1) / 28, 12)
    assert (rows[late.pk].scores["exact_match"], rows[late.pk].scores["kendall_tau_b"]) == (0.0, -1.0)
    assert (rows[open_.pk].scores, rows[open_.pk].scored_at) == (None, None)
    model.refresh_from_db()
    assert model.scores == ordering.score([ScoreRow(items[3].truth, items[3].payload, items[3].truth[::-1])])[0]
    assert len({rows[t.pk].scored_at for t in (right, swapped, late)}) == 1
    assert score_pending(study.pk) == 0


def test_a_study_that_does_not_exist_scores_nothing(db):
    assert score_pending(987654) == 0
