"""Ego-exo multi-view sets (EgoExoBench seed 001 Sec. 3.2) and the group_videos command: what a set
holds, the rules it refuses with plain words (writing nothing), and the command over real files."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.errors import Invalid
from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.media.services import EGO_EXO_MAX_EXOS, ego_exo_window, make_ego_exo_set
from annotator.projects.services import ensure_project


def _video(project, name, duration_s=10.0, **fields):
    return Video.objects.create(
        project=project,
        sha256=(name * 64)[:64],
        filename=f"{name}.mp4",
        status="ready",
        duration_s=duration_s,
        fps=25,
        **fields,
    )


@pytest.fixture
def views(project):
    return [_video(project, n, d) for n, d in (("e", 10.0), ("a", 12.0), ("b", 9.0), ("c", 10.0))]


def _members(group):
    return [
        (m.video.filename, m.role, m.position, m.offset_s)
        for m in VideoGroupMember.objects.filter(group=group).select_related("video").order_by("role", "position")
    ]


def test_an_ego_exo_set_has_the_ego_at_position_0_and_exos_1_to_n_with_their_offsets(views):
    ego, a, b, c = views
    group = make_ego_exo_set(ego, [(a, 0.5), (b, -1.0), (c, 0.0)], name="kitchen take 1")
    assert (group.kind, group.name) == ("ego_exo", "kitchen take 1")
    assert _members(group) == [
        ("e.mp4", "ego", 0, 0.0),
        ("a.mp4", "exo", 1, 0.5),
        ("b.mp4", "exo", 2, -1.0),
        ("c.mp4", "exo", 3, 0.0),
    ]
    # The same set again is the same group (a re-run of the command writes nothing).
    assert make_ego_exo_set(ego, [(a, 0.5), (b, -1.0), (c, 0.0)]) == group
    assert VideoGroup.objects.count() == 1


def test_the_common_window_is_where_every_view_has_footage():
    # ego 10 s; exo 12 s at +0.5 s (covers ego 0-11.5); exo 9 s at -1 s (starts at ego 1 s, ends at ego 10 s)
    assert ego_exo_window(10.0, [(12.0, 0.5), (9.0, -1.0)]) == (1.0, 10.0)
    assert ego_exo_window(10.0, [(3.0, 2.5)]) == (0.0, 0.5)


@pytest.mark.parametrize(
    "exos, message",
    [
        (lambda v: [], "needs 1 to 8 exo videos"),
        (lambda v: [(v[0], 0.0)], "a video is named twice"),
        (lambda v: [(v[1], 0.0), (v[1], 1.0)], "a video is named twice"),
        (lambda v: [(v[1], 11.5)], r"exo 1 \(a.mp4, 12 s\) at offset 11.5 s keeps 0.5 s in common"),
        (lambda v: [(v[1], 0.0), (v[2], -9.5)], r"exo 2 \(b.mp4, 9 s\) at offset -9.5 s keeps 0.5 s"),
        (lambda v: [(v[1], 0.0), (v[2], 7.0), (v[3], -8.0)], r"the views keep 0 s in common \(ego time 8-2 s\)"),
        (lambda v: [(v[1], 1e9)], "more than a day"),
    ],
)
def test_a_bad_set_is_refused_in_plain_words_and_nothing_is_written(views, exos, message):
    with pytest.raises(Invalid, match=message):
        make_ego_exo_set(views[0], exos(views))
    assert (VideoGroup.objects.count(), VideoGroupMember.objects.count()) == (0, 0)


def test_videos_of_another_project_too_many_exos_unprobed_videos_and_taken_names_are_refused(views, project):
    ego = views[0]
    other = _video(ensure_project("other"), "o")
    with pytest.raises(Invalid, match="videos of one project"):
        make_ego_exo_set(ego, [(other, 0.0)])
    many = [(_video(project, f"{k}", 10.0), 0.0) for k in range(EGO_EXO_MAX_EXOS + 1)]
    with pytest.raises(Invalid, match="needs 1 to 8 exo videos \\(got 9\\)"):
        make_ego_exo_set(ego, many)
    assert make_ego_exo_set(ego, many[:EGO_EXO_MAX_EXOS]).members.count() == EGO_EXO_MAX_EXOS + 1
    unprobed = Video.objects.create(project=project, sha256="9" * 64, filename="new.mp4", status="processing")
    with pytest.raises(Invalid, match="new.mp4 .* has not been probed yet"):
        make_ego_exo_set(ego, [(unprobed, 0.0)])
    make_ego_exo_set(ego, [(views[1], 0.0)], name="take")
    with pytest.raises(Invalid, match="already has a group named 'take'"):
        make_ego_exo_set(ego, [(views[2], 0.0)], name="take")
    assert VideoGroup.objects.count() == 2


def test_the_command_groups_videos_by_file_name_or_id_with_offsets(views):
    a = views[1]
    out = StringIO()
    call_command(
        "group_videos",
        "ego_exo",
        "--project",
        "proj",
        "--ego",
        "e.mp4",
        "--exo",
        f"{a.pk}:0.5",
        "--exo",
        "b.mp4:1",
        "--name",
        "take 2",
        stdout=out,
    )
    group = VideoGroup.objects.get(name="take 2")
    assert _members(group) == [("e.mp4", "ego", 0, 0.0), ("a.mp4", "exo", 1, 0.5), ("b.mp4", "exo", 2, 1.0)]
    assert out.getvalue().strip() == (
        f"ego-exo set {group.pk}: take 2: ego e.mp4 (+0 s), exo1 a.mp4 (+0.5 s), exo2 b.mp4 (+1 s)"
    )
    call_command(
        "group_videos",
        "day_night",
        "--project",
        "proj",
        "--day",
        "e.mp4",
        "--night",
        "c.mp4",
        "--offset",
        "2",
        stdout=StringIO(),
    )
    assert _members(VideoGroup.objects.get(kind="day_night")) == [("e.mp4", "day", 0, 0.0), ("c.mp4", "night", 0, 2.0)]


@pytest.mark.parametrize(
    "args, message",
    [
        (["ego_exo", "--ego", "e.mp4", "--exo", "nope.mp4"], "no video 'nope.mp4' in project proj"),
        (["ego_exo", "--ego", "e.mp4"], "ego_exo needs --ego and at least one --exo"),
        (["ego_exo", "--ego", "e.mp4", "--exo", "a.mp4:50"], "keeps 0 s in common"),
        (["day_night", "--day", "e.mp4"], "day_night needs --day and --night"),
        (["ego_exo", "--ego", "e.mp4", "--exo", "a.mp4:nan"], "offset must be a finite number"),
    ],
)
def test_the_command_says_what_is_wrong_and_writes_nothing(views, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("group_videos", *args, "--project", "proj", stdout=StringIO())
    assert VideoGroup.objects.count() == 0


def test_pair_videos_is_group_videos_day_night(views):
    call_command("pair_videos", "e.mp4", "c.mp4", "--project", "proj", "--offset", "1.5", stdout=StringIO())
    assert _members(VideoGroup.objects.get()) == [("e.mp4", "day", 0, 0.0), ("c.mp4", "night", 0, 1.5)]
