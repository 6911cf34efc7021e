"""Queue benchmark: annotators claim and submit work units through the HTTP API as in production.

    .venv/bin/python bench/queue.py [--scales 1000,100000,1000000] [--annotators 1,10,50] [--seconds 10]

Needs the local stack (``scripts/stack.sh start``); uses its own database ``annotator_bench``,
rebuilt for every scale. For each scale the queue is filled with N units (one draft QA pair each)
by SQL, then gunicorn serves the API (``--workers 4``, sync workers, as ``make demo`` minus threads)
and for each concurrency level that many annotators, each a thread with its own keep-alive HTTP
connection and API token, loop for ``--seconds``: ``POST /api/projects/bench/queue/next/`` (the
claim), then ``POST /api/units/{id}/submit/`` keeping the QA pair. Printed per run: claims/s,
claim latency p50/p95 and submit p50/p95 in ms (client side, including HTTP), and the number of
units served to two annotators (must be 0; checked from the claims and again from the database).
Target (issue 3): one annotator's claim p95 under 10 ms; at 1M units every figure within 1.2x of 1k.
"""

from __future__ import annotations

import os
import sys

# This file is named after what it measures; keep it from shadowing the standard library's ``queue``
# (its folder is sys.path[0] when run as a script).
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import argparse  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DB = "annotator_bench"
PORT = int(os.environ.get("BENCH_PORT", "8765"))
sys.path.insert(0, str(REPO))


def ensure_database() -> None:
    import psycopg

    params = dict(host=os.environ.get("POSTGRES_HOST", "127.0.0.1"), port=int(os.environ.get("POSTGRES_PORT", "54329")),
                  user=os.environ.get("POSTGRES_USER", "annotator"), dbname="postgres", autocommit=True)
    with psycopg.connect(**params) as conn:
        if not conn.execute("select 1 from pg_database where datname = %s", [DB]).fetchone():
            conn.execute(f'create database "{DB}"')


def setup_django() -> None:
    os.environ["POSTGRES_DB"] = DB
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def fill(n_units: int, n_annotators: int) -> list[str]:
    """Empty the bench database and queue ``n_units`` units; return one API token per annotator."""
    from django.db import connection

    from annotator.media.models import Video
    from annotator.projects.services import ensure_member, ensure_project, token_for
    from annotator.qa.services import ensure_qa_type

    with connection.cursor() as c:
        c.execute("truncate qa_autosave, qa_skip, qa_verdict, qa_revision, qa_submission, qa_qapair, qa_queueitem, "
                  "qa_workunit, qa_qatype, drafts_draft, drafts_modelcall, drafts_draftjob, drafts_draftrun, "
                  "media_videogroupmember, media_videogroup, media_video cascade")
    project = ensure_project("bench")
    project.double_check_share = 0.0  # measure the first pass alone
    project.save()
    video = Video.objects.create(project=project, sha256="b" * 64, filename="bench.mp4", status="ready",
                                 duration_s=10.0, fps=25.0, width=640, height=360)
    qa_type = ensure_qa_type(project, "object_recognition")
    tokens = [token_for(ensure_member(f"bench{i}", role="annotator", project=project)[0]) for i in range(n_annotators)]
    with connection.cursor() as c:
        c.execute("insert into qa_workunit (project_id, video_id, start_s, end_s, created_at) "
                  "select %s, %s, 0, 10, now() from generate_series(1, %s)", [project.pk, video.pk, n_units])
        c.execute("insert into qa_queueitem (project_id, unit_id, kind, seq, status, priority, created_at) "
                  "select project_id, id, 'first_pass', 0, 'open', 0, now() from qa_workunit")
        c.execute("insert into qa_qapair (project_id, unit_id, video_id, qa_type_id, origin, question, answer, "
                  "clip_start_s, clip_end_s, status, provenance, delete_reason, flag_reason, flag_source, version, "
                  "created_at, updated_at) select project_id, id, video_id, %s, 'machine', 'What is on the table?', "
                  "'a cup', 0, 3, 'draft', '', '', '', '', 1, now(), now() from qa_workunit", [qa_type.pk])
    connection.close()
    with connection.cursor() as c:  # VACUUM cannot run in a transaction block; Django autocommits here
        c.execute("vacuum analyze")
    return tokens


def start_server() -> subprocess.Popen:
    env = {**os.environ, "POSTGRES_DB": DB, "DJANGO_DEBUG": "false", "LOG_LEVEL": "WARNING"}
    proc = subprocess.Popen(
        [str(REPO / ".venv/bin/gunicorn"), "annotator.wsgi", "--bind", f"127.0.0.1:{PORT}", "--workers", "4",
         "--log-level", "warning"], cwd=REPO, env=env)
    for _ in range(200):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=1)
            conn.request("GET", "/api/schema/")
            conn.getresponse().read()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("gunicorn did not start")


