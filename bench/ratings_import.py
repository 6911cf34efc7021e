"""Ratings import benchmark (issue 19, "Ratings import: streamed, with a row limit"): the largest body
``POST /api/projects/SLUG/agreement/ratings/`` accepts, timed, with the web process's memory.

    .venv/bin/python bench/ratings_import.py [--ratings 200000] [--format json|jsonl|both] [--smoke]

Needs the local stack (``scripts/stack.sh start``). Works in a scratch database of its own
(``annotator_bench_ratings``, created and migrated if missing; ``BENCH_RATINGS_DB`` overrides).

1. **Body**: ``--ratings`` ratings (default ``RATINGS_MAX``, 200,000) of an interval set, 5 raters per
   item, 5% of values null (missing), the item names padded so that the JSON body is just under the
   32 MiB the endpoint accepts (about 167 bytes a rating). Written once to ``.local/bench-ratings/``;
   the JSON Lines body is the same ratings, one a line, with the set's fields in the query string.
2. **Post**, per format, in a child process (so its peak resident size is the request's): Django's test
   client posts the body through the whole stack (authentication, parser, view, service, PostgreSQL)
   as a researcher with a token. The child reads the body file first, then prints the status, the
   ratings stored, the seconds of the request, the RSS before it (Django loaded and the body in
   memory) and the peak RSS (``ru_maxrss``), and their difference: what the request itself held.

``--smoke`` posts 2,000 ratings in both formats and checks 201 and the count stored, then one row
over a limit of 2,000 (``RATINGS_MAX`` lowered in the child) and checks the 400 names the limit and
nothing was stored; a failed check exits non-zero. ``make test`` does not run it: it needs the scratch
database migrated (about a minute the first time), and tests/agreement/test_ratings_import_limits.py
checks the same behaviour on the test database.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parent.parent
# bench/ holds queue.py, which would shadow the standard library's ``queue`` (psycopg imports it):
# drop this folder (sys.path[0] when run as a script) and put the repository first.
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

from bench.lib.results import record  # noqa: E402

DB = os.environ.get("BENCH_RATINGS_DB", "annotator_bench_ratings")
OUT = REPO / ".local" / "bench-ratings"
BODY_MAX = 32 * 1024 * 1024
RATERS = 5
SLUG = "bench-ratings"


def setup_django() -> None:
    """Django on the scratch database, created if missing and migrated."""
    import psycopg

    pg = {
        "host": os.environ.get("POSTGRES_HOST", "127.0.0.1"),
        "port": int(os.environ.get("POSTGRES_PORT", "54329")),
        "user": os.environ.get("POSTGRES_USER", "annotator"),
    }
    with psycopg.connect(**pg, dbname="postgres", autocommit=True) as conn:
        if not conn.execute("select 1 from pg_database where datname = %s", [DB]).fetchone():
            conn.execute(f'create database "{DB}"')
    os.environ["POSTGRES_DB"] = DB
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def ratings(n: int, pad: int) -> list[dict]:
    """``n`` ratings, ``RATERS`` per item, values 0-100 with 2 decimals, 5% null; item names ``pad``
    characters long."""
    rng = random.Random(0)
    out = []
    for k in range(n):
        i, r = divmod(k, RATERS)
        item = f"clip-{i:06d}/".ljust(pad, "x")
        out.append(
            {
                "item": item,
                "rater": f"rater-{r}",
                "value": None if rng.random() < 0.05 else round(rng.uniform(0, 100), 2),
            }
        )
    return out


HEADER = {"name": "bench", "level": "interval", "description": "bench/ratings_import.py", "replace": True}


def write_bodies(n: int) -> tuple[Path, Path]:
    """The JSON body (just under BODY_MAX for ``n`` = 200,000) and the JSON Lines body; returns their paths."""
    OUT.mkdir(parents=True, exist_ok=True)
    probe = len(json.dumps({**HEADER, "ratings": ratings(n, 1)}).encode())
    pad = max(12, min(150, 12 + (BODY_MAX - 64 - probe) // n))  # "clip-000000/" is 12 characters
    rows = ratings(n, pad)
    body = json.dumps({**HEADER, "ratings": rows}).encode()
    assert len(body) <= BODY_MAX, len(body)
    (json_path := OUT / f"body-{n}.json").write_bytes(body)
    (jsonl_path := OUT / f"body-{n}.jsonl").write_bytes("".join(json.dumps(r) + "\n" for r in rows).encode())
    return json_path, jsonl_path


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(path: Path, fmt: str, limit: int | None) -> None:
    """Post the body at ``path`` once and print one JSON line of figures."""
    setup_django()
    from django.test import Client
    from django.test.utils import setup_test_environment

    from annotator.agreement.models import RatingSet
    from annotator.projects.services import ensure_member, ensure_project, token_for

    setup_test_environment()  # the test client's host, "testserver", is allowed
    if limit is not None:
        from annotator.agreement.services import ratings

        ratings.RATINGS_MAX = limit  # where the import and the API read it
    project = ensure_project(SLUG)
    RatingSet.objects.filter(project=project).delete()
    user = ensure_member("bench-ratings", role="researcher", project=project)[0]
    client = Client(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    body = path.read_bytes()
    url = f"/api/projects/{SLUG}/agreement/ratings/"
    if fmt == "jsonl":
        url, content_type = f"{url}?{urlencode(HEADER)}", "application/x-ndjson"
    else:
        content_type = "application/json"
    before = rss_mib()
    started, cpu = time.perf_counter(), time.process_time()
    res = client.post(url, body, content_type=content_type)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stored = (
        RatingSet.objects.get(project=project).ratings.count()
        if RatingSet.objects.filter(project=project).exists()
        else 0
    )
    print(
        json.dumps(
            {
                "status": res.status_code,
                "answer": res.json(),
                "stored": stored,
                "seconds": round(seconds, 2),
                "cpu_s": round(cpu, 2),
                "bytes": len(body),
                "rss_before_mib": round(before),
                "peak_rss_mib": round(peak),
                "request_mib": round(peak - before),
            }
        )
    )


def post(path: Path, fmt: str, limit: int | None = None) -> dict:
    args = [sys.executable, __file__, "--child", str(path), "--format", fmt]
    if limit is not None:
        args += ["--limit", str(limit)]
    done = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=600, check=False)
    if done.returncode != 0:
        sys.exit(f"the child failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def smoke() -> None:
    json_path, jsonl_path = write_bodies(2000)
    problems = []
    for fmt, path in (("json", json_path), ("jsonl", jsonl_path)):
        got = post(path, fmt)
        print(f"smoke {fmt}: {got['status']} {got['answer']} in {got['seconds']} s")
        record("ratings_import.py", f"import of 2,000 ratings as {fmt}", got["seconds"], "s", smoke=True)
        nulls = sum(r["value"] is None for r in ratings(2000, 1))
        if (got["status"], got["stored"], got["answer"]) != (
            201,
            2000 - nulls,
            {"name": "bench", "ratings": 2000 - nulls},
        ):
            problems.append(f"{fmt}: expected 201 and {2000 - nulls} stored, got {got}")
    got = post(json_path, "json", limit=1999)
    print(f"smoke over the limit: {got['status']} {got['answer']['detail']!r}")
    if got["status"] != 400 or "1,999" not in got["answer"]["detail"] or got["stored"] != 0:
        problems.append(f"over the limit: expected a 400 naming 1,999 and nothing stored, got {got}")
    if problems:
        sys.exit("\n".join(problems))
    print("smoke: ok")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ratings", type=int, default=200_000)
    parser.add_argument("--format", choices=["json", "jsonl", "both"], default="both")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.format, args.limit)
    if args.smoke:
        return smoke()
    json_path, jsonl_path = write_bodies(args.ratings)
    for fmt, path in (("json", json_path), ("jsonl", jsonl_path)):
        if args.format not in (fmt, "both"):
            continue
        got = post(path, fmt)
        print(
            f"{fmt:>5}: {args.ratings:,} ratings, {got['bytes'] / 2**20:.1f} MiB -> {got['status']} "
            f"({got['stored']:,} stored) in {got['seconds']:.2f} s ({got['cpu_s']:.2f} s of this process's CPU); RSS {got['rss_before_mib']} MiB before, peak "
            f"{got['peak_rss_mib']} MiB (+{got['request_mib']} MiB for the request)"
        )
        if got["status"] != 201:
            print(f"       answer: {json.dumps(got['answer'])[:300]}")
            continue
        record("ratings_import.py", f"import of {args.ratings:,} ratings as {fmt}", got["seconds"], "s")
        record(
            "ratings_import.py",
            f"import of {args.ratings:,} ratings as {fmt}: peak resident memory",
            got["peak_rss_mib"],
            "MiB",
        )


if __name__ == "__main__":
    main()
