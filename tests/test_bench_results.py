"""``make bench``'s record (issue 22, section 6): figures a bench records go to the file
``BENCH_RESULTS`` names, and the tables of the benchmarks page (every figure) and the README (each
bench's first) are written from that file between their markers. Each
bench's own smoke test (``tests/bench_smoke.run_smoke``) checks that the bench records figures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench.lib import results
from tests.conftest import REPO


def test_figures_go_to_the_named_file_with_the_machine_and_load(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    monkeypatch.setenv("BENCH_RESULTS", str(path))
    results.record("queue.py", "1,000 units, 1 annotator: claim p95", 12.345678, "ms")
    results.record("export.py", "jsonl export of 100 QA pairs", 0.5, "s", smoke=True)
    figures = json.loads(path.read_text())["figures"]
    assert [(f["bench"], f["figure"], f["value"], f["unit"], f["smoke"]) for f in figures] == [
        ("queue.py", "1,000 units, 1 annotator: claim p95", 12.3457, "ms", False),
        ("export.py", "jsonl export of 100 QA pairs", 0.5, "s", True),
    ]
    assert figures[0]["machine"]["cpus"] >= 1 and figures[0]["load"] >= 0
    with pytest.raises(ValueError, match="not a finite number"):
        results.record("queue.py", "nothing measured", float("nan"), "ms")


def test_without_a_file_named_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCH_RESULTS", raising=False)
    monkeypatch.chdir(tmp_path)
    results.record("queue.py", "claim p95", 1.0, "ms")
    assert list(tmp_path.iterdir()) == []


def test_the_readme_table_is_written_between_its_markers_and_again_in_place(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    monkeypatch.setenv("BENCH_RESULTS", str(path))
    results.record("queue.py", "100,000 units, 1 annotator, gold 0: claim p95", 16.2, "ms")
    results.record("rt_fidelity.py", "mcq: median |client RT - delay|", 0.1, "ms")
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\n## Figures\n\n{results.README_BEGIN}\nstale row\n{results.README_END}\n\n## After\n")
    results.write_readme(readme, results.load(path))
    text = readme.read_text()
    assert "| `queue.py` | 100,000 units, 1 annotator, gold 0: claim p95 | 16.2 ms |" in text
    # A bar inside a figure is escaped, so its row keeps four cells.
    assert "| `rt_fidelity.py` | mcq: median \\|client RT - delay\\| | 0.1 ms |" in text
    assert "stale row" not in text and text.endswith("## After\n") and text.count(results.README_BEGIN) == 1
    results.write_readme(readme, results.load(path))
    assert readme.read_text() == text
    with pytest.raises(ValueError, match="no bench results markers"):
        results.write_readme(tmp_path / "results.json", [])


def test_the_page_has_every_figure_and_the_readme_each_benchs_first_with_how_many_more(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    monkeypatch.setenv("BENCH_RESULTS", str(path))
    for n in range(30):
        results.record("queue.py", f"{n:,} units: claim p95", 10 + n, "ms")
    results.record("seek.py", "HLS: seek, median", 34.5, "ms")
    empty = f"# Page\n\n{results.README_BEGIN}\n{results.README_END}\n"
    page, readme = tmp_path / "benchmarks.md", tmp_path / "README.md"
    page.write_text(empty)
    readme.write_text(empty)
    results.write_page(page, results.load(path))
    results.write_readme(readme, results.load(path))
    assert page.read_text().count("| `queue.py` |") == 30 and "| 29 units: claim p95 | 39 ms |" in page.read_text()
    text = readme.read_text()
    assert text.count("| `queue.py` |") == 1 and "| `queue.py` | 0 units: claim p95 | 10 ms |" in text
    assert text.count("| `seek.py` |") == 1 and "all 31 are on the [benchmarks page]" in text
    assert [line.rsplit("|", 2)[1].strip() for line in text.splitlines() if line.startswith("| `")] == ["29", "0"]


def test_the_repository_readme_and_page_have_the_markers_and_all_lists_every_bench():
    for name in ("README.md", "docs/benchmarks.md"):
        text = (REPO / name).read_text()
        assert results.README_BEGIN in text and results.README_END in text, name
    done = subprocess.run(
        [sys.executable, "bench/all.py", "--only", "nowhere.py"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 2 and "no such bench: nowhere.py" in done.stderr
    for bench in ("queue.py", "load.py", "participants.py", "export.py", "seek.py"):
        assert bench in done.stderr
    assert "fill.py" not in done.stderr and "results.py" not in done.stderr  # helpers, not benches


def test_a_partial_run_replaces_its_benches_figures_and_keeps_the_others(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    monkeypatch.setenv("BENCH_RESULTS", str(path))
    results.record("queue.py", "claim p95", 16.2, "ms")
    results.record("report.py", "report table", 2.1, "s")
    results.record("queue.py", "submit p95", 20.0, "ms")
    results.drop(path, ["queue.py"])  # what bench/all.py --only queue.py does before running it
    assert [(f["bench"], f["figure"]) for f in results.load(path)] == [("report.py", "report table")]
    results.drop(tmp_path / "none.json", ["queue.py"])
    assert not (tmp_path / "none.json").exists()
