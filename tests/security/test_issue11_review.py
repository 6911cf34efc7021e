"""Security review of issue 11 (helper h9): what an annotator who takes part in a human-baseline
study can read about a life log, and the edges of the new media paths."""

import pytest
from django.utils import timezone

from annotator.media.lifelogs import build_life_log, read_rows
from annotator.media.models import Video
from annotator.studies.models import Trial
from annotator.studies.services import create_study
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
            sha256=f"{i + 1:064x}",
            filename=f"part{i}.mp4",
            status="ready",
            duration_s=600.0,
            source="real",
        )
        rows.append(
            (f"rows[{i}]", {"file": f"part{i}.mp4", "start": f"2024-05-01T{8 + 2 * i:02d}:00:00", "summary": text})
        )
    return build_life_log(project, "day 1", read_rows(rows)).group


def test_a_participant_cannot_read_a_life_logs_summaries_in_order_from_the_groups_api(project, life_log):
    """The summary-ordering study's participants are the project's annotators; the groups API is
    open to annotators and listed life logs with their parts' summaries in true order (params)."""
    study, _ = create_study(project, "summaries", "ordering", preset="xlebench-summary")
    (person,) = people(project, 1)
    client = api_as(person)
    assert client.post(f"/api/studies/{study.pk}/enroll/").status_code in (200, 201)
    listed = client.get(f"/api/projects/{project.slug}/groups/")
    # Since issue 20 the lists are closed to annotators altogether (they name every video by id).
    assert listed.status_code == 403
    raw = listed.content.decode()
    for secret in [*SUMMARIES, "2024-05-01", "part0.mp4"]:
        assert secret not in raw, secret
    assert client.get(f"/api/projects/{project.slug}/groups/{life_log.pk}/").status_code in (403, 404)
    (overseer,) = people(project, 1, role="researcher", prefix="r")
    seen = api_as(overseer).get(f"/api/projects/{project.slug}/groups/{life_log.pk}/")
    assert seen.status_code == 200 and SUMMARIES[0] in seen.content.decode()


def test_an_admin_cannot_register_the_key_of_another_projects_video(s3, project, admin_user, short_video):
    """The bucket is shared by every project: an object another project registered (its video's
    original, left where it was) is that project's, and registering its key would copy its content
    into this project (renditions, frames, exports) for anyone who knows or guesses the key."""
    from rest_framework.test import APIClient

    from annotator.media import services
    from annotator.projects.services import ensure_member, ensure_project, token_for

    client, bucket = s3
    client.put_object(Bucket=bucket, Key="incoming/theirs.mp4", Body=short_video.read_bytes())
    other = ensure_project("other", "Another group's project")
    theirs = services.register_stored(other, "incoming/theirs.mp4")
    assert theirs.video_id is not None
    mine = ensure_member("h9-admin", role="admin", project=project)[0]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(mine)}")
    res = api.post(f"/api/projects/{project.slug}/videos/register/", {"key": "incoming/theirs.mp4"}, format="json")
    assert res.status_code == 400, res.content
    assert "another project" in res.json()["detail"]
    assert not Video.objects.filter(project=project).exists()


def test_a_participant_holding_a_life_log_unit_gets_none_of_its_parts_while_ordering_its_summaries(project, life_log):
    """The summary-ordering item's footage is the log's first part only; every part shows what a
    summary is about at its place in the day, so none may be served to a participant who still has
    to order that log's summaries (as for the footage of frame-ordering items, issue 7)."""
    from annotator.media.file_access import may_see_video
    from annotator.qa.models import QueueItem, WorkUnit

    study, _ = create_study(project, "summaries", "ordering", preset="xlebench-summary")
    (person,) = people(project, 1)
    parts = [life_log.members.get(position=i).video for i in range(len(SUMMARIES))]
    assert api_as(person).post(f"/api/studies/{study.pk}/enroll/").status_code in (200, 201)
    assert Trial.objects.filter(participant__user=person, item__key=f"lifelog:{life_log.pk}").exists()
    # Then the verification queue gives them a unit of that log (the queue does not look at studies).
    unit = WorkUnit.objects.create(project=project, video=parts[0], group=life_log, start_s=0.0, end_s=27000.0)
    QueueItem.objects.create(project=project, unit=unit, leased_by=person)
    assert [may_see_video(person, v) for v in parts] == [False] * len(parts)
    Trial.objects.filter(participant__user=person).update(answered_at=timezone.now())
    assert all(may_see_video(person, v) for v in parts)  # the unit's holder, once the trial is answered


