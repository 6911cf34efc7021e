"""Scoring claims its rows (issue 7, C): scorers running at once never score one row twice."""

import threading

import pytest
from django.db import connection

from annotator.experiments.models import Clip, Condition, Experiment, Prediction
from annotator.experiments.services import score_pending
from annotator.media.models import Video
from tests.experiments.test_taking_part import _item


@pytest.mark.django_db(transaction=True)
def test_two_scorers_at_once_score_every_row_exactly_once(project):
    exp = Experiment.objects.create(project=project, name="race")
    video = Video.objects.create(project=project, sha256="a" * 64, filename="v.mp4", status="ready", duration_s=999)
    cond = Condition.objects.create(experiment=exp, number=1, label="c", n_frames=8, clip_length="medium", annotation="none")
    items = [_item(cond, Clip.objects.create(experiment=exp, video=video, start_s=i * 20, end_s=i * 20 + 15,
                                             length_class="medium"), i, False) for i in range(40)]
    Prediction.objects.bulk_create([Prediction(experiment=exp, model=f"m{m}", item=item, predicted=item.truth[::-1])
                                    for m in range(20) for item in items])  # 800 unscored rows
    counts: list[int] = []
    errors: list[BaseException] = []
    go = threading.Barrier(2)

    def scorer():
        try:
            go.wait()
            counts.append(score_pending(exp.pk, batch_size=20))
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
    assert sum(counts) == 800 and min(counts) > 0, counts  # both worked, and no row was scored twice
    assert Prediction.objects.filter(scored_at__isnull=True).count() == 0
    assert set(Prediction.objects.values_list("kendall_tau_b", flat=True)) == {-1.0}
    assert score_pending(exp.pk) == 0  # nothing left: a third run scores nothing
