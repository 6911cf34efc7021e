"""Security review of issue 11 (helper h9): what an annotator who takes part in a human-baseline
study can read about a life log, and the edges of the new media paths."""

import pytest

from annotator.media.lifelogs import build_life_log, read_rows
from annotator.media.models import Video
from annotator.studies.services import create_study
from tests.studies.conftest import api_as, people

pytestmark = pytest.mark.django_db

SUMMARIES = ["C cooks breakfast in a kitchen.", "C rides a bicycle to work.", "C writes at a desk.",
             "C plays cards with friends."]


@pytest.fixture
def life_log(project):
    rows = []
    for i, text in enumerate(SUMMARIES):
        Video.objects.create(project=project, sha256=f"{i + 1:064x}", filename=f"part{i}.mp4", status="ready",
                             duration_s=600.0, source="real")
        rows.append((f"rows[{i}]", {"file": f"part{i}.mp4", "start": f"2024-05-01T{8 + 2 * i:02d}:00:00", "summary": text}))
    return build_life_log(project, "day 1", read_rows(rows)).group


def test_a_participant_cannot_read_a_life_logs_summaries_in_order_from_the_groups_api(project, life_log):
    """The summary-ordering study's participants are the project's annotators; the groups API is
    open to annotators and listed life logs with their parts' summaries in true order (params)."""
    study, _ = create_study(project, "summaries", "ordering", preset="xlebench-summary")
    (person,) = people(project, 1)
    client = api_as(person)
    assert client.post(f"/api/studies/{study.pk}/enroll/").status_code in (200, 201)
    listed = client.get(f"/api/projects/{project.slug}/groups/")
    assert listed.status_code == 200
    raw = listed.content.decode()
    for secret in [*SUMMARIES, "2024-05-01", "part0.mp4"]:
        assert secret not in raw, secret
    assert client.get(f"/api/projects/{project.slug}/groups/{life_log.pk}/").status_code == 404
    (overseer,) = people(project, 1, role="researcher", prefix="r")
    seen = api_as(overseer).get(f"/api/projects/{project.slug}/groups/{life_log.pk}/")
    assert seen.status_code == 200 and SUMMARIES[0] in seen.content.decode()
