"""Multiple-choice items whose options are videos (EgoExoBench seed 001 Fig. 2: a query video and
candidates "Video 1", "Video 2", ...), imported with the import pipeline: kept on the draft and its
QA pair, served with the unit (labels, ranges, URLs, the answer), kept through verification; bad
labelled videos refuse the file by line with nothing written."""

import re

import pytest
from django.core.management.base import CommandError

from annotator.drafts.models import Draft, DraftRun
from annotator.media.file_access import may_see_video
from annotator.media.models import Video
from annotator.projects.services import ensure_member
from annotator.qa.models import QAPair
from annotator.qa.queue import claim_next
from annotator.qa.selectors import unit_payload
from annotator.qa.services import Decision, submit_unit
from tests.drafts.conftest import run_draft
from tests.drafts.test_import import bikes, run_import, write_jsonl  # noqa: F401 (bikes: the fixture)

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Which candidate video most accurately matches the activities in the query video?"


@pytest.fixture
def candidates(bikes):  # noqa: F811
    """Three more videos of project imp (rows only: labelled videos are references)."""
    return [
        Video.objects.create(
            project=bikes.project,
            sha256=(c * 64),
            filename=f"cand-{c}.mp4",
            status="ready",
            duration_s=8.0,
            fps=25,
            rendition=f"renditions/cand-{c}.mp4",
        )
        for c in "abc"
    ]


def _row(bikes, candidates, **over):  # noqa: F811
    _, b, c = candidates
    row = {
        "video": "bikes.mp4",
        "qa_type": "task_relation",
        "question": QUESTION,
        "answer": "Video 3",
        "options": ["Video 1", "Video 2", "Video 3"],
        "videos": [
            {"label": "Query video", "video": "bikes.mp4", "role": "query", "start_s": 1.0, "end_s": 6.0},
            {"label": "Video 1", "video": "cand-a.mp4", "role": "candidate"},
            {"label": "Video 2", "video": {"sha256": b.sha256}, "role": "candidate", "start_s": 2, "end_s": 5},
            {"label": "Video 3", "video_id": c.pk, "role": "candidate", "start_s": 0.5, "end_s": 8.0},
        ],
    }
    return {**row, **over}


def test_video_options_are_imported_served_and_kept_through_verification(bikes, candidates, tmp_path):  # noqa: F811
    a, b, c = candidates
    run_import(write_jsonl(tmp_path / "tr.jsonl", [_row(bikes, candidates)]))
    expected = [
        {"label": "Query video", "video_id": bikes.pk, "role": "query", "start_s": 1.0, "end_s": 6.0},
        {"label": "Video 1", "video_id": a.pk, "role": "candidate", "start_s": 0.0, "end_s": 8.0},
        {"label": "Video 2", "video_id": b.pk, "role": "candidate", "start_s": 2.0, "end_s": 5.0},
        {"label": "Video 3", "video_id": c.pk, "role": "candidate", "start_s": 0.5, "end_s": 8.0},
    ]
    pair = QAPair.objects.get()
    assert (pair.videos, pair.options, pair.answer_index, pair.answer) == (
        expected,
        ["Video 1", "Video 2", "Video 3"],
        2,
        "Video 3",
    )
    assert pair.draft.params["videos"] == expected

    annotator, _ = ensure_member("ann", role="annotator", project=bikes.project)
    assert not may_see_video(annotator, c)
    item = claim_next(bikes.project, annotator)
    shown = unit_payload(item, annotator)["qa_pairs"][0]
    assert [(v["label"], v["role"], v["start_s"], v["end_s"], v["url"]) for v in shown["videos"]] == [
        ("Query video", "query", 1.0, 6.0, bikes.rendition.name and f"/files/{bikes.rendition.name}"),
        ("Video 1", "candidate", 0.0, 8.0, "/files/renditions/cand-a.mp4"),
        ("Video 2", "candidate", 2.0, 5.0, "/files/renditions/cand-b.mp4"),
        ("Video 3", "candidate", 0.5, 8.0, "/files/renditions/cand-c.mp4"),
    ]
    assert (shown["options"], shown["answer_index"]) == (["Video 1", "Video 2", "Video 3"], 2)  # not a participant
    assert may_see_video(annotator, c)  # the holder of the unit may play every labelled video

    submit_unit(
        item.unit_id,
        annotator,
        idempotency_key="k",
        time_spent_ms=None,
        additions=[],
        decisions=[Decision(pair.pk, "modify", question=QUESTION + " (same task)")],
    )
    pair.refresh_from_db()
    assert (pair.status, pair.provenance, pair.videos, pair.answer) == (
        "verified",
        "machine_modified",
        expected,
        "Video 3",
    )


