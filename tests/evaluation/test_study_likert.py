"""A model rates a Likert study's records (X-LeBench App. D) with what its raters got (issue 18): the
criterion and what 1 and 5 mean, the record's description and its videos under their labels; the
reply's score is stored as the model participant's trial, scored by the study's own scoring."""

# ruff: noqa: F811 (fixtures imported from tests/studies/conftest.py are test parameters)
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from annotator.evaluation.models import Evaluation, Prediction
from annotator.qa import stimulus
from annotator.studies import services
from annotator.studies.models import Item, Participant, Trial
from tests.fake_model_server import n_images, user_text
from tests.studies.conftest import verified  # noqa: F401 (fixture: verified units)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_model_rates_records_seeing_their_videos_and_is_scored_as_raters_are(
    verified, project, worker, add_server, model_server
):
    verified(2)
    study, _ = services.create_study(
        project, "realism", "likert", preset="xlebench-realism", options={"attention_items": 0}
    )
    items = list(Item.objects.filter(condition__study=study, role="scored").select_related("condition"))
    assert len(items) == 4 and all(stimulus.from_json(i.payload).media[0].video_id for i in items)
    model_server.responders[""] = lambda body: "Score: 4" if "realism" in user_text(body) else "2"
    add_server("fake")
    call_command(
        "evaluate", "--study", "realism", "--server", "fake", "--frames", "3", stdout=StringIO(), stderr=StringIO()
    )
    evaluation = Evaluation.objects.get(study=study)
    assert evaluation.status == "done"
    for p in Prediction.objects.filter(evaluation=evaluation).select_related("study_item__condition", "predict_call"):
        item, sent = p.study_item, p.predict_call.request
        criterion = item.condition.variables["criterion"]
        assert sent["text"].startswith(f"Rate the following on {criterion.replace('_', ' ')}: ")
        assert sent["text"].endswith("Reply with the score alone, one whole number from 1 to 5.")
        (medium,) = stimulus.from_json(item.payload).media
        assert sent["video"] == medium.video_id and len(sent["frame_times_s"]) == 3
        assert p.response == (4 if criterion == "realism" else 2)
    bodies = [b for b in model_server.requests if "Rate the following" in user_text(b)]
    assert len(bodies) == 4 and all(n_images(b) == 3 for b in bodies)
    model = Participant.objects.get(study=study, kind="model")
    services.score_pending(study.pk)
    assert sorted(t.scores["score"] for t in Trial.objects.filter(participant=model)) == [2.0, 2.0, 4.0, 4.0]
