"""Annotation-derived template drafts (EgoExoBench seed 001 Sec. 3.2): pure, no database."""

from collections import Counter

from annotator.drafts.templates import build_template_drafts, shuffled_options

ANNOTATIONS = {
    "description": "A hand pushes a coin across a wooden table.",
    "objects": ["coin", "hand", "table"],
    "actions": [
        {"label": "push the coin", "start_s": 1.0, "end_s": 4.5},
        {"label": "", "start_s": 0, "end_s": 1},  # no label: skipped
        {"label": "backwards", "start_s": 5.0, "end_s": 2.0},
    ],  # empty range: skipped
    "counts": [
        {"what": "coins", "count": 1, "at_s": None},
        {"what": "hands", "count": 1, "at_s": 0.5},
        {"what": "cats", "count": "two"},
    ],  # not an int: skipped
}
POOL = ["bicycle", "car", "lamp", "Coin", "tree"]


def test_each_annotation_becomes_one_qa_pair_of_its_type():
    specs = build_template_drafts(ANNOTATIONS, 8.0, distractor_pool=POOL, seed=42)
    assert [
        (s.qa_type, s.question, s.answer, s.clip_start_s, s.clip_end_s)
        for s in specs
        if s.qa_type != "object_recognition"
    ] == [
        (
            "scene_description",
            "Describe what happens in this video.",
            "A hand pushes a coin across a wooden table.",
            0.0,
            8.0,
        ),
        ("action_recognition", "What happens in this clip?", "push the coin", 1.0, 4.5),
        ("counting", "How many coins are there?", "1", 0.0, 8.0),
        ("counting", "How many hands are there at 0.5 s?", "1", 0.0, 2.0),
    ]


def test_the_object_item_has_four_options_one_correct_and_no_own_objects_as_distractors():
    (mc,) = [
        s
        for s in build_template_drafts(ANNOTATIONS, 8.0, distractor_pool=POOL, seed=42)
        if s.qa_type == "object_recognition"
    ]
    assert len(mc.options) == 4 and len(set(mc.options)) == 4
    assert mc.options[mc.answer_index] == mc.answer and mc.answer in ANNOTATIONS["objects"]
    assert not {"Coin", "coin"} & (set(mc.options) - {mc.answer})
    assert mc.params == {"shuffle_seed": 42}
    again = [
        s
        for s in build_template_drafts(ANNOTATIONS, 8.0, distractor_pool=POOL, seed=42)
        if s.qa_type == "object_recognition"
    ]
    assert again[0] == mc  # the same seed gives the same item


def test_no_object_item_without_three_distractors():
    specs = build_template_drafts(ANNOTATIONS, 8.0, distractor_pool=["car", "coin", "tree"], seed=1)
    assert "object_recognition" not in {s.qa_type for s in specs}


def test_the_option_shuffle_puts_the_answer_in_every_position_about_equally():
    positions = Counter(shuffled_options("right", ["a", "b", "c"], seed)[1] for seed in range(4000))
    assert set(positions) == {0, 1, 2, 3}
    assert all(900 <= n <= 1100 for n in positions.values()), positions  # expected 1000 each; 6+ sd margin


def test_empty_annotations_give_no_drafts():
    assert build_template_drafts({}, 5.0, distractor_pool=POOL, seed=0) == []
