"""bench/export.py --smoke runs (``make test`` runs it here): 12,000 verified QA pairs (three keyset pages
of 5,000) seeded by SQL in the bench's own database (``<POSTGRES_DB>_bench_export_smoke``, migrated and
seeded on its first run, so that run is slower), exported as JSONL and as Parquet, and read back: every
pair in each file once. Timings and memory are printed, not asserted."""

import re

from tests.bench_smoke import run_smoke


def test_export_bench_smoke_mode_writes_every_pair_once_in_both_formats():
    out = run_smoke("export.py")
    rows = re.findall(
        r"^ +([\d,]+) +(jsonl|parquet) +(\d+\.\d) +([\d,]+) +(\d+)MB +(-?\d+)MB +(\d+\.\d)MB +([\d,]+) "
        r"+([\d,]+)$",
        out,
        re.M,
    )
    assert [(n, fmt, back, ids) for n, fmt, _, _, _, _, _, back, ids in rows] == [
        ("12,000", "jsonl", "12,000", "12,000"),
        ("12,000", "parquet", "12,000", "12,000"),
    ]
    for _, fmt, seconds, per_s, peak_mb, _, file_mb, _, _ in rows:
        assert float(seconds) >= 0 and int(per_s.replace(",", "")) > 0 and int(peak_mb) > 0 and float(file_mb) > 0, fmt
    assert out.rstrip().endswith("smoke: ok")
