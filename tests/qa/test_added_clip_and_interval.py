"""Adding QA on the verify page's service: the QA type must be chosen, the clip is bounded to the
unit, and interval answers (X-LeBench temporal localisation, seed 002 App. C.1) are bounded and
saved on add and modify with revisions that carry them."""

import pytest

from annotator.errors import DomainError
from annotator.qa.models import QAPair, QAType, Revision, Submission
from annotator.qa.queue import claim_next
from annotator.qa.selectors import unit_payload
from annotator.qa.services import Addition, Decision, submit_unit
from api.exceptions import status_of
from tests.conftest import qh


def _claim(unit, user):
    return claim_next(unit.project, user)


def _state(unit):
    return (
        list(
            QAPair.objects.filter(unit=unit)
            .order_by("id")
            .values_list("id", "status", "answer", "answer_start_s", "answer_end_s", "version")
        ),
        Revision.objects.count(),
        Submission.objects.count(),
    )


def _keep_all(unit):
    return [Decision(p.pk, "keep") for p in unit.qa_pairs.order_by("id")]


@pytest.fixture
def interval_type(project):
    return QAType.objects.create(
        project=project,
        slug="temporal_localisation",
        name="Temporal localisation",
        answer_kind=QAType.AnswerKind.INTERVAL,
    )


def test_an_added_qa_pair_without_a_qa_type_is_refused_in_plain_words_and_nothing_is_saved(make_unit, annotator):
    unit = _claim(make_unit(), annotator).unit
    before = _state(unit)
    with pytest.raises(DomainError) as err:
        submit_unit(
            unit.pk,
            annotator,
            idempotency_key="k",
            time_spent_ms=None,
            decisions=_keep_all(unit),
            additions=[Addition("", "What is on the table?", "a cup", 1.0, 4.0)],
        )
    assert status_of(err.value) == 400
    assert err.value.errors == {"added[0].qa_type": "choose the QA type of the added QA pair"}
    assert _state(unit) == before


@pytest.mark.parametrize("clip", [(-1.0, 4.0), (4.0, 4.0), (5.0, 3.0), (2.0, 10.5)])
def test_an_added_clip_outside_the_unit_or_not_ending_after_it_starts_is_refused(make_unit, annotator, clip):
    unit = _claim(make_unit(duration_s=10.0), annotator).unit
    before = _state(unit)
    with pytest.raises(DomainError) as err:
        submit_unit(
            unit.pk,
            annotator,
            idempotency_key="k",
            time_spent_ms=None,
            decisions=_keep_all(unit),
            additions=[Addition("scene_description", "Q?", "A", *clip)],
        )
    assert err.value.errors == {"added[0].clip": "clip must lie within 0.00-10.00 s"}
    assert _state(unit) == before


def test_an_added_interval_answer_is_saved_with_its_clip_and_written_out_as_the_answer(
    make_unit, annotator, interval_type
):
    unit = _claim(make_unit(duration_s=10.0), annotator).unit
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="k",
        time_spent_ms=None,
        decisions=_keep_all(unit),
        additions=[
            Addition(
                "temporal_localisation", "When is the cup lifted?", "", 1.0, 9.0, answer_start_s=2.5, answer_end_s=4.0
            )
        ],
    )
    pair = QAPair.objects.get(origin="human")
    assert (
        pair.qa_type.slug,
        pair.clip_start_s,
        pair.clip_end_s,
        pair.answer_start_s,
        pair.answer_end_s,
        pair.answer,
    ) == ("temporal_localisation", 1.0, 9.0, 2.5, 4.0, "2.50-4.00 s")
    rev = Revision.objects.get(qa_pair=pair)
    assert (rev.action, rev.after["answer_start_s"], rev.after["answer_end_s"]) == ("add", 2.5, 4.0)


@pytest.mark.parametrize(
    "interval, message",
    [
        ((None, None), "set the answer's start and end (the answer of this QA type is a time interval)"),
        ((4.0, 2.0), "the answer interval must lie within 0.00-10.00 s and end after it starts"),
        ((3.0, 11.0), "the answer interval must lie within 0.00-10.00 s and end after it starts"),
    ],
)
def test_a_bad_interval_answer_is_refused(make_unit, annotator, interval_type, interval, message):
    unit = _claim(make_unit(duration_s=10.0), annotator).unit
    before = _state(unit)
    with pytest.raises(DomainError) as err:
        submit_unit(
            unit.pk,
            annotator,
            idempotency_key="k",
            time_spent_ms=None,
            decisions=_keep_all(unit),
            additions=[
                Addition(
                    "temporal_localisation",
                    "When?",
                    "",
                    0.0,
                    10.0,
                    answer_start_s=interval[0],
                    answer_end_s=interval[1],
                )
            ],
        )
    assert err.value.errors == {"added[0].answer_start_s": message}
    assert _state(unit) == before


def test_a_text_qa_type_takes_no_interval(make_unit, annotator):
    unit = _claim(make_unit(), annotator).unit
    with pytest.raises(DomainError) as err:
        submit_unit(
            unit.pk,
            annotator,
            idempotency_key="k",
            time_spent_ms=None,
            decisions=_keep_all(unit),
            additions=[Addition("scene_description", "Q?", "A", answer_start_s=1.0, answer_end_s=2.0)],
        )
    assert err.value.errors == {
        "added[0].answer_start_s": "only QA types whose answer is a time interval take answer start and end"
    }


def test_modifying_an_interval_answer_saves_it_with_a_revision_and_the_payload_shows_it(
    make_unit, annotator, interval_type
):
    unit = make_unit(duration_s=10.0)
    pair = unit.qa_pairs.order_by("id").first()
    QAPair.objects.filter(pk=pair.pk).update(qa_type=interval_type, answer_start_s=1.0, answer_end_s=2.0)
    item = _claim(unit, annotator)
    shown = {q["id"]: q for q in unit_payload(item, annotator)["qa_pairs"]}[qh(pair)]
    assert (shown["answer_kind"], shown["answer_start_s"], shown["answer_end_s"]) == ("interval", 1.0, 2.0)

    bad = [Decision(pair.pk, "modify", answer_start_s=3.0, answer_end_s=12.0)] + _keep_all(unit)[1:]
    before = _state(unit)
    with pytest.raises(DomainError) as err:
        submit_unit(unit.pk, annotator, idempotency_key="bad", time_spent_ms=None, decisions=bad, additions=[])
    assert err.value.errors == {
        "decisions[0].answer_start_s": "the answer interval must lie within 0.00-10.00 s and end after it starts"
    }
    assert _state(unit) == before

    good = [Decision(pair.pk, "modify", answer_start_s=3.0, answer_end_s=5.5, version=1)] + _keep_all(unit)[1:]
    submit_unit(unit.pk, annotator, idempotency_key="good", time_spent_ms=None, decisions=good, additions=[])
    pair.refresh_from_db()
    assert (pair.answer_start_s, pair.answer_end_s, pair.provenance, pair.version) == (3.0, 5.5, "machine_modified", 2)
    rev = Revision.objects.get(qa_pair=pair, action="modify")
    assert (rev.before["answer_start_s"], rev.before["answer_end_s"]) == (1.0, 2.0)
    assert (rev.after["answer_start_s"], rev.after["answer_end_s"]) == (3.0, 5.5)