@pytest.mark.parametrize(
    "over, message",
    [
        (
            lambda a, b, c: {
                "videos": [
                    {"label": "Video 1", "video": "cand-a.mp4", "role": "query"},
                    {"label": "video  1", "video": "cand-b.mp4", "role": "candidate"},
                ],
                "options": ["Video 2", "Video 3"],
                "answer": "Video 2",
            },
            "videos: the label 'video  1' is used twice",
        ),
        (
            lambda a, b, c: {"options": ["Video 1", "Video 3", "Video 2"]},
            "options must be the candidate videos' labels in the order listed: Video 1, Video 2, Video 3",
        ),
        (
            lambda a, b, c: {
                "videos": [
                    {"label": "Video 1", "video": "cand-z.mp4", "role": "candidate"},
                    {"label": "Video 2", "video": "cand-a.mp4", "role": "candidate"},
                    {"label": "Video 3", "video": "cand-b.mp4", "role": "candidate"},
                ]
            },
            "Video 1: no video cand-z.mp4 in project imp",
        ),
        (
            lambda a, b, c: {
                "videos": [
                    {"label": "Video 1", "video": "cand-a.mp4", "role": "candidate", "start_s": 2, "end_s": 9},
                    {"label": "Video 2", "video": "cand-b.mp4", "role": "candidate"},
                    {"label": "Video 3", "video": "cand-c.mp4", "role": "candidate"},
                ]
            },
            "Video 1: 2-9 s is not within cand-a.mp4 (8 s)",
        ),
        (
            lambda a, b, c: {"videos": [{"label": "Video 1", "video": "cand-a.mp4", "role": "distractor"}]},
            "videos[1].role must be one of query, reference, candidate",
        ),
        (
            lambda a, b, c: {"videos": [{"label": "Video 1", "role": "query"}]},
            "videos[1] (Video 1) must name its video",
        ),
        (
            lambda a, b, c: {"videos": [{"label": "V", "video": "cand-a.mp4", "role": "query"}] * 11},
            "videos must be a list of at most 10 labelled videos",
        ),
    ],
)
def test_bad_labelled_videos_refuse_the_file_by_line_and_nothing_is_written(bikes, candidates, tmp_path, over, message):  # noqa: F811
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"video": "bikes.mp4", "qa_type": "counting", "question": "How many?", "answer": "2"},
            _row(bikes, candidates, **over(*candidates)),
        ],
    )
    with pytest.raises(CommandError, match=re.escape(f"line 2: {message}")):
        run_draft("--project", "imp", "--pipeline", "import", "--file", path)
    assert (DraftRun.objects.count(), Draft.objects.count(), QAPair.objects.count()) == (0, 0, 0)


def test_text_options_may_mention_labelled_videos_without_candidates(bikes, candidates, tmp_path):  # noqa: F811
    row = _row(
        bikes,
        candidates,
        question="What is the difference in the actions of the feet in the two videos?",
        options=["In Video 1 the left foot", "In Video 1 the right foot"],
        answer="In Video 1 the left foot",
        videos=[
            {"label": "Video 1", "video": "bikes.mp4", "role": "query"},
            {"label": "Video 2", "video": "cand-a.mp4", "role": "reference"},
        ],
    )
    run_import(write_jsonl(tmp_path / "bpa.jsonl", [row]))
    assert [v["label"] for v in QAPair.objects.get().videos] == ["Video 1", "Video 2"]
