"""bench/units_page.py --smoke runs (``make test`` runs it here): the units list for admins renders
every filter's first page and a page deep by its cursor on a database filled by SQL (issue 20,
section 7). Timings are printed, not asserted (benchmarks, not timed tests)."""

import re

from tests.bench_smoke import run_smoke


def test_units_page_bench_smoke_mode_renders_every_page_with_rows():
    out = run_smoke("units_page.py")
    rows = {
        m.group(1).strip(): int(m.group(2))
        for m in re.finditer(r"^(\w[\w =+_]*?) +(\d+) +\d+\.\d +\d+\.\d$", out, re.M)
    }
    # 2,000 units: 600 done (20 annotators in turn: 30 each), 1 in 100 pairs flagged (20; 6 of them done).
    assert rows == {
        "first page": 50,
        "20 pages deep": 50,
        "status=done": 50,
        "pass=first_pass": 50,
        "annotator": 30,
        "qa_type": 50,
        "video": 50,
        "flagged": 20,
        "flagged + done": 6,
    }
    assert out.rstrip().endswith("result: ok (2,000 units)")
