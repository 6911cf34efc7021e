"""bench/participants.py --smoke runs (make test runs it here): 10 simulated panel participants go
from the study link to the completion code against gunicorn, in a scratch database of the bench's
own (``<POSTGRES_DB>_bench_participants_smoke``, migrated on its first run, so that run is slower);
the bench exits non-zero on a lost answer, a 5xx, a request with no response, a broken flow or a
completion code the database does not hold."""

import re

from tests.bench_smoke import run_smoke


def test_participants_bench_smoke_mode_takes_ten_people_to_their_codes_and_loses_nothing():
    out = run_smoke("participants.py")
    # 10 people x (1 practice + 2 questions), every one acknowledged and found in the database.
    assert (
        "participants: 10 done of 10 (10 started, 0 stopped by the time bound, 0 broken); "
        "10 finished in the database, 0 shown a code the database does not hold for them"
    ) in out
    assert "  warm-up, not measured: 240 requests that change nothing (0 answered 5xx or not at all)" in out
    assert "answers sent: 30   acknowledged: 30   stored (database): 30" in out
    assert "lost answers: 0 (0 acknowledged but not stored, 0 answered 5xx)" in out
    assert re.search(r"^answers/s: \d+\.\d over \d+\.\d s", out, re.M)
    assert re.search(
        r"^machine load \(1-minute average, \d+ CPUs\): \d+\.\d at the start, \d+\.\d at the end$", out, re.M
    )
    rows = {
        m.group(1): (int(m.group(2)), int(m.group(3)))
        for m in re.finditer(r"^(\w+) +(\d+) +\d+\.\d +\d+\.\d +\d+\.\d +(\d+)$", out, re.M)
    }
    # Requests per endpoint: 4 pages each (consent, screening, take, debrief); 3 shown and 3 answers
    # each; one current each (after the practice's feedback); no 5xx anywhere.
    assert rows == {
        "link": (10, 0),
        "page": (40, 0),
        "consent": (10, 0),
        "screening": (10, 0),
        "enroll": (10, 0),
        "current": (10, 0),
        "shown": (30, 0),
        "answer": (30, 0),
        "done": (10, 0),
    }
    assert re.search(
        r"^p95 target \(every endpoint under 100 ms\): (met|MISSED) \(worst p95 \d+\.\d ms\) at "
        r"\d+\.\d requests/s offered \(4 participants at a time pausing about 20 ms\)$",
        out,
        re.M,
    )
    assert out.rstrip().endswith("result: ok (0 lost, 0 5xx)")
