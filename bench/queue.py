"""Queue benchmark: annotators claim and submit work units through the HTTP API as in production.

    .venv/bin/python bench/queue.py [--scales 1000,100000,1000000] [--annotators 1,10,50]
                                    [--seconds 8] [--repeats 3]

Needs the local stack (``scripts/stack.sh start``, or ``make bench``). Each scale N gets a database
of its own (``annotator_bench_N``), filled once by SQL with N queued units of one draft QA pair each,
and a gunicorn serving the API from it (4 sync workers). A run: that many annotators, each a thread
with its own HTTP connection and API token, loop for ``--seconds`` (or until half the queue is
claimed): ``POST /api/projects/bench/queue/next/`` (the claim), then ``POST /api/units/{id}/submit/``
keeping the QA pair. Before every run the queue is put back as filled (only the rows a run touched)
and vacuumed. Runs are interleaved over the scales and repeated; the table gives the median of the
repeats: claims/s, claim and submit latency p50/p95 in ms (client side, HTTP included), and the
units served to two annotators (summed over repeats, from the claims and from the database: must
be 0). Targets (issue 3): one annotator's claim p95 under 10 ms; at 1M units every figure within
1.2x of the same figure at 1k.
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

import psycopg  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BASE_PORT = int(os.environ.get("BENCH_PORT", "8765"))
PG = dict(host=os.environ.get("POSTGRES_HOST", "127.0.0.1"), port=int(os.environ.get("POSTGRES_PORT", "54329")),
          user=os.environ.get("POSTGRES_USER", "annotator"))


def db_name(n: int) -> str:
    return f"annotator_bench_{n}"


def sql(db: str, *statements: str, params=None):
    """Run statements in autocommit on ``db``; returns the last statement's first row (or None)."""
    with psycopg.connect(**PG, dbname=db, autocommit=True) as conn:
        row = None
        for statement in statements:
            cur = conn.execute(statement, params)
            row = cur.fetchone() if cur.description else None
        return row


