"""bench/ratings_import.py --smoke runs (make test runs it here): 2,000 ratings posted as JSON and as
JSON Lines through the whole stack are stored (1,875 with a value), and a body over a limit lowered to
1,999 is refused naming it, with
nothing stored. It shares its scratch database with the participants bench's smoke
(``<POSTGRES_DB>_bench_participants_smoke``), so one migration serves both."""

import os

from tests.bench_smoke import run_smoke


def test_ratings_import_bench_smoke_mode_stores_both_formats_and_refuses_over_the_limit():
    db = f"{os.environ.get('POSTGRES_DB', 'annotator')}_bench_participants_smoke"
    out = run_smoke("ratings_import.py", env={"BENCH_RATINGS_DB": db})
    assert "smoke json: 201" in out and "smoke jsonl: 201" in out
    assert "smoke over the limit: 400" in out and "a rating set holds at most 1,999" in out
    assert out.rstrip().endswith("smoke: ok")