@pytest.mark.parametrize("start", ["9999-12-31T23:00:00Z", "9999-12-28T00:00:00+14:00"])
def test_a_life_log_starting_at_the_end_of_the_calendar_is_a_400_that_writes_nothing(project, start):
    """Its parts' wall-clock times would pass datetime's last year: the log was saved, then the
    answer (and every later page or payload of the log) failed with a 500 (OverflowError)."""
    from annotator.media.models import VideoGroup
    from annotator.projects.services import ensure_member

    video = Video.objects.create(
        project=project, sha256=f"{99:064x}", filename="late.mp4", status="ready", duration_s=600.0, fps=25
    )
    admin = api_as(ensure_member("h9-ll-admin", role="admin", project=project)[0])
    res = admin.post(
        f"/api/projects/{project.slug}/lifelogs/",
        {"name": "late", "start": start, "parts": [{"video": video.pk, "offset_s": 500000.0}]},
        format="json",
    )
    assert res.status_code == 400, res.content
    assert "start" in res.json()["detail"]
    assert not VideoGroup.objects.filter(project=project, name="late").exists()


def test_footage_seen_in_queues_counts_labelled_videos_and_a_life_logs_other_parts(project, life_log):
    """A participant is never assigned an item about footage they could play in a verification
    queue (issue 7). The verify page also plays a QA pair's labelled videos (EgoExoBench items whose
    options are videos) and ``may_see_video`` serves them to the unit's holder; and a summary-ordering
    item's footage is its log's first part, while holding a unit of any part shows that part."""
    from annotator.qa.models import QAPair, QAType, QueueItem, WorkUnit
    from annotator.studies.selectors import footage_seen_in_queues

    parts = [life_log.members.get(position=i).video for i in range(len(SUMMARIES))]
    other = Video.objects.create(
        project=project, sha256=f"{77:064x}", filename="lead.mp4", status="ready", duration_s=60.0, fps=25
    )
    labelled = Video.objects.create(
        project=project, sha256=f"{78:064x}", filename="option.mp4", status="ready", duration_s=60.0, fps=25
    )
    (person,) = people(project, 1)
    qa_type = QAType.objects.create(project=project, slug="view_match", name="View match")
    unit = WorkUnit.objects.create(project=project, video=other, start_s=0.0, end_s=60.0)
    QAPair.objects.create(
        project=project,
        unit=unit,
        video=other,
        qa_type=qa_type,
        question="Which video shows the same moment?",
        answer="Video 1",
        clip_start_s=0.0,
        clip_end_s=60.0,
        videos=[{"label": "Video 1", "video_id": labelled.pk, "role": "candidate", "start_s": 0.0, "end_s": 60.0}],
    )
    QueueItem.objects.create(project=project, unit=unit, leased_by=person)
    part_unit = WorkUnit.objects.create(project=project, video=parts[2], start_s=0.0, end_s=600.0)
    QueueItem.objects.create(project=project, unit=part_unit, completed_by=person)
    seen = footage_seen_in_queues(person, project.pk)
    assert {other.pk, labelled.pk, parts[2].pk, parts[0].pk} <= seen


@pytest.mark.parametrize(
    "answer",
    [
        "08:00 +" + "9" * 400 + "d - 09:00",  # OverflowError (int to float)
        "08:00 +" + "9" * 5000 + "d - 09:00",  # ValueError (int digits limit)
        "[" * 100000,
    ],
)  # RecursionError (json)
def test_a_model_answer_that_names_no_usable_interval_is_an_interval_parse_error(answer):
    """Scoring an interval item reads the model's free text; only IntervalParseError is caught there
    (``evaluation.runs._score_interval``), so any other error failed the scoring of the prediction."""
    from annotator.scoring.localisation import IntervalParseError, parse_intervals

    with pytest.raises(IntervalParseError):
        parse_intervals(answer)


def test_the_importers_stored_rows_cannot_be_registered_as_a_video(project):
    """``draft --pipeline import`` stores its rows under ``imports/<project id>/`` in the same bucket:
    a platform folder, not footage, like the other prefixes register_stored refuses."""
    from annotator.errors import Invalid
    from annotator.media.services import check_storage_key

    with pytest.raises(Invalid, match="platform's own files"):
        check_storage_key(f"imports/{project.pk}/0123abcd/index.json")
