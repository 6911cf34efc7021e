"""Parsing the model's answer: exactly the JSON asked for, or MalformedModelOutput with the reason."""

import pytest

from annotator.drafts.llm import MAX_PAIRS, MalformedModelOutput, parse_answer, user_text


def test_it_reads_plain_and_fenced_json():
    body = '{"qa_pairs": [{"question": " Who walks? ", "answer": "a man"}]}'
    assert parse_answer(body) == [("Who walks?", "a man")]
    assert parse_answer("```json\n" + body + "\n```") == [("Who walks?", "a man")]


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("", "empty reply"),
        ("Sure! Here are some questions:", "not JSON: Expecting value: line 1 column 1 (char 0)"),
        (
            '{"qa_pairs": [{"question": "Who?", "answer": "me"}',
            "not JSON: Expecting ',' delimiter: line 1 column 51 (char 50)",
        ),
        ('[{"question": "Who?", "answer": "me"}]', 'expected an object with a "qa_pairs" list'),
        ('{"qa_pairs": []}', '"qa_pairs" is empty'),
        ('{"qa_pairs": ["Who?"]}', "qa_pairs[0] is not an object"),
        ('{"qa_pairs": [{"question": "Who?", "answer": ""}]}', "qa_pairs[0].answer is missing or empty"),
        ('{"qa_pairs": [{"question": "Who?", "answer": 3}]}', "qa_pairs[0].answer is missing or empty"),
    ],
)
def test_it_refuses_malformed_answers_with_the_reason(reply, reason):
    with pytest.raises(MalformedModelOutput) as err:
        parse_answer(reply)
    assert str(err.value) == reason


def test_it_refuses_too_many_pairs():
    body = '{"qa_pairs": [' + ",".join(['{"question": "q", "answer": "a"}'] * (MAX_PAIRS + 1)) + "]}"
    with pytest.raises(MalformedModelOutput, match="at most 10"):
        parse_answer(body)


def test_the_prompt_names_the_type_and_the_frame_times():
    text = user_text("Counting", "Count people only.", [1.0, 3.0], 4.0, n_pairs=5)
    assert "QA type: Counting." in text and "1.00 s, 3.00 s" in text and "Guidelines: Count people only." in text


def test_window_types_are_drafted_on_evenly_spread_windows():
    from annotator.drafts.llm import clips_for

    assert clips_for("window", 3.0, 10.0, 3) == [(0.167, 3.167), (3.5, 6.5), (6.833, 9.833)]
    assert clips_for("window", 3.0, 4.0, 3)[0] == (0.0, 3.0)  # kept inside the video
    assert all(0 <= a and b <= 4.0 and round(b - a, 3) == 3.0 for a, b in clips_for("window", 3.0, 4.0, 3))
    assert clips_for("window", 3.0, 2.5, 3) == [(0.0, 2.5)]  # shorter than a window: the whole video
    assert clips_for("whole", None, 10.0, 3) == [(0.0, 10.0)]
