"""bench/report.py --smoke runs (make test runs it here): a small report built, written in every
format and checked for its shape by the bench itself; a failing check exits non-zero."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_report_bench_smoke_mode_passes():
    done = subprocess.run([sys.executable, str(REPO / "bench" / "report.py"), "--smoke"], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "smoke: ok" in done.stdout and "report table" in done.stdout and "peak RSS" in done.stdout
