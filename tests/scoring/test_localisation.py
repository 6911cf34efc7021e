"""tIoU and recall@k at tIoU 0.3 (X-LeBench seed 002 App. C.1), worked by hand from the definition,
and reading a model's answer as intervals."""

from datetime import datetime

import pytest

from annotator.scoring.localisation import (
    IntervalParseError,
    format_clock,
    hit_rank,
    parse_intervals,
    recall_at_k,
    tiou,
)


def test_tiou_by_hand():
    # [10, 20] and [15, 30]: intersection 5, union 10 + 15 - 5 = 20 -> 0.25
    assert tiou((10, 20), (15, 30)) == pytest.approx(0.25)
    # the same interval -> 1; one inside the other: [0, 100] and [20, 30] -> 10 / 100
    assert tiou((5, 9), (5, 9)) == 1.0
    assert tiou((0, 100), (20, 30)) == pytest.approx(0.1)
    # touching or apart -> 0
    assert tiou((0, 10), (10, 20)) == 0.0
    assert tiou((0, 10), (50, 60)) == 0.0
    # symmetric
    assert tiou((15, 30), (10, 20)) == tiou((10, 20), (15, 30))
    with pytest.raises(ValueError):
        tiou((5, 1), (0, 10))


def test_recall_at_k_by_hand():
    truth = [(100.0, 200.0), (1000.0, 1100.0), (5000.0, 5060.0), (0.0, 10.0)]
    ranked = [
        [(120.0, 200.0)],  # tIoU 0.8 at rank 1: found at k=1 and k=5
        [(0.0, 50.0), (2000.0, 2100.0), (1050.0, 1150.0)],  # rank 3 has tIoU 50/150 = 0.333 >= 0.3
        [(5000.0, 5200.0)],  # 60 / 200 = 0.3 exactly: counts (>=)
        [(20.0, 30.0), (1.0, 2.0), (3, 4), (5, 6), (7, 8), (0.0, 10.0)],  # the hit is 6th: past k=5
    ]
    assert [hit_rank(p, t) for p, t in zip(ranked, truth)] == [1, 3, 1, 6]
    assert recall_at_k(ranked, truth, 1) == pytest.approx(2 / 4)
    assert recall_at_k(ranked, truth, 5) == pytest.approx(3 / 4)
    assert recall_at_k(ranked, truth, 5, threshold=0.5) == pytest.approx(1 / 4)
    assert recall_at_k([[]], [(0, 1)], 5) == 0.0
    assert recall_at_k([], [], 5) is None


START = datetime(2024, 5, 1, 8, 0, 0)


def test_answers_read_as_intervals_in_virtual_time():
    assert parse_intervals("08:31:05 - 08:33:40\n09:00 to 09:10", START) == [(1865.0, 2020.0), (3600.0, 4200.0)]
    # a log past midnight: 23:50 - 00:10 crosses it; a clock time before the start is the next day
    late = datetime(2024, 5, 1, 22, 0, 0)
    assert parse_intervals("23:50:00 - 00:10:00", late) == [(6600.0, 7800.0)]
    assert parse_intervals("01:00:00 - 01:30:00", late) == [(10800.0, 12600.0)]
    assert parse_intervals("23:50:00 - 00:10:00") == [(85800.0, 87000.0)]  # no start: seconds after midnight
    assert parse_intervals('{"intervals": [[1865, 2020], ["09:00:00", "09:10:00"]]}', START) == [
        (1865.0, 2020.0),
        (3600.0, 4200.0),
    ]
    assert parse_intervals("```json\n[120, 180]\n```", START) == [(120.0, 180.0)]
    six = "\n".join(f"08:0{i}:00 - 08:0{i}:30" for i in range(6))
    assert len(parse_intervals(six, START)) == 5
    assert parse_intervals(format_clock(START, 1865) + " - " + format_clock(START, 2020), START) == [(1865.0, 2020.0)]


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty answer"),
        ("I cannot tell from the frames.", "no interval found"),
        ("25:00:00 - 26:00:00", "not a time of day"),
        ('{"answer": "morning"}', 'JSON answer without "intervals"'),
        ("[[200, 100]]", "ends before it starts"),
    ],
)
def test_unparseable_answers_say_why(text, reason):
    with pytest.raises(IntervalParseError, match=reason):
        parse_intervals(text, START)
