"""X-LeBench summary ordering (seed 002 App. C.4) with the ordering study kind: a life log's part
summaries become the texts of an item, shown shuffled with nothing that gives away their order, and
a participant's order is scored with Kendall's tau-b."""

import json

import pytest

from annotator.media.lifelogs import build_life_log, read_rows
from annotator.media.models import Video
from annotator.studies.models import Element, Item, Trial
from annotator.studies.services import create_study, score_pending
from tests.studies.conftest import api_as, people

pytestmark = pytest.mark.django_db

SUMMARIES = [
    "C cooks breakfast in a kitchen.",
    "C rides a bicycle to work.",
    "C writes at a desk.",
    "C plays cards with friends.",
]


@pytest.fixture
def life_log(project):
    rows = []
    for i, text in enumerate(SUMMARIES):
        Video.objects.create(
            project=project,
            sha256=f"{i:064x}",
            filename=f"part{i}.mp4",
            status="ready",
            duration_s=600.0,
            source="real",
        )
        rows.append(
            (f"rows[{i}]", {"file": f"part{i}.mp4", "start": f"2024-05-01T{8 + 2 * i:02d}:00:00", "summary": text})
        )
    return build_life_log(project, "day 1", read_rows(rows)).group


def test_a_life_logs_summaries_are_ordered_and_scored_by_kendall_tau(project, life_log):
    lines = []
    study, report = create_study(project, "summaries", "ordering", preset="xlebench-summary", progress=lines.append)
    assert report.items == {1: 1, 2: 0, 3: 0}
    assert report.skipped["life logs with fewer than 9 part summaries"] == 1
    item = Item.objects.get(condition__number=1)
    assert item.key == f"lifelog:{life_log.pk}"
    assert [Element.objects.get(pk=pk).text for pk in item.truth] == SUMMARIES
    assert sorted(item.payload["shown"]) == sorted(item.truth)

    def take(person, reverse: bool) -> float:
        client = api_as(person)
        served = client.post(f"/api/studies/{study.pk}/enroll/").json()["trial"]
        raw = json.dumps(served)
        for secret in ["2024-05-01", "08:00", "10:00", "part0.mp4", "video_id", "start_s", "lifelog"]:
            assert secret not in raw, secret  # no times, file names, video or log ids
        elements = served["content"]["elements"]
        assert {tuple(sorted(e)) for e in elements} == {("handle", "kind", "pinned_position", "text", "url")}
        assert not {e["handle"] for e in elements} & {str(pk) for pk in item.truth}  # handles, not element ids
        client.post(f"/api/trials/{served['trial_id']}/shown/")
        by_text = sorted(elements, key=lambda e: SUMMARIES.index(e["text"]), reverse=reverse)
        body = json.dumps({"response": [e["handle"] for e in by_text], "client_rt_ms": 1.0, "idempotency_key": "k"})
        res = client.post(f"/api/trials/{served['trial_id']}/answer/", body, content_type="application/json")
        assert res.status_code == 200, res.content
        score_pending(study.pk)
        return Trial.objects.get(pk=served["trial_id"]).scores["kendall_tau_b"]

    right, wrong = people(project, 2)
    assert take(right, reverse=False) == 1.0
    assert take(wrong, reverse=True) == -1.0
