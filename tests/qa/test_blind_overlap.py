"""A blind overlap pass sees no first-pass state (issue 19 review finding: the QA list page showed
"machine, kept" with the current text, and the claim returned the current version and interval
answers). It is shown each machine QA pair as it was before any person touched it: the content,
version and answer interval of its last revision before the first person's, nowhere the first
pass's text, version, interval, status or provenance."""

import hashlib

import pytest

from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.services import save_drafts
from annotator.drafts.templates import DraftSpec
from annotator.media.models import Video
from annotator.projects.services import ensure_member
from annotator.qa.models import QAPair, QAType, Verdict
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, set_queue_policy, submit_unit
from tests.conftest import uh

DRAFTED = {
    "scene_description": ("What happens in the clip?", "a cup is lifted"),
    "temporal_localisation": ("When is the cup lifted?", "2.00-4.00 s"),
}


@pytest.fixture
def blind_unit(project, annotator):
    """A unit with an open-answer, a multiple-choice and an interval machine draft (2-4 s), whose
    first pass (by ``annotator``) rewrote the open answer, moved the interval to 6-8 s and kept the
    multiple-choice pair; an overlap pass on it is still open."""
    set_queue_policy(project, double_check_share=0, overlap_share=1.0, overlap_k=2)
    QAType.objects.create(project=project, slug="scene_description", name="Scene description")
    QAType.objects.create(project=project, slug="object_recognition", name="Object recognition")
    QAType.objects.create(
        project=project,
        slug="temporal_localisation",
        name="Temporal localisation",
        answer_kind=QAType.AnswerKind.INTERVAL,
    )
    video = Video.objects.create(
        project=project,
        sha256=hashlib.sha256(b"blind").hexdigest(),
        filename="blind.mp4",
        status=Video.Status.READY,
        duration_s=10.0,
        fps=25.0,
        width=320,
        height=240,
    )
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="templates-v1"),
        video=video,
    )
    save_drafts(
        job,
        [
            DraftSpec("scene_description", *DRAFTED["scene_description"], 0.0, 10.0, source_key="a"),
            DraftSpec(
                "object_recognition",
                "Which object appears?",
                "cup",
                0.0,
                10.0,
                source_key="b",
                options=["pan", "cup", "lamp"],
                answer_index=1,
            ),
            DraftSpec(
                "temporal_localisation",
                *DRAFTED["temporal_localisation"],
                0.0,
                10.0,
                source_key="c",
                params={"answer_start_s": 2.0, "answer_end_s": 4.0},
            ),
        ],
        actor="templates/templates-v1",
    )
    unit = video.units.get()
    open_pair, mcq, interval = unit.qa_pairs.order_by("id")
    assert claim_next(project, annotator).kind == "first_pass"
    submit_unit(
        unit.pk,
        annotator,
        idempotency_key="first",
        time_spent_ms=1000,
        additions=[],
        decisions=[
            Decision(open_pair.pk, "modify", answer="FIRST PASS ANSWER"),
            Decision(mcq.pk, "keep"),
            Decision(interval.pk, "modify", answer_start_s=6.0, answer_end_s=8.0),
        ],
    )
    assert list(unit.qa_pairs.order_by("id").values_list("version", "provenance")) == [
        (2, "machine_modified"),
        (2, "machine_kept"),
        (2, "machine_modified"),
    ]
    return unit


@pytest.fixture
def reviewer(project):
    return ensure_member("rev", role="reviewer", project=project)[0]


def test_the_claim_of_a_blind_pass_shows_each_pair_as_drafted_with_its_drafted_version_and_interval(
    blind_unit, project, reviewer, client
):
    client.force_login(reviewer)
    response = client.post(f"/api/projects/{project.slug}/queue/next/")
    assert response.status_code == 200
    payload = response.json()
    assert (payload["id"], payload["queue"]["kind"]) == (uh(blind_unit), "overlap")
    shown = [
        (
            p["question"],
            p["answer"],
            p["options"],
            p["answer_index"],
            p["version"],
            p["answer_start_s"],
            p["answer_end_s"],
        )
        for p in payload["qa_pairs"]
    ]
    assert shown == [
        ("What happens in the clip?", "a cup is lifted", None, None, 1, None, None),
        ("Which object appears?", "cup", ["pan", "cup", "lamp"], 1, 1, None, None),
        ("When is the cup lifted?", "2.00-4.00 s", None, None, 1, 2.0, 4.0),
    ]
    body = response.content.decode()
    assert "FIRST PASS ANSWER" not in body and "machine_" not in body


