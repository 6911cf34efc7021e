"""Benchmark figures on record (issue 22, section 6): each bench calls ``record`` for its headline
figures as it prints them. When the environment variable ``BENCH_RESULTS`` names a file (``make
bench`` sets it to ``bench/results.json``; the smoke tests to a scratch file), each figure is added
to it: ``{"figures": [{"bench", "figure", "value", "unit", "smoke", "machine", "load", "at"}]}``,
where ``machine`` is the CPU count, platform and Python version, and ``load`` the 1-minute load
average when the figure was taken (the figures of a busy machine are not those of a quiet one).
Without ``BENCH_RESULTS`` it does nothing. ``bench/all.py`` runs every bench and writes, from the
file, the benchmarks page's table of every figure (``full_table``) and the README's of each bench's
first (``readme_table``).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import time
from collections import Counter
from pathlib import Path

README_BEGIN = "<!-- bench results: made by bench/all.py from bench/results.json; do not edit by hand -->"
README_END = "<!-- end of bench results -->"


def machine() -> dict:
    """This machine, as a figure's record names it."""
    return {"cpus": os.cpu_count(), "platform": platform.platform(terse=True), "python": platform.python_version()}


def record(bench: str, figure: str, value: float, unit: str, *, smoke: bool = False) -> None:
    """Add one figure of ``bench`` (its file name, e.g. ``queue.py``) to the file ``BENCH_RESULTS``
    names, if any: ``figure`` in words (what was measured, at which size), its ``value`` (a finite
    number) in ``unit`` (``ms``, ``s``, ``/s``, ``MB``, ``x``, ...), and whether it comes from a
    ``--smoke`` run. Raises ValueError for a value that is not a finite number."""
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{bench}: {figure} is not a finite number: {value}")
    path = os.environ.get("BENCH_RESULTS")
    if not path:
        return
    entry = {
        "bench": bench,
        "figure": figure,
        "value": round(value, 4),
        "unit": unit,
        "smoke": smoke,
        "machine": machine(),
        "load": round(os.getloadavg()[0], 2),
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with open(path, "a+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # benches of one make bench run in turn; tests may share nothing
        f.seek(0)
        text = f.read()
        data = json.loads(text) if text.strip() else {"figures": []}
        data["figures"].append(entry)
        f.seek(0)
        f.truncate()
        json.dump(data, f, indent=1)


def drop(path: Path, benches: list[str]) -> None:
    """Remove the figures of ``benches`` (file names, e.g. ``queue.py``) from the results file at
    ``path``, keeping every other bench's; nothing when the file does not exist."""
    if not path.exists():
        return
    dropped = set(benches)
    kept = [f for f in load(path) if f["bench"] not in dropped]
    path.write_text(json.dumps({"figures": kept}, indent=1))


def load(path: Path) -> list[dict]:
    """The figures of a results file (none when it does not exist)."""
    return json.loads(path.read_text())["figures"] if path.exists() else []


def _machines(figures: list[dict]) -> str:
    machines = {json.dumps(f["machine"], sort_keys=True) for f in figures}
    names = "; ".join(
        f"{m['cpus']} CPUs, {m['platform']}, Python {m['python']}" for m in map(json.loads, sorted(machines))
    )
    return f"Measured on {names}, from {min(f['at'] for f in figures)} to {max(f['at'] for f in figures)}."


def _row(f: dict, *extra: str) -> str:
    value = f"{f['value']:,.2f}".rstrip("0").rstrip(".")
    smoke = " (smoke)" if f.get("smoke") else ""
    figure = f["figure"].replace("|", "\\|")  # a figure's own bars (|x - y|) would split its row
    cells = [f"`{f['bench']}`{smoke}", figure, f"{value} {f['unit']}", f"{f['load']:.2f}", *extra]
    return "| " + " | ".join(cells) + " |"


def full_table(figures: list[dict]) -> str:
    """Every figure of ``figures`` as a Markdown table (the benchmarks page's): one row per figure, in
    the order recorded, with the load average it was taken at; the machine named above it."""
    if not figures:
        return "No figures on record yet: run `make bench`."
    lines = [_machines(figures), "", "| bench | figure | value | load |", "|---|---|---:|---:|"]
    lines += [_row(f) for f in figures]
    return "\n".join(lines)


def readme_table(figures: list[dict]) -> str:
    """The README's table of ``figures`` (Markdown): each bench's first figure recorded (its lead
    figure), with how many more it has on the benchmarks page (``full_table``), so the README stays
    short however many figures the benches record (issue 23: under 200 lines)."""
    if not figures:
        return "No figures on record yet: run `make bench`."
    counts = Counter(f["bench"] for f in figures)
    firsts = {bench: next(f for f in figures if f["bench"] == bench) for bench in counts}
    lines = [
        f"{_machines(figures)} Each bench's first figure; all {len(figures)} are on the "
        "[benchmarks page](docs/benchmarks.md#figures).",
        "",
        "| bench | figure | value | load | more |",
        "|---|---|---:|---:|---:|",
    ]
    lines += [_row(f, str(counts[bench] - 1)) for bench, f in firsts.items()]
    return "\n".join(lines)


def write_between(path: Path, table: str) -> None:
    """Put ``table`` between the markers (``README_BEGIN``, ``README_END``) of the Markdown file at
    ``path``. Raises ValueError when the file lacks them."""
    text = path.read_text()
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{path} has no bench results markers")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(f"{head}{README_BEGIN}\n{table}\n{README_END}{tail}")


def write_readme(readme: Path, figures: list[dict]) -> None:
    """Put ``readme_table(figures)`` between the README's markers. Raises ValueError when it lacks them."""
    write_between(readme, readme_table(figures))


def write_page(page: Path, figures: list[dict]) -> None:
    """Put ``full_table(figures)`` between the benchmarks page's markers. Raises ValueError when it
    lacks them."""
    write_between(page, full_table(figures))
