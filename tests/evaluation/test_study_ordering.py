"""Models on an EGO-FLIGHT ordering study (issue 18; seed 003 Sec. 3 and App. G): the model gets each
item's frame files in the recorded shown order (the same shuffle every person gets), the hints
stated as the paper states them, the condition's annotation as the scene context; its reply's
order is mapped back to element ids and stored as a model participant's trials, scored by the
study's own scoring; the ``no_hints`` ablation leaves the hints out and is its own column."""

# ruff: noqa: F811 (fixtures imported from tests/studies/conftest.py are test parameters)
from __future__ import annotations

import base64
import re
from io import StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command

from annotator.evaluation import prompts
from annotator.evaluation.models import Evaluation, Prediction
from annotator.inference.models import ModelCall
from annotator.scoring import ordering as scoring
from annotator.studies import services
from annotator.studies.kinds.ordering import shown_elements
from annotator.studies.models import Item, Participant, Trial
from tests.fake_model_server import user_text
from tests.studies.conftest import build  # noqa: F401 (fixture: an EGO-FLIGHT ordering study over a stored video)

pytestmark = pytest.mark.django_db(transaction=True)


def _n(body: dict) -> int:
    """The number of frames the request shows ("You are shown N frames", seed 003 App. G)."""
    return int(re.search(r"You are shown (\d+) frames", user_text(body))[1])


def _images(body: dict) -> list[bytes]:
    return [
        base64.b64decode(p["image_url"]["url"].split(",", 1)[1])
        for p in body["messages"][-1]["content"]
        if p["type"] == "image_url"
    ]


def test_a_model_orders_the_frames_every_person_gets_and_is_scored_as_they_are(build, worker, add_server, model_server):
    study = build(40.0, name="flight")
    items = list(Item.objects.filter(condition__study=study, role="scored").select_related("condition"))
    assert len(items) >= 9 and {len(i.payload["shown"]) for i in items} == {2, 4, 8}
    # The model keeps the shown order, except on the 8-frame items, where it answers nothing readable.
    model_server.responders[""] = lambda body: (
        "I cannot tell."
        if _n(body) == 8
        else "Frame 1 shows a hand. The correct temporal order is: " + ", ".join(str(i) for i in range(1, _n(body) + 1))
    )
    add_server("fake")
    with pytest.raises(SystemExit) as exited:  # some items failed: exit status 1, each failure listed
        call_command(
            "evaluate", "--study", "flight", "--server", "fake", "--frames", "4", stdout=StringIO(), stderr=StringIO()
        )
    assert exited.value.code == 1
    evaluation = Evaluation.objects.get(study=study)
    assert evaluation.status == "failed"  # the 8-frame items: unreadable after every attempt
    predictions = {p.study_item_id: p for p in Prediction.objects.filter(evaluation=evaluation)}
    assert set(predictions) == {i.pk for i in items}

    for item in items:
        p = predictions[item.pk]
        elements = shown_elements(item)
        n = len(elements)
        sent = (p.predict_call or ModelCall.objects.get(pk=p.call_ids[0])).request
        # The frames sent are the item's frame files, in the recorded shown order.
        assert sent["shown"] == item.payload["shown"] == [e["id"] for e in elements]
        assert sent["image_key"] == "frames:" + "|".join(e["image"] for e in elements)
        hints = item.condition.variables.get("hints") or []
        for pos in hints:
            assert f"Frame {pos} should be in temporal position {pos}" in sent["text"]
        assert ("HINTS PROVIDED" in sent["text"]) == bool(hints)
        if item.payload.get("annotation"):
            assert f"The video shows: {item.payload['annotation']}" in sent["text"]
        if n == 8:
            assert (p.status, p.response) == ("failed", None)
            assert "gives no order of the numbers 1 to 8" in p.error
            assert len(p.call_ids) == 3  # recorded and asked again, LLM_MAX_ATTEMPTS in the tests
            continue
        assert (p.status, p.response) == ("done", item.payload["shown"])

    # One request's images are the stored frame files byte for byte, in the shown order.
    item = next(i for i in items if not i.condition.variables.get("hints") and len(i.payload["shown"]) == 4)
    text = predictions[item.pk].predict_call.request["text"]
    body = next(
        b
        for b in model_server.requests
        if user_text(b) == text
        and len(_images(b)) == 4
        and _images(b)[0] == default_storage.open(shown_elements(item)[0]["image"]).read()
    )
    assert _images(body) == [default_storage.open(e["image"]).read() for e in shown_elements(item)]

    # The model is a participant: its trials are scored by the study's scoring, as a person's would be.
    model = Participant.objects.get(study=study, kind="model", model="fake-vlm")
    services.score_pending(study.pk)
    trials = {t.item_id: t for t in Trial.objects.filter(participant=model)}
    assert set(trials) == {i.pk for i in items if len(i.payload["shown"]) != 8}
    for item_id, trial in trials.items():
        item = next(i for i in items if i.pk == item_id)
        expected = scoring.score(item.payload["shown"], item.truth, item.payload.get("hints", []))
        assert trial.scores["kendall_tau_b"] == pytest.approx(expected.kendall_tau_b)

    # The hint ablation: no hint stated, its own column.
    model_server.responders[""] = lambda body: (
        "The correct temporal order is: " + ", ".join(str(i) for i in range(1, _n(body) + 1))
    )
    call_command(
        "evaluate",
        "--study",
        "flight",
        "--server",
        "fake",
        "--frames",
        "4",
        "--ablation",
        "no_hints",
        stdout=StringIO(),
        stderr=StringIO(),
    )
    ablated = Evaluation.objects.get(study=study, ablation="no_hints")
    assert ablated.participant.model == "fake-vlm (ordering hints not stated)"
    hinted = [
        p
        for p in Prediction.objects.filter(evaluation=ablated).select_related("study_item__condition", "predict_call")
        if p.study_item.condition.variables.get("hints")
    ]
    assert hinted and all("HINTS PROVIDED" not in p.predict_call.request["text"] for p in hinted)
    assert set(Participant.objects.filter(study=study, kind="model").values_list("model", flat=True)) == {
        "fake-vlm",
        "fake-vlm (ordering hints not stated)",
    }


