"""Study builds over QA pairs (issue 18): ``qa_types`` narrows multiple-choice, open-answer and Likert
studies to some QA types, and a QA pair whose stimulus cannot be shown is refused at build, with its
reason in the build report, never served as a broken trial."""

from __future__ import annotations

import pytest

from annotator.errors import Invalid
from annotator.media.models import Video
from annotator.qa.models import QAPair
from annotator.studies.models import Item, Study
from annotator.studies.services import create_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", ["open_answer", "likert", "mcq"])
def test_a_pair_whose_video_cannot_be_shown_is_refused_with_its_reason(verified, project, kind):
    _, units = verified(2)
    broken = units[0].video
    Video.objects.filter(pk=broken.pk).update(status=Video.Status.FAILED)
    pool = QAPair.objects.filter(project=project, status="verified")
    if kind == "mcq":
        pool = pool.filter(options__isnull=False)
    left_out = {}
    if kind == "open_answer":  # a multiple-choice pair is no open question (issue 21)
        left_out = {
            "QA pairs with options (multiple choice, no open question)": pool.filter(options__isnull=False).count()
        }
        pool = pool.filter(options__isnull=True)
    on_broken = pool.filter(video=broken).count()
    assert on_broken and pool.exclude(video=broken).exists()

    options = {"control_groups": False} if kind == "likert" else {}
    study, report = create_study(project, f"s-{kind}", kind, seed=2, options=options)

    assert report.skipped == {**left_out, "QA pairs that cannot be shown (Video 1: its video is not ready)": on_broken}
    shown = set(Item.objects.filter(condition__study=study, role="scored").values_list("qa_pair_id", flat=True))
    assert shown and not shown & set(pool.filter(video=broken).values_list("pk", flat=True))


def test_qa_types_narrow_the_pool_and_an_unknown_one_is_refused(verified, project):
    verified(2)
    slugs = sorted(
        set(
            QAPair.objects.filter(project=project, status="verified", options__isnull=True).values_list(
                "qa_type__slug", flat=True
            )
        )
    )  # types with open questions
    assert len(slugs) >= 1
    study, _ = create_study(project, "one-type", "open_answer", options={"qa_types": [slugs[0]]})
    assert set(Item.objects.filter(condition__study=study).values_list("subtask", flat=True)) == {slugs[0]}
    assert study.settings["qa_types"] == [slugs[0]]

    with pytest.raises(Invalid, match="project proj has no QA type 'nope'"):
        create_study(project, "unknown-type", "open_answer", options={"qa_types": [slugs[0], "nope"]})
    assert not Study.objects.filter(name="unknown-type").exists()
