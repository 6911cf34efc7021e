"""bench/drafting.py --smoke runs (``make test`` runs it here): 2 real clips through every egonight stage
for 2 QA types against the loopback model server (50 ms a call) at concurrency 2, with the profile, in
the bench's own database (``<POSTGRES_DB>_bench_drafting_smoke``, migrated on its first run, so that
run is slower) and Redis database ``TEST_REDIS_DB`` + 1: every video drafted, every call answered and
stored, never more than 2 in flight. Timings are printed, not asserted."""

import re

from tests.bench_smoke import run_smoke


def test_drafting_bench_smoke_mode_drafts_every_video_with_every_call_stored_within_the_concurrency():
    out = run_smoke("drafting.py")
    assert re.search(r"^  run \d+: done, 2 of 2 videos done, 0 failed, 4 drafts$", out, re.M)
    # 2 videos x 2 QA types x 3 stages, each answered by the server and stored once.
    assert "  calls             12 (12 stored; answer 4, caption 4, questions 4)" in out
    in_flight = re.search(r"^  most in flight    (\d+) \(limit 2\)$", out, re.M)
    assert in_flight and 1 <= int(in_flight.group(1)) <= 2
    wall = float(re.search(r"^  wall time         (\d+\.\d\d) s$", out, re.M).group(1))
    assert re.search(r"^  ideal time        0\.30 s \(calls x 0\.05 s / 2\)$", out, re.M)
    ratio = float(re.search(r"^  ratio             (\d+\.\d{3}) \(target <= 1\.2: (met|MISSED)\)$", out, re.M).group(1))
    assert abs(ratio - wall / 0.30) < 0.05 * ratio
    parts = dict(re.findall(r"^    (\S.*?) +\d+\.\d\d s  \((\d+)\)$", out, re.M))
    # The profile counted each part: a job per video, a frame sampling per clip, a slot and a call per request.
    assert {
        k: parts.get(k)
        for k in (
            "a video's job, in all",
            "sampling frames (ffmpeg)",
            "waiting for a slot",
            "HTTP call (holding a slot)",
            "storing calls",
        )
    } == {
        "a video's job, in all": "2",
        "sampling frames (ffmpeg)": "2",
        "waiting for a slot": "12",
        "HTTP call (holding a slot)": "12",
        "storing calls": "12",
    }
    assert out.rstrip().endswith("smoke: ok")
