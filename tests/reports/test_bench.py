"""bench/report.py --smoke runs (make test runs it here): a small report built, written in every
format and checked for its shape by the bench itself; a failing check exits non-zero."""

from tests.bench_smoke import run_smoke


def test_report_bench_smoke_mode_passes():
    out = run_smoke("report.py", timeout=120)
    assert "smoke: ok" in out and "report table" in out and "peak RSS" in out