def annotator(token: str, seconds: float, start: threading.Barrier, out: dict) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    claims, submits, served = [], [], []
    run_id = os.urandom(4).hex()  # idempotency keys unique across runs
    start.wait()
    deadline = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < deadline:
        t0 = time.perf_counter()
        conn.request("POST", "/api/projects/bench/queue/next/", body=b"", headers=headers)
        res = conn.getresponse()
        body = res.read()
        claims.append(time.perf_counter() - t0)
        if res.status == 204:
            break
        unit = json.loads(body)
        served.append(unit["id"])
        payload = json.dumps({"idempotency_key": f"{token[:8]}-{run_id}-{n}", "time_spent_ms": 1000,
                              "decisions": [{"qa_id": q["id"], "action": "keep", "version": q["version"]} for q in unit["qa_pairs"]]})
        t0 = time.perf_counter()
        conn.request("POST", f"/api/units/{unit['id']}/submit/", body=payload, headers=headers)
        res = conn.getresponse()
        res.read()
        submits.append(time.perf_counter() - t0)
        if res.status != 200:
            out.setdefault("errors", []).append(res.status)
        n += 1
    out.setdefault("claims", []).extend(claims)
    out.setdefault("submits", []).extend(submits)
    out.setdefault("served", []).append((token, served))


def pct(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] * 1000 if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def run(tokens: list[str], k: int, seconds: float) -> dict:
    from django.db import connection

    out: dict = {}
    barrier = threading.Barrier(k)
    threads = [threading.Thread(target=annotator, args=(tokens[i], seconds, barrier, out)) for i in range(k)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    by_unit = defaultdict(set)
    for token, units in out["served"]:
        for u in units:
            by_unit[u].add(token)
    twice_claims = sum(1 for people in by_unit.values() if len(people) > 1)
    with connection.cursor() as c:
        c.execute("select count(*) from (select unit_id from qa_submission s join qa_queueitem i on i.id = s.item_id "
                  "group by unit_id having count(distinct s.user_id) > 1) x")
        twice_db = c.fetchone()[0]
    connection.close()
    return {"claims_per_s": len(out["claims"]) / elapsed, "claim_p50": pct(out["claims"], 50), "claim_p95": pct(out["claims"], 95),
            "submit_p50": pct(out["submits"], 50), "submit_p95": pct(out["submits"], 95), "claims": len(out["claims"]),
            "served_twice": twice_claims + twice_db, "errors": len(out.get("errors", []))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="1000,100000,1000000")
    parser.add_argument("--annotators", default="1,10,50")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    scales = [int(x) for x in args.scales.split(",")]
    levels = [int(x) for x in args.annotators.split(",")]
    ensure_database()
    setup_django()
    rows = []
    print(f"{'units':>9} {'annot.':>6} {'claims/s':>9} {'claim p50':>10} {'claim p95':>10} {'submit p50':>11} "
          f"{'submit p95':>11} {'claims':>7} {'twice':>6} {'errors':>6}", flush=True)
    for n in scales:
        t0 = time.perf_counter()
        tokens = fill(n, max(levels))
        print(f"# queued {n} units in {time.perf_counter() - t0:.1f} s", flush=True)
        server = start_server()
        try:
            run(tokens, 1, 1.0)  # warm-up: imports, connections, caches
            for k in levels:
                r = run(tokens, k, args.seconds)
                rows.append((n, k, r))
                print(f"{n:>9} {k:>6} {r['claims_per_s']:>9.1f} {r['claim_p50']:>8.2f}ms {r['claim_p95']:>8.2f}ms "
                      f"{r['submit_p50']:>9.2f}ms {r['submit_p95']:>9.2f}ms {r['claims']:>7} {r['served_twice']:>6} "
                      f"{r['errors']:>6}", flush=True)
        finally:
            server.terminate()
            server.wait()
    if len(scales) > 1:
        small, large = scales[0], scales[-1]
        print(f"\nratio {large} / {small} units (target: within 1.2x):")
        for k in levels:
            a = next(r for n, kk, r in rows if n == small and kk == k)
            b = next(r for n, kk, r in rows if n == large and kk == k)
            print(f"  {k:>2} annotators: claims/s {b['claims_per_s'] / a['claims_per_s']:.2f}x, "
                  f"claim p50 {b['claim_p50'] / a['claim_p50']:.2f}x, claim p95 {b['claim_p95'] / a['claim_p95']:.2f}x")


if __name__ == "__main__":
    main()
