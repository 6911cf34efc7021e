"""bench/load.py --smoke runs (make test runs it here): Locust's simulated annotators (claim,
heartbeat, autosave, submit) and study-link participants (shown, answer, current) against gunicorn
with K = 1 and then 2 worker processes, in ``<POSTGRES_DB>_bench_load_smoke``. Every endpoint is
called in each run, none fails, and every submit and answer the server acknowledged has its row;
each run's CPU per request and the stack's floor (a request through Django alone, and through DRF
with token authentication) are printed."""

import re

from tests.bench_smoke import run_smoke

ENDPOINTS = ("claim", "heartbeat", "autosave", "submit", "current", "shown", "answer")


def test_load_bench_smoke_calls_every_endpoint_with_no_error_and_loses_no_submit_or_answer():
    out = run_smoke("load.py", timeout=900)
    runs = re.split(r"^K = ", out, flags=re.MULTILINE)[1:]
    assert [run.split()[0] for run in runs] == ["1", "2"], out
    for run in runs:
        rows = {
            m[0]: (int(m[1]), int(m[2]))
            for m in re.findall(r"^(\w+)\s+(\d+)\s+[\d.]+\s+[\d.na]+\s+[\d.na]+\s+[\d.na]+\s+(\d+)$", run, re.MULTILINE)
        }
        for endpoint in ENDPOINTS:
            requests, errors = rows[endpoint]
            assert requests > 0 and errors == 0, (endpoint, run)
        lost = re.search(
            r"submits acknowledged (\d+), stored (\d+): lost (\d+); "
            r"answers acknowledged (\d+), stored (\d+): lost (\d+);",
            run,
        )
        assert lost is not None, run
        acked_submits, stored_submits, lost_submits, acked_answers, stored_answers, lost_answers = map(
            int, lost.groups()
        )
        assert acked_submits > 0 and acked_answers > 0, run
        assert (lost_submits, lost_answers) == (0, 0) and (stored_submits, stored_answers) == (
            acked_submits,
            acked_answers,
        )
        assert re.search(r"^bottleneck: \S", run, re.MULTILINE), run
    assert re.search(r"^\s+1\s+[\d.]+\s.*\n\s+2\s+[\d.]+\s", out, re.MULTILINE), out  # the K curve
    for k in ("1", "2"):  # each run's CPU per request and the cores the pacing needs at it
        assert re.search(rf"^K={k}: CPU per request web [\d.]+ ms, .*: [\d.]+ cores at \d+ requests/s$", out, re.M), out
    floor = re.search(
        r"^stack floor .*: a Django view ([\d.]+) ms, a DRF view with token authentication ([\d.]+) ms", out, re.M
    )
    assert floor is not None, out
    django_ms, drf_ms = map(float, floor.groups())
    assert 0 < django_ms < drf_ms, out  # DRF and the token's query cost more than Django alone
    assert out.rstrip().endswith("result: ok (smoke)")
