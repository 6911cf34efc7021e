"""bench/ratings_import.py --smoke runs (make test runs it here): 2,000 ratings posted as JSON and as
JSON Lines through the whole stack are stored (1,875 with a value), and a body over a limit lowered to
1,999 is refused naming it, with
nothing stored. It shares its scratch database with the participants bench's smoke
(``<POSTGRES_DB>_bench_participants_smoke``), so one migration serves both."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_ratings_import_bench_smoke_mode_stores_both_formats_and_refuses_over_the_limit():
    db = f"{os.environ.get('POSTGRES_DB', 'annotator')}_bench_participants_smoke"
    done = subprocess.run([sys.executable, str(REPO / "bench" / "ratings_import.py"), "--smoke"], capture_output=True,
                          text=True, timeout=600, cwd=REPO, env={**os.environ, "BENCH_RATINGS_DB": db})
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "smoke json: 201" in out and "smoke jsonl: 201" in out
    assert "smoke over the limit: 400" in out and "a rating set holds at most 1,999" in out
    assert out.rstrip().endswith("smoke: ok")
