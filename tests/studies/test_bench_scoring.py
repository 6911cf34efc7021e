"""bench/scoring.py --smoke runs (``make test`` runs it here): 2,000 answers of each study kind scored in
memory and end to end by ``score_pending`` (twice) in a scratch database of the bench's own
(``<POSTGRES_DB>_bench_scoring_smoke``, migrated and filled on its first run, so that run is slower),
every trial scored and the results page counting exactly the scored trials the database holds.
Timings are printed, not asserted."""

import re

from tests.bench_smoke import run_smoke


def test_scoring_bench_smoke_mode_scores_every_trial_of_every_kind_and_the_results_page_counts_them():
    out = run_smoke("scoring.py")
    assert "Scoring 2,000 answers per kind; medians of 2 runs" in out
    rows = {
        m.group(1): m.groups()[1:]
        for m in re.finditer(
            r"^(\w+) +([\d,]+) +(\d+\.\d{3}) +([\d,]+) +\d+\.\d\d, \d+\.\d\d +(\d+\.\d\d) +\d+\.\d\d, \d+\.\d\d "
            r"+(\d+\.\d\d) +([\d,]+) \(([\d,]+)\)$",
            out,
            re.M,
        )
    }
    assert list(rows) == ["ordering", "mcq", "open_answer", "likert"]
    for kind, (n, memory_s, per_s, e2e_s, page_s, shown, stored) in rows.items():
        assert n == "2,000" and float(e2e_s) > 0 and float(page_s) > 0, kind
        assert int(per_s.replace(",", "")) > 0
        # The results page counts every scored trial holding the kind's first metric, and no other.
        assert shown == stored, kind
    # Ordering, multiple choice and open answers score every trial (a timed-out one too); Likert's 2%
    # attention items are not results, and its timed-out trials carry no score.
    assert [rows[k][5] for k in ("ordering", "mcq", "open_answer")] == ["2,000"] * 3
    assert 1800 < int(rows["likert"][5].replace(",", "")) < 1960
    assert re.search(r"^ordering, per-row reference +(\d+) +\d+\.\d{3} ", out, re.M)
    assert re.search(
        r"^slowest end to end: \d+\.\d\d s for 2,000 trials \(the 10 s target is for 100,000\)$", out, re.M
    )
    assert out.rstrip().endswith("smoke: ok")