def test_an_order_is_read_from_the_papers_answer_line_or_not_at_all():
    assert prompts.read_order("Frame 2 is first.\nThe correct temporal order is: 3, 1, 4, 2", 4) == [3, 1, 4, 2]
    assert prompts.read_order("The correct temporal order is: [2, 1]. Or maybe 1, 2.", 2) == [2, 1]
    assert prompts.read_order("I think 4, 3, 2, 1", 4) == [4, 3, 2, 1]
    assert prompts.read_order("The correct temporal order is: 1, 1, 2, 3", 4) is None
    assert prompts.read_order("The correct temporal order is: 1, 2, 3, 5", 4) is None
    assert prompts.read_order("no idea", 4) is None
    assert prompts.read_rating("4") == 4 and prompts.read_rating("Score: 2 of 5") == 2
    assert prompts.read_rating("6") is None and prompts.read_rating("about 3.5") is None


def test_a_study_evaluation_refuses_what_it_cannot_run(build, add_server):
    from annotator.errors import Invalid
    from annotator.evaluation import study_items

    study = build(40.0, name="small")
    add_server("fake")
    for kwargs, message in (
        ({"frames": "0"}, "frames must be a whole number from 1 to 64"),
        ({"frames": "12=4"}, "study small has no condition 12"),
        ({"frames": "1=x"}, "is not condition=frames"),
        ({"ablation": "blind"}, "ablation must be one of"),
        ({"server": "nope"}, "has no model server 'nope'"),
    ):
        with pytest.raises(Invalid, match=message):
            study_items.start(study, **{"server": "fake", **kwargs})
    assert not Evaluation.objects.exists() and not Participant.objects.filter(kind="model").exists()
