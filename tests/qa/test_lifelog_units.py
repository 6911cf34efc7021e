"""Work units over a life log (X-LeBench seed 002 Sec. 3, App. C.1): drafts of a life-log QA type on
the log's first part go to one unit over the whole log in virtual seconds, with the drafted interval
answer, and the claim payload gives the parts with their virtual offsets for the virtual player."""

import hashlib

import pytest

from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.services import save_drafts
from annotator.drafts.templates import DraftSpec
from annotator.media.lifelogs import build_life_log, read_rows
from annotator.media.models import Video
from annotator.qa.models import QAType, QueueItem, WorkUnit
from annotator.qa.queue import claim_next
from annotator.qa.selectors import unit_payload

pytestmark = pytest.mark.django_db


def _parts(project):
    rows = []
    for i, (start, seconds) in enumerate([("08:00:00", 600.0), ("08:30:00", 900.0), ("09:00:00", 300.0)]):
        Video.objects.create(
            project=project,
            sha256=hashlib.sha256(f"u{i}".encode()).hexdigest(),
            filename=f"part{i}.mp4",
            status="ready",
            duration_s=seconds,
            fps=25.0,
            width=320,
            height=240,
        )
        rows.append((f"rows[{i}]", {"file": f"part{i}.mp4", "start": f"2024-05-01T{start}"}))
    return build_life_log(project, "day", read_rows(rows)).group


def _draft(video, specs):
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=video.project, pipeline="templates", prompt_version="t"), video=video
    )
    save_drafts(job, specs, actor="t")


def test_life_log_drafts_open_a_unit_over_the_log_in_virtual_time(project, annotator):
    log = _parts(project)
    QAType.objects.create(
        project=project, slug="moment_query", name="Moment query", set_kind="life_log", answer_kind="interval"
    )
    QAType.objects.create(project=project, slug="scene", name="Scene")
    first, second = (log.members.get(position=i).video for i in (0, 1))
    _draft(
        first,
        [
            DraftSpec(
                "moment_query",
                "When does C ride a bike?",
                "08:31:00-08:33:00",
                0.0,
                9999.0,
                source_key="m",
                params={"answer_start_s": 1860.0, "answer_end_s": 1980.0},
            ),
            DraftSpec("scene", "Where is C?", "a kitchen", 0.0, 600.0, source_key="s"),
        ],
    )
    _draft(second, [DraftSpec("moment_query", "When does C eat?", "?", 0.0, 10.0, source_key="m2")])

    unit = WorkUnit.objects.get(group=log)
    assert (unit.video_id, unit.start_s, unit.end_s) == (first.pk, 0.0, 3900.0)  # 08:00:00 to 09:05:00
    pair = unit.qa_pairs.get()
    assert (pair.clip_start_s, pair.clip_end_s, pair.answer_start_s, pair.answer_end_s) == (0.0, 3900.0, 1860.0, 1980.0)
    assert WorkUnit.objects.get(video=first, group=None).qa_pairs.get().question == "Where is C?"
    assert WorkUnit.objects.get(video=second).group_id is None  # the second part leads no log

    QueueItem.objects.exclude(unit=unit).delete()  # so the claim gets the life log's unit
    item = claim_next(project, annotator)
    payload = unit_payload(item, annotator)
    assert payload["paired"] is False
    assert payload["life_log"]["start"] == "2024-05-01T08:00:00" and payload["life_log"]["span_s"] == 3900.0
    assert [(p["role"], p["label"], p["offset_s"], p["duration_s"]) for p in payload["life_log"]["parts"]] == [
        ("part", "part 1", 0.0, 600.0),
        ("part", "part 2", 1800.0, 900.0),
        ("part", "part 3", 3600.0, 300.0),
    ]
    assert payload["life_log"]["gaps"] == [
        {"start_s": 600.0, "end_s": 1800.0, "duration_s": 1200.0},
        {"start_s": 2700.0, "end_s": 3600.0, "duration_s": 900.0},
    ]
    assert payload["qa_pairs"][0]["answer_start_s"] == 1860.0