def test_a_blind_pass_that_keeps_everything_records_the_drafted_content_in_its_verdicts(blind_unit, project, reviewer):
    assert claim_next(project, reviewer).kind == "overlap"
    pairs = list(blind_unit.qa_pairs.order_by("id"))
    submit_unit(
        blind_unit.pk,
        reviewer,
        idempotency_key="blind",
        time_spent_ms=1000,
        additions=[],
        decisions=[Decision(p.pk, "keep") for p in pairs],
    )
    verdicts = Verdict.objects.filter(item__kind="overlap").order_by("qa_pair_id")
    assert [(v.after["answer"], v.after["answer_start_s"], v.after["answer_end_s"]) for v in verdicts] == [
        ("a cup is lifted", None, None),
        ("cup", None, None),
        ("2.00-4.00 s", 2.0, 4.0),
    ]
    # The QA pairs stay as the first pass left them.
    assert list(QAPair.objects.filter(unit=blind_unit).order_by("id").values_list("answer", "answer_start_s")) == [
        ("FIRST PASS ANSWER", None),
        ("cup", None),
        ("2.00-4.00 s", 6.0),
    ]


def test_a_blind_pass_moving_the_interval_back_to_the_first_pass_one_is_a_modify_not_a_keep(
    blind_unit, project, reviewer
):
    """What the blind pass was shown (2-4 s) is the base its decisions compare with, not the first
    pass's 6-8 s: giving 2-4 s is 'modify without a change', giving 6-8 s is a change."""
    from annotator.errors import Invalid

    claim_next(project, reviewer)
    open_pair, mcq, interval = blind_unit.qa_pairs.order_by("id")
    keep = [Decision(open_pair.pk, "keep"), Decision(mcq.pk, "keep")]
    with pytest.raises(Invalid) as err:
        submit_unit(
            blind_unit.pk,
            reviewer,
            idempotency_key="same",
            time_spent_ms=1000,
            additions=[],
            decisions=[*keep, Decision(interval.pk, "modify", answer_start_s=2.0, answer_end_s=4.0)],
        )
    assert err.value.errors == {"decisions[2]": "modify without a change: use keep"}
    submit_unit(
        blind_unit.pk,
        reviewer,
        idempotency_key="moved",
        time_spent_ms=1000,
        additions=[],
        decisions=[*keep, Decision(interval.pk, "modify", answer_start_s=6.0, answer_end_s=8.0)],
    )
    assert Verdict.objects.get(item__kind="overlap", qa_pair=interval).action == "modify"


def test_the_qa_list_hides_the_pairs_of_a_unit_the_person_verifies_blind_until_they_submit(
    blind_unit, project, reviewer, client
):
    claim_next(project, reviewer)
    client.force_login(reviewer)
    for query in ("", "?status=verified", "?qa_type=scene_description"):
        html = client.get(f"/projects/{project.slug}/qa/{query}").content.decode()
        assert "FIRST PASS ANSWER" not in html and "machine, kept" not in html and "machine, modified" not in html, (
            query
        )
        assert "3 QA pairs of the unit you are verifying blind are hidden until you submit it." in html, query
    pairs = list(blind_unit.qa_pairs.order_by("id"))
    submit_unit(
        blind_unit.pk,
        reviewer,
        idempotency_key="blind",
        time_spent_ms=1000,
        additions=[],
        decisions=[Decision(p.pk, "keep") for p in pairs],
    )
    html = client.get(f"/projects/{project.slug}/qa/").content.decode()
    assert "FIRST PASS ANSWER" in html and "machine, kept" in html and "hidden until you submit" not in html


def test_the_first_passes_own_claim_shows_the_current_state(project, annotator, annotator2, make_unit):
    """Not blind: a first pass and a double-check see the pairs as they are now (the rule above
    applies to overlap passes only)."""
    unit = make_unit(1)
    pair = unit.qa_pairs.order_by("id").first()
    pair.question, pair.version = "edited by an admin", 2
    pair.save()
    from annotator.qa.selectors import unit_payload

    payload = unit_payload(claim_next(project, annotator), annotator)
    assert (payload["qa_pairs"][0]["question"], payload["qa_pairs"][0]["version"]) == ("edited by an admin", 2)
