"""Running a benchmark's ``--smoke`` mode from a test, as ``make test`` does (every bench in
``bench/`` has one, so none rots unseen)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_smoke(script: str, *, timeout: int = 600, env: dict | None = None) -> str:
    """Run ``bench/<script> --smoke`` from the repository root with this interpreter and return what
    it printed (stdout). ``env`` is added to this process's environment. Fails the test, with the
    output and the end of stderr, when the bench exits non-zero; ``timeout`` is in seconds."""
    done = subprocess.run([sys.executable, str(REPO / "bench" / script), "--smoke"], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    return done.stdout
