"""QA types asked of an ego-exo set (EgoExoBench seed 001 Sec. 3): their drafts on the ego video go
to one unit per set, whose payload shows every view in order with its label and offset, and whose
annotator may fetch every member's media."""

import pytest

from annotator.drafts.models import DraftJob, DraftRun
from annotator.drafts.services import save_drafts
from annotator.drafts.templates import DraftSpec
from annotator.media.file_access import may_see_video
from annotator.media.models import Video
from annotator.media.services import make_day_night_group, make_ego_exo_set
from annotator.qa.models import QAType, QueueItem, WorkUnit
from annotator.qa.queue import claim_next
from annotator.qa.selectors import unit_payload
from annotator.qa.services import ensure_qa_type
from tests.conftest import vh


def _video(project, name, duration_s):
    return Video.objects.create(
        project=project,
        sha256=(name * 64)[:64],
        filename=f"{name}.mp4",
        status="ready",
        duration_s=duration_s,
        fps=25,
        rendition=f"renditions/{name}.mp4",
        poster=f"posters/{name}.jpg",
    )


@pytest.fixture
def ego_set(project):
    ego, a, b = _video(project, "e", 10.0), _video(project, "a", 12.0), _video(project, "b", 9.0)
    group = make_ego_exo_set(ego, [(a, 0.5), (b, -1.0)], name="kitchen")
    ensure_qa_type(project, "action_relation")
    QAType.objects.filter(project=project, slug="action_relation").update(set_kind="ego_exo")
    ensure_qa_type(project, "scene_description")
    return ego, a, b, group


def _draft(project, video, specs):
    job = DraftJob.objects.create(
        run=DraftRun.objects.create(project=project, pipeline="templates", prompt_version="t"), video=video
    )
    save_drafts(job, specs, actor="t")


def test_set_drafts_on_the_ego_video_get_one_unit_per_set_over_the_common_time(project, ego_set):
    ego, _, b, group = ego_set
    other = make_ego_exo_set(ego, [(b, 0.0)], name="second take")
    _draft(
        project,
        ego,
        [
            DraftSpec("action_relation", "Which view shows the same action?", "exo 1", 0.0, 10.0, source_key="ar"),
            DraftSpec("scene_description", "What happens?", "cooking", 0.0, 10.0, source_key="sd"),
        ],
    )
    units = list(WorkUnit.objects.order_by("id"))
    assert [(u.group_id, u.start_s, u.end_s, [p.qa_type.slug for p in u.qa_pairs.all()]) for u in units] == [
        (None, 0.0, 10.0, ["scene_description"]),
        # exo b starts 1 s into the ego video (offset -1 s): the unit covers ego time 1-10 s; its clip is clamped to it
        (group.pk, 1.0, 10.0, ["action_relation"]),
        (other.pk, 0.0, 9.0, ["action_relation"]),
    ]
    assert [(p.clip_start_s, p.clip_end_s) for p in units[1].qa_pairs.all()] == [(1.0, 10.0)]
    assert QueueItem.objects.filter(unit__in=units, kind="first_pass").count() == 3


def test_set_drafts_on_a_video_that_leads_no_set_stay_on_the_video(project, ego_set):
    _, a, _, _ = ego_set  # a is an exo view, not the ego of any set
    _draft(project, a, [DraftSpec("action_relation", "Which view?", "this one", 0.0, 5.0, source_key="ar")])
    assert list(WorkUnit.objects.values_list("video_id", "group_id")) == [(a.pk, None)]


def test_a_day_night_pair_of_the_ego_video_does_not_take_set_drafts(project, ego_set):
    ego, _, _, group = ego_set
    make_day_night_group(ego, _video(project, "n", 10.0), offset_s=0.0)
    QAType.objects.filter(project=project, slug="action_relation").update(paired=True)  # ego_exo wins over paired
    _draft(project, ego, [DraftSpec("action_relation", "Which view?", "exo 2", 0.0, 5.0, source_key="ar")])
    assert list(WorkUnit.objects.values_list("group_id", flat=True)) == [group.pk]


def test_the_payload_shows_the_ego_then_each_exo_with_label_offset_and_urls(project, ego_set, annotator):
    ego, a, b, _ = ego_set
    _draft(project, ego, [DraftSpec("action_relation", "Which view?", "exo 1", 0.0, 10.0, source_key="ar")])
    item = claim_next(project, annotator)
    payload = unit_payload(item, annotator)
    assert [(v["id"], v["role"], v["label"], v["offset_s"], v["url"], v["poster_url"]) for v in payload["videos"]] == [
        (vh(ego), "ego", "ego", 0.0, "/files/renditions/e.mp4", "/files/posters/e.jpg"),
        (vh(a), "exo", "exo 1", 0.5, "/files/renditions/a.mp4", "/files/posters/a.jpg"),
        (vh(b), "exo", "exo 2", -1.0, "/files/renditions/b.mp4", "/files/posters/b.jpg"),
    ]
    assert (payload["video"]["id"], payload["start_s"], payload["end_s"]) == (vh(ego), 1.0, 10.0)
    # An ego-exo set is not a day-night pair: "inconsistent across day and night" is not offered.
    assert payload["paired"] is False
    assert {r["value"]: r["available"] for r in payload["delete_reasons"]}["inconsistent"] is False


def test_the_holder_of_a_set_unit_may_fetch_every_view_and_others_none(project, ego_set, annotator, annotator2):
    ego, a, b, _ = ego_set
    _draft(project, ego, [DraftSpec("action_relation", "Which view?", "exo 1", 0.0, 10.0, source_key="ar")])
    assert [may_see_video(annotator, v) for v in (ego, a, b)] == [False, False, False]
    claim_next(project, annotator)
    assert [may_see_video(annotator, v) for v in (ego, a, b)] == [True, True, True]
    assert [may_see_video(annotator2, v) for v in (ego, a, b)] == [False, False, False]


def test_inconsistent_across_day_and_night_is_no_reason_to_delete_an_ego_exo_item(project, ego_set, annotator):
    from annotator.errors import Invalid
    from annotator.qa.models import QAPair
    from annotator.qa.services import Decision, submit_unit

    ego = ego_set[0]
    _draft(project, ego, [DraftSpec("action_relation", "Which view?", "exo 1", 0.0, 10.0, source_key="ar")])
    item = claim_next(project, annotator)
    pair = item.unit.qa_pairs.get()
    with pytest.raises(Invalid) as refused:
        submit_unit(
            item.unit_id,
            annotator,
            idempotency_key="k",
            time_spent_ms=None,
            additions=[],
            decisions=[Decision(pair.pk, "delete", reason="inconsistent")],
        )
    assert refused.value.errors == {
        "decisions[0].reason": "inconsistent across day and night applies only to a day-night pair"
    }
    assert QAPair.objects.get(pk=pair.pk).status == "draft"
