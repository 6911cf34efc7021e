"""bench/queue.py --smoke runs (make test runs it here): 2,000 units claimed and submitted through
gunicorn by 1 and 4 annotators, at gold rates 0 and 0.5, in ``<POSTGRES_DB>_bench_queue_smoke``; no
unit served twice, no request failed, gold units served at 0.5 and none at 0."""

import re

from tests.bench_smoke import run_smoke


def test_queue_bench_smoke_serves_gold_at_the_rate_and_nothing_twice():
    out = run_smoke("queue.py", timeout=900)
    rows = re.findall(r"^\s+2000\s+(\d)\s+([\d.]+)\s.*?\s(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", out, re.MULTILINE)
    assert [(k, rate) for k, rate, *_ in rows] == [("1", "0"), ("1", "0.5"), ("4", "0"), ("4", "0.5")]
    for k, rate, claims, gold, twice, errors in rows:
        assert (twice, errors) == ("0", "0") and int(claims) > 0
        assert (int(gold) > 0) == (rate == "0.5"), (k, rate, gold)
    assert "claim latency with gold / without" in out
    # Gold and real claims of the same runs, told apart from the database afterwards (issue 20's timing).
    split = re.findall(
        r"gold 0.5, 2000 units,\s+(\d) annotators: real n=(\d+) claim [\d.]+/[\d.]+ submit [\d.]+/[\d.]+; "
        r"gold n=(\d+) claim [\d.]+/[\d.]+ submit [\d.]+/[\d.]+$",
        out,
        re.MULTILINE,
    )
    assert [k for k, *_ in split] == ["1", "4"] and all(int(g) > 0 and int(r) > 0 for _, r, g in split), out
    assert out.rstrip().endswith("smoke: ok")
