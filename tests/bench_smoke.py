"""Running a benchmark's ``--smoke`` mode from a test, as ``make test`` does (every bench in
``bench/`` has one, so none rots unseen)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


# The scratch database each bench's --smoke uses (``<POSTGRES_DB>`` + this), unless ``BENCH_*_DB`` is given.
SCRATCH_DB = {
    "drafting.py": "_bench_drafting_smoke",
    "export.py": "_bench_export_smoke",
    "load.py": "_bench_load_smoke",
    "participants.py": "_bench_participants_smoke",
    "queue.py": "_bench_queue_smoke",
    "rt_fidelity.py": "_bench_rt_smoke",
    "scoring.py": "_bench_scoring_smoke",
    "seek.py": "_bench_seek_smoke",
    "units_page.py": "_bench_units_smoke",
}
DB_VARIABLE = {
    "drafting.py": "BENCH_DRAFTING_DB",
    "export.py": "BENCH_EXPORT_DB",
    "participants.py": "BENCH_PARTICIPANTS_DB",
    "ratings_import.py": "BENCH_RATINGS_DB",
    "rt_fidelity.py": "BENCH_RT_DB",
    "scoring.py": "BENCH_SCORING_DB",
    "seek.py": "BENCH_SEEK_DB",
}


def run_smoke(script: str, *, timeout: int = 600, env: dict | None = None) -> str:
    """Run ``bench/<script> --smoke`` from the repository root with this interpreter and return what
    it printed (stdout). ``env`` is added to this process's environment. Fails the test, with the
    output and the end of stderr, when the bench exits non-zero; ``timeout`` is in seconds.

    A scratch database the bench would create and migrate on its first run is made first as a copy
    of the migrated template (tests/pg_template.py): the bench's own migrate then finds nothing to do.

    The bench's figures go on record in a scratch ``BENCH_RESULTS`` file (``bench/lib/results.py``, what
    ``make bench`` collects); a bench that records none, or a figure not marked smoke, fails here."""
    from tests.pg_template import ensure_copy

    given = {**os.environ, **(env or {})}.get(DB_VARIABLE.get(script, ""))
    if given or script in SCRATCH_DB:
        ensure_copy(given or os.environ.get("POSTGRES_DB", "annotator") + SCRATCH_DB[script])
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch) / "results.json"
        done = subprocess.run(
            [sys.executable, str(REPO / "bench" / script), "--smoke"],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
            env={**os.environ, **(env or {}), "BENCH_RESULTS": str(results)},
        )
        assert done.returncode == 0, done.stdout + done.stderr[-4000:]
        figures = json.loads(results.read_text())["figures"] if results.exists() else []
    assert figures, f"bench/{script} --smoke put no figure on record (bench.lib.results.record)"
    assert {f["bench"] for f in figures} == {script} and all(f["smoke"] for f in figures), figures
    return done.stdout