def fill_in_child(n_units: int, n_annotators: int) -> list[str]:
    """(Child process, Django set up on the scale's database.) Empty it, queue ``n_units`` units and
    create the annotators; print their API tokens as JSON."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotator.media.models import Video
    from annotator.projects.services import ensure_member, ensure_project, token_for
    from annotator.qa.services import ensure_qa_type

    call_command("migrate", verbosity=0)
    with connection.cursor() as c:
        c.execute("truncate qa_autosave, qa_skip, qa_verdict, qa_revision, qa_submission, qa_qapair, qa_queueitem, "
                  "qa_workunit, qa_qatype, drafts_draft, inference_modelcall, drafts_draftjob, drafts_draftrun, "
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
    return tokens


def fill(n_units: int, n_annotators: int) -> list[str]:
    db = db_name(n_units)
    if not sql("postgres", "select 1 from pg_database where datname = %s", params=[db]):
        sql("postgres", f'create database "{db}"')
    env = {**os.environ, "POSTGRES_DB": db, "DJANGO_SETTINGS_MODULE": "annotator.settings", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, __file__, "--fill-child", str(n_units), str(n_annotators)], env=env, cwd=REPO,
                         capture_output=True, text=True, check=True)
    sql(db, "vacuum analyze")
    return json.loads(out.stdout.strip().splitlines()[-1])


def reset(n_units: int) -> None:
    """Put the queue back as ``fill`` left it (every unit open, every QA pair a draft), touching only
    the rows a run changed, then vacuum so every run starts from the same state."""
    db = db_name(n_units)
    sql(db, "delete from qa_verdict", "delete from qa_revision", "delete from qa_submission", "delete from qa_autosave",
        "delete from qa_skip", "delete from qa_queueitem where kind <> 'first_pass'",
        "update qa_queueitem set status = 'open', leased_by_id = null, lease_expires_at = null, completed_by_id = null, "
        "completed_at = null, time_spent_ms = null where status = 'done' or leased_by_id is not null",
        "update qa_qapair set status = 'draft', provenance = '', verified_at = null, version = 1 "
        "where status <> 'draft' or version <> 1",
        "vacuum analyze qa_queueitem, qa_qapair, qa_submission, qa_revision, qa_verdict")


def served_twice_in_db(n_units: int) -> int:
    return sql(db_name(n_units), "select count(*) from (select i.unit_id from qa_submission s join qa_queueitem i "
                                 "on i.id = s.item_id group by i.unit_id having count(distinct s.user_id) > 1) x")[0]


def start_server(n_units: int, port: int) -> subprocess.Popen:
    env = {**os.environ, "POSTGRES_DB": db_name(n_units), "DJANGO_DEBUG": "false", "LOG_LEVEL": "WARNING"}
    proc = subprocess.Popen(
        [str(REPO / ".venv/bin/gunicorn"), "annotator.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "4",
         "--log-level", "warning"], cwd=REPO, env=env)
    for _ in range(300):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/accounts/login/")
            conn.getresponse().read()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("gunicorn did not start")


def annotator(port: int, token: str, seconds: float, limit: list[int], start: threading.Barrier, out: dict, lock) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    claims, submits, served, errors = [], [], [], []
    run_id = os.urandom(4).hex()  # idempotency keys unique across runs
    start.wait()
    deadline = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < deadline:
        with lock:
            if limit[0] <= 0:
                break
            limit[0] -= 1
        t0 = time.perf_counter()
        conn.request("POST", "/api/projects/bench/queue/next/", body=b"", headers=headers)
        res = conn.getresponse()
        body = res.read()
        claims.append(time.perf_counter() - t0)
        if res.status != 200:
            errors.append(res.status)
            break
        unit = json.loads(body)
        served.append(unit["id"])
        payload = json.dumps({"idempotency_key": f"{run_id}-{n}", "time_spent_ms": 1000,
                              "decisions": [{"qa_id": q["id"], "action": "keep", "version": q["version"]}
                                            for q in unit["qa_pairs"]]})
        t0 = time.perf_counter()
        conn.request("POST", f"/api/units/{unit['id']}/submit/", body=payload, headers=headers)
        res = conn.getresponse()
        res.read()
        submits.append(time.perf_counter() - t0)
        if res.status != 200:
            errors.append(res.status)
        n += 1
    with lock:
        out["claims"] += claims
        out["submits"] += submits
        out["errors"] += errors
        out["served"].append((token, served))


def pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] * 1000 if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def run(port: int, tokens: list[str], k: int, seconds: float, max_claims: int) -> dict:
    out = {"claims": [], "submits": [], "errors": [], "served": []}
    barrier, lock, limit = threading.Barrier(k), threading.Lock(), [max_claims]
    threads = [threading.Thread(target=annotator, args=(port, tokens[i], seconds, limit, barrier, out, lock)) for i in range(k)]
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
    return {"claims_per_s": len(out["claims"]) / elapsed, "claim_p50": pct(out["claims"], 50),
            "claim_p95": pct(out["claims"], 95), "submit_p50": pct(out["submits"], 50),
            "submit_p95": pct(out["submits"], 95), "claims": len(out["claims"]),
            "twice": sum(1 for people in by_unit.values() if len(people) > 1), "errors": len(out["errors"])}


FIGURES = ["claims_per_s", "claim_p50", "claim_p95", "submit_p50", "submit_p95"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="1000,100000,1000000")
    parser.add_argument("--annotators", default="1,10,50")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    scales = [int(x) for x in args.scales.split(",")]
    levels = [int(x) for x in args.annotators.split(",")]
    tokens, servers = {}, {}
    for n in scales:
        t0 = time.perf_counter()
        tokens[n] = fill(n, max(levels))
        print(f"# queued {n} units in {time.perf_counter() - t0:.1f} s", flush=True)
    try:
        for i, n in enumerate(scales):
            servers[n] = (BASE_PORT + i, start_server(n, BASE_PORT + i))
            run(servers[n][0], tokens[n], min(4, max(levels)), 1.0, 200)  # warm-up: imports, connections
        results = defaultdict(list)
        for rep in range(args.repeats):
            for k in levels:
                for n in scales:
                    reset(n)
                    r = run(servers[n][0], tokens[n], k, args.seconds, max_claims=n // 2)
                    r["twice"] += served_twice_in_db(n)
                    results[(n, k)].append(r)
                    print(f"# repeat {rep + 1}: {n} units, {k} annotators: {r['claims_per_s']:.1f} claims/s, "
                          f"claim p95 {r['claim_p95']:.2f} ms, twice {r['twice']}, errors {r['errors']}", flush=True)
    finally:
        for _, proc in servers.values():
            proc.terminate()
            proc.wait()

    print(f"\nmedian of {args.repeats} runs of {args.seconds:g} s each")
    print(f"{'units':>9} {'annot.':>6} {'claims/s':>9} {'claim p50':>10} {'claim p95':>10} {'submit p50':>11} "
          f"{'submit p95':>11} {'claims':>7} {'twice':>6} {'errors':>6}")
    med = {}
    for k in levels:
        for n in scales:
            rs = results[(n, k)]
            m = {f: statistics.median(r[f] for r in rs) for f in FIGURES}
            med[(n, k)] = m
            print(f"{n:>9} {k:>6} {m['claims_per_s']:>9.1f} {m['claim_p50']:>8.2f}ms {m['claim_p95']:>8.2f}ms "
                  f"{m['submit_p50']:>9.2f}ms {m['submit_p95']:>9.2f}ms {sum(r['claims'] for r in rs):>7} "
                  f"{sum(r['twice'] for r in rs):>6} {sum(r['errors'] for r in rs):>6}")
    if len(scales) > 1:
        small, large = scales[0], scales[-1]
        print(f"\n{large} / {small} units (target: every figure within 1.2x; for claims/s, at least 1/1.2 = 0.83x):")
        for k in levels:
            a, b = med[(small, k)], med[(large, k)]
            print(f"  {k:>2} annotators: " + ", ".join(f"{f} {b[f] / a[f]:.2f}x" for f in FIGURES))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--fill-child":
        print(json.dumps(fill_in_child(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        main()
