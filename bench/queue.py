"""Queue benchmark: annotators claim and submit work units through the HTTP API as in production.

    .venv/bin/python bench/queue.py [--scales 1000,100000,1000000] [--annotators 1,10,50]
                                    [--seconds 8] [--repeats 3] [--gold-rate 0,0.05] [--smoke]

Needs the local stack (``scripts/stack.sh start``, or ``make bench``). Each scale N gets a database
of its own (``annotator_bench_N``), filled once by SQL with N queued units of one draft QA pair each,
plus ``GOLD_SOURCES`` gold units (issue 20: verified units on videos of their own, each QA pair
kept), and a gunicorn serving the API from it (4 sync workers). A run: that many annotators, each a
thread with its own HTTP connection and API token, loop for ``--seconds`` (or until half the queue
is claimed): ``POST /api/projects/bench/queue/next/`` (the claim), then ``POST /api/units/{id}/submit/``
keeping the QA pairs. Each gold rate of ``--gold-rate`` is a run of its own (the project's policy:
that share of claims draws gold; a Celery worker per scale makes each copy ahead, from the message
every claim sends, as in production: a claim served before its copy was made gets real work). Before every
run the queue is put back as filled (the rows a run touched; gold copies, the exposure ledger and
the gold standings emptied) and vacuumed. Runs are interleaved over the scales and rates and
repeated; the table gives the median of the repeats: claims/s, claim and submit latency p50/p95 in
ms (client side, HTTP included), gold units served, and the units served to two annotators (summed
over repeats, from the claims and from the database: must be 0). Targets: one annotator's claim p95
under 10 ms (issue 3); at 1M units every figure within 1.2x of the same figure at 1k; at a gold rate
of 5%, claim p95 within 1.2x of no gold (issue 20).

``--smoke`` (run by ``make test``, tests/gold/test_bench_queue.py): 2,000 units, 1 and 4 annotators,
2 s runs, gold rates 0 and 0.5, one repeat, in ``<POSTGRES_DB>_bench_queue_smoke`` on a free port;
it fails (exit 1) when a unit was served twice, a request failed, or no gold unit was served at 0.5.
"""

from __future__ import annotations

import os
import sys

# This file is named after what it measures; keep it from shadowing the standard library's ``queue``
# (its folder is sys.path[0] when run as a script).
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))  # the repository: bench.lib.results

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

from bench.lib.results import record  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BASE_PORT = int(os.environ.get("BENCH_PORT", "8765"))
GOLD_SOURCES = 200  # gold units a fill makes (each on a video of its own: a person gets each once)
SMOKE = False  # set by --smoke: its own database name
PG = dict(
    host=os.environ.get("POSTGRES_HOST", "127.0.0.1"),
    port=int(os.environ.get("POSTGRES_PORT", "54329")),
    user=os.environ.get("POSTGRES_USER", "annotator"),
)


SCALES: list[int] = []  # the run's scales, in order: each has a broker database of its own


def broker_url(n_units: int) -> str:
    """The Redis database that is the Celery broker of scale ``n_units``'s gunicorn and worker. Each
    claim in a project with gold sends ``gold.premake_for``: only the worker on the same bench
    database may take it (not another scale's, nor the demo's on database 0). Databases 6 to 9, one
    a scale (at most 4), from ``BENCH_QUEUE_REDIS_DB`` (default 6); the smoke run takes 10 plus its
    xdist worker's number. The tests' own are 2 to 5, bench/drafting.py's 14 (its smoke 3)."""
    if SMOKE:
        worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
        db = 10 + worker
    else:
        db = int(os.environ.get("BENCH_QUEUE_REDIS_DB", "6")) + SCALES.index(n_units)
    return f"redis://127.0.0.1:{os.environ.get('REDIS_PORT', '63799')}/{db}"


def db_name(n: int) -> str:
    if SMOKE:
        return f"{os.environ.get('POSTGRES_DB', 'annotator')}_bench_queue_smoke"
    return f"annotator_bench_{n}"


def sql(db: str, *statements: str, params=None):
    """Run statements in autocommit on ``db``; returns the last statement's first row (or None)."""
    with psycopg.connect(**PG, dbname=db, autocommit=True) as conn:
        row = None
        for statement in statements:
            cur = conn.execute(statement, params)
            row = cur.fetchone() if cur.description else None
        return row


def fill_in_child(n_units: int, n_annotators: int, n_gold: int) -> list[str]:
    """(Child process, Django set up on the scale's database.) Empty it, queue ``n_units`` units,
    make ``n_gold`` gold sources (a unit per video of its own, verified by keeping its one QA pair)
    and create the annotators; print their API tokens as JSON."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotator.gold import services as gold
    from annotator.media.models import Video
    from annotator.projects.services import ensure_member, ensure_project, token_for
    from annotator.qa.models import QAPair, QueueItem, Revision, WorkUnit
    from annotator.qa.services import ensure_qa_type

    call_command("migrate", verbosity=0)
    with connection.cursor() as c:
        c.execute(
            "truncate qa_autosave, qa_skip, qa_verdict, qa_revision, qa_submission, qa_qapair, qa_queueitem, "
            "qa_workunit, qa_qatype, drafts_draft, inference_modelcall, drafts_draftjob, drafts_draftrun, "
            "media_videogroupmember, media_videogroup, media_video, exposure_exposure, gold_policy, "
            "gold_source, gold_known, gold_copy, gold_result, gold_attempt, gold_standing, gold_pause cascade"
        )
    project = ensure_project("bench")
    project.double_check_share = 0.0  # measure the first pass alone
    project.save()
    video = Video.objects.create(
        project=project,
        sha256="b" * 64,
        filename="bench.mp4",
        status="ready",
        duration_s=10.0,
        fps=25.0,
        width=640,
        height=360,
    )
    qa_type = ensure_qa_type(project, "object_recognition")
    tokens = [token_for(ensure_member(f"bench{i}", role="annotator", project=project)[0]) for i in range(n_annotators)]
    from bench.lib.fill import insert_select

    with connection.cursor() as c:
        # Through the schema (bench.lib.fill): every column the bench does not name gets the model's default.
        insert_select(
            c,
            WorkUnit,
            {"project_id": "%(project)s", "video_id": "%(video)s", "start_s": "0", "end_s": "10"},
            "generate_series(1, %(n)s)",
            {"project": project.pk, "video": video.pk, "n": n_units},
        )
        insert_select(c, QueueItem, {"project_id": "project_id", "unit_id": "id"}, "qa_workunit")
        insert_select(
            c,
            QAPair,
            {
                "project_id": "project_id",
                "unit_id": "id",
                "video_id": "video_id",
                "qa_type_id": "%(qa_type)s",
                "origin": "'machine'",
                "question": "'What is on the table?'",
                "answer": "'a cup'",
                "clip_start_s": "0",
                "clip_end_s": "3",
            },
            "qa_workunit",
            {"qa_type": qa_type.pk},
        )
    # Gold: verified units on videos of their own (what a verifier's keep leaves), then gold sources.
    verifier = ensure_member("bench-verifier", role="reviewer", project=project)[0]
    videos = Video.objects.bulk_create(
        [
            Video(
                project=project,
                sha256=f"{i:064x}",
                filename=f"gold{i}.mp4",
                status="ready",
                duration_s=10.0,
                fps=25.0,
                width=640,
                height=360,
            )
            for i in range(1, n_gold + 1)
        ]
    )
    units = WorkUnit.objects.bulk_create([WorkUnit(project=project, video=v, start_s=0, end_s=10) for v in videos])
    pairs = QAPair.objects.bulk_create(
        [
            QAPair(
                project=project,
                unit=u,
                video_id=u.video_id,
                qa_type=qa_type,
                origin="machine",
                question="What is on the table?",
                answer="a cup",
                clip_start_s=0,
                clip_end_s=3,
                status="verified",
                provenance="machine_kept",
                version=2,
            )
            for u in units
        ]
    )
    drafted = {
        "question": "What is on the table?",
        "answer": "a cup",
        "options": None,
        "answer_index": None,
        "answer_start_s": None,
        "answer_end_s": None,
        "status": "draft",
        "delete_reason": "",
    }
    Revision.objects.bulk_create(
        [Revision(qa_pair=p, actor_model="bench", action="draft", after=drafted, version=1) for p in pairs]
    )
    Revision.objects.bulk_create(
        [
            Revision(qa_pair=p, actor_user=verifier, action="keep", before=drafted, after=p.snapshot(), version=2)
            for p in pairs
        ]
    )
    QueueItem.objects.bulk_create(
        [QueueItem(project=project, unit=u, status="done", completed_by=verifier) for u in units]
    )
    ids = [u.pk for u in units]
    for start in range(0, len(ids), gold.SOURCES_MAX):
        gold.make_sources(
            project, "gold", len(ids[start : start + gold.SOURCES_MAX]), unit_ids=ids[start : start + gold.SOURCES_MAX]
        )
    gold.set_policy(project, gold_rate=0.0)
    return tokens


def fill(n_units: int, n_annotators: int) -> list[str]:
    db = db_name(n_units)
    if not sql("postgres", "select 1 from pg_database where datname = %s", params=[db]):
        sql("postgres", f'create database "{db}"')
    env = {**os.environ, "POSTGRES_DB": db, "DJANGO_SETTINGS_MODULE": "annotator.settings", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, __file__, "--fill-child", str(n_units), str(n_annotators), str(GOLD_SOURCES)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"filling {db} failed:\n{out.stderr[-4000:]}")
    sql(db, "vacuum analyze")
    return json.loads(out.stdout.strip().splitlines()[-1])


# Tables whose rows only runs make (reviews, activity beats and the like, of any app): those with a
# foreign key to the queue's tables, except the ones the fill made.
_RUN_TABLES_SQL = """
SELECT DISTINCT c.conrelid::regclass::text FROM pg_constraint c
WHERE c.contype = 'f' AND c.confrelid IN ('qa_queueitem'::regclass, 'qa_workunit'::regclass, 'qa_qapair'::regclass,
                                          'qa_submission'::regclass, 'qa_verdict'::regclass)
  AND c.conrelid::regclass::text NOT IN ('qa_queueitem', 'qa_qapair', 'qa_workunit', 'gold_source', 'gold_known')"""


def reset(n_units: int, gold_rate: float = 0.0) -> None:
    """Put the queue back as ``fill`` left it (every real unit open, every QA pair of it a draft; no
    gold copy, exposure row, gold standing or any row a run made), set the gold rate, then vacuum so
    every run starts from the same state. Revisions and exposures are append-only row by row (their
    triggers refuse DELETE), so they are truncated: the fill's gold sources keep their known decisions."""
    db = db_name(n_units)
    with psycopg.connect(**PG, dbname=db, autocommit=True) as conn:
        made_by_runs = [r[0] for r in conn.execute(_RUN_TABLES_SQL).fetchall()]
        conn.execute(
            "truncate "
            + ", ".join(
                sorted(
                    {
                        *made_by_runs,
                        "qa_verdict",
                        "qa_revision",
                        "qa_submission",
                        "qa_autosave",
                        "qa_skip",
                        "exposure_exposure",
                        "gold_copy",
                        "gold_result",
                        "gold_standing",
                        "gold_pause",
                        "gold_attempt",
                    }
                )
            )
            + " cascade"
        )
        conn.execute(
            "delete from qa_queueitem where kind <> 'first_pass' "
            "or unit_id in (select id from qa_workunit where purpose <> 'real')"
        )
        conn.execute("delete from qa_qapair where unit_id in (select id from qa_workunit where purpose <> 'real')")
        conn.execute("delete from qa_workunit where purpose <> 'real'")
        bench_video = "(select id from media_video where filename = 'bench.mp4')"
        conn.execute(
            "update qa_queueitem i set status = 'open', leased_by_id = null, lease_expires_at = null, "
            "completed_by_id = null, completed_at = null, time_spent_ms = null, claimed_at = null "
            "from qa_workunit u where u.id = i.unit_id and u.video_id = "
            + bench_video
            + " and (i.status = 'done' or i.leased_by_id is not null)"
        )
        conn.execute(
            "update qa_qapair set status = 'draft', provenance = '', verified_at = null, version = 1 "
            "where (status <> 'draft' or version <> 1) and video_id = " + bench_video
        )
        conn.execute("update gold_policy set gold_rate = %s", [gold_rate])
        conn.execute(
            "vacuum analyze qa_queueitem, qa_qapair, qa_workunit, qa_submission, qa_revision, qa_verdict, "
            "exposure_exposure, gold_standing, gold_copy"
        )


def gold_served(n_units: int) -> int:
    return sql(db_name(n_units), "select count(*) from qa_workunit where purpose = 'gold'")[0]


def served_twice_in_db(n_units: int) -> int:
    return sql(
        db_name(n_units),
        "select count(*) from (select i.unit_id from qa_submission s join qa_queueitem i "
        "on i.id = s.item_id group by i.unit_id having count(distinct s.user_id) > 1) x",
    )[0]


# The servers' handle key (annotator.core.handles), known here so that a run's claims can be told
# gold or real afterwards from the database (the responses say nothing of it).
HANDLE_KEY = f"bench-handle-key-{os.urandom(8).hex()}"


def gold_handles(n_units: int) -> set[str]:
    """The handles of the gold copies served so far in the scale's database."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from annotator.core.handles import encode  # reads no setting when given its secret

    with psycopg.connect(**PG, dbname=db_name(n_units), autocommit=True) as conn:
        ids = [r[0] for r in conn.execute("select id from qa_workunit where purpose = 'gold'")]
    return {encode("unit", i, secret=HANDLE_KEY) for i in ids}


def _environment(n_units: int) -> dict:
    return {
        **os.environ,
        "POSTGRES_DB": db_name(n_units),
        "DJANGO_DEBUG": "false",
        "LOG_LEVEL": "WARNING",
        "HANDLE_KEY": HANDLE_KEY,
        "CELERY_BROKER_URL": broker_url(n_units),
        "CELERY_RESULT_BACKEND": broker_url(n_units),
    }


def start_worker(n_units: int) -> subprocess.Popen:
    """A Celery worker on the bench's database and broker (queue ``default``, 2 threads): it makes the
    gold copies the claims' ``gold.premake_for`` messages ask for, as in production (issue 20: a
    claim makes no copy itself). Returns once it is ready."""
    import redis

    redis.Redis.from_url(broker_url(n_units)).flushdb()  # messages an earlier, stopped run left
    proc = subprocess.Popen(
        [
            str(REPO / ".venv/bin/celery"),
            "-A",
            "workers.celery",
            "worker",
            "-Q",
            "default",
            "--pool",
            "threads",
            "--concurrency",
            "2",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"bench-queue-{os.getpid()}@%h",
        ],
        cwd=REPO,
        env={**_environment(n_units), "LOG_LEVEL": "INFO"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            raise SystemExit("the Celery worker did not start")
        if " ready." in line:  # "<name> ready.", logged at INFO
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # keep its pipe drained
            return proc
    proc.kill()
    raise SystemExit("the Celery worker did not start within 120 s")


def start_server(n_units: int, port: int) -> subprocess.Popen:
    env = _environment(n_units)
    proc = subprocess.Popen(
        [
            str(REPO / ".venv/bin/gunicorn"),
            "annotator.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "4",
            # No control socket: gunicorn's default ($HOME/.gunicorn/gunicorn.ctl) is one path for every
            # gunicorn of the user, so a command meant for another would reach this one.
            "--log-level",
            "warning",
            "--no-control-socket",
        ],
        cwd=REPO,
        env=env,
    )
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


def annotator(
    port: int, token: str, seconds: float, limit: list[int], start: threading.Barrier, out: dict, lock
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    claims, submits, served, errors, timed = [], [], [], [], []
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
        timed.append(unit["id"])
        payload = json.dumps(
            {
                "idempotency_key": f"{run_id}-{n}",
                "time_spent_ms": 1000,
                "decisions": [{"qa_id": q["id"], "action": "keep", "version": q["version"]} for q in unit["qa_pairs"]],
            }
        )
        t0 = time.perf_counter()
        conn.request("POST", f"/api/units/{unit['id']}/submit/", body=payload, headers=headers)
        res = conn.getresponse()
        res.read()
        submits.append(time.perf_counter() - t0)
        if res.status != 200:
            errors.append(res.status)
        n += 1
    with lock:
        out["by_unit"] += list(zip(timed, claims, submits))
        out["claims"] += claims
        out["submits"] += submits
        out["errors"] += errors
        out["served"].append((token, served))


def pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] * 1000 if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def run(port: int, tokens: list[str], k: int, seconds: float, max_claims: int, gold=None) -> dict:
    """One run of ``k`` annotators. ``gold``: a callable giving the set of gold unit handles, read after the
    run (``gold_handles``), to split the latencies of gold and real claims and submits."""
    out = {"claims": [], "submits": [], "errors": [], "served": [], "by_unit": []}
    barrier, lock, limit = threading.Barrier(k), threading.Lock(), [max_claims]
    threads = [
        threading.Thread(target=annotator, args=(port, tokens[i], seconds, limit, barrier, out, lock)) for i in range(k)
    ]
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
    split = {}
    if gold is not None:
        handles = gold()
        for what, mine in (("gold", True), ("real", False)):
            rows = [r for r in out["by_unit"] if (r[0] in handles) == mine]
            split[what] = {
                "n": len(rows),
                "claim_p50": pct([r[1] for r in rows], 50),
                "claim_p95": pct([r[1] for r in rows], 95),
                "submit_p50": pct([r[2] for r in rows], 50),
                "submit_p95": pct([r[2] for r in rows], 95),
            }
    return {
        "split": split,
        "claims_per_s": len(out["claims"]) / elapsed,
        "claim_p50": pct(out["claims"], 50),
        "claim_p95": pct(out["claims"], 95),
        "submit_p50": pct(out["submits"], 50),
        "submit_p95": pct(out["submits"], 95),
        "claims": len(out["claims"]),
        "twice": sum(1 for people in by_unit.values() if len(people) > 1),
        "errors": len(out["errors"]),
    }


FIGURES = ["claims_per_s", "claim_p50", "claim_p95", "submit_p50", "submit_p95"]


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    global SMOKE, GOLD_SOURCES
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="1000,100000,1000000")
    parser.add_argument("--annotators", default="1,10,50")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--gold-rate", default="0", help="Gold rates to run, comma-separated, each from 0 to 0.5 (e.g. 0,0.05)."
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="2,000 units, 1 and 4 annotators, 2 s, gold 0 and 0.5, one repeat; fails on an error.",
    )
    args = parser.parse_args()
    if args.smoke:
        SMOKE, GOLD_SOURCES = True, 20
        args.scales, args.annotators, args.seconds, args.repeats, args.gold_rate = "2000", "1,4", 2.0, 1, "0,0.5"
    scales = [int(x) for x in args.scales.split(",")]
    if len(scales) > 4 or len(set(scales)) != len(scales):
        parser.error(
            f"--scales: at most 4 different scales (each has a broker database of its own), got {args.scales!r}"
        )
    SCALES[:] = scales
    levels = [int(x) for x in args.annotators.split(",")]
    try:
        rates = [float(x) for x in args.gold_rate.split(",")]
    except ValueError:
        parser.error(f"--gold-rate: expected numbers from 0 to 0.5, comma-separated, got {args.gold_rate!r}")
    if not all(0 <= r <= 0.5 for r in rates):
        parser.error(f"--gold-rate: every rate must be from 0 to 0.5, got {args.gold_rate!r}")
    tokens, servers, workers = {}, {}, []
    for n in scales:
        t0 = time.perf_counter()
        tokens[n] = fill(n, max(levels))
        print(f"# queued {n} units and {GOLD_SOURCES} gold units in {time.perf_counter() - t0:.1f} s", flush=True)
    try:
        for i, n in enumerate(scales):
            port = free_port() if SMOKE else BASE_PORT + i
            servers[n] = (port, start_server(n, port))
            if max(rates) > 0:
                workers.append(start_worker(n))
            reset(n, max(rates))
            run(servers[n][0], tokens[n], min(4, max(levels)), 1.0, 200)  # warm-up: imports, connections, gold
        results = defaultdict(list)
        for rep in range(args.repeats):
            for k in levels:
                for n in scales:
                    for rate in rates:
                        reset(n, rate)
                        r = run(
                            servers[n][0],
                            tokens[n],
                            k,
                            args.seconds,
                            max_claims=n // 2,
                            gold=(lambda n=n: gold_handles(n)) if rate > 0 else None,
                        )
                        r["twice"] += served_twice_in_db(n)
                        r["gold"] = gold_served(n)
                        results[(n, k, rate)].append(r)
                        print(
                            f"# repeat {rep + 1}: {n} units, {k} annotators, gold {rate:g}: "
                            f"{r['claims_per_s']:.1f} claims/s, claim p95 {r['claim_p95']:.2f} ms, gold served "
                            f"{r['gold']}, twice {r['twice']}, errors {r['errors']}",
                            flush=True,
                        )
    finally:
        for proc in [p for _, p in servers.values()] + workers:
            proc.terminate()
            proc.wait()

    print(f"\nmedian of {args.repeats} runs of {args.seconds:g} s each")
    print(
        f"{'units':>9} {'annot.':>6} {'gold':>5} {'claims/s':>9} {'claim p50':>10} {'claim p95':>10} {'submit p50':>11} "
        f"{'submit p95':>11} {'claims':>7} {'gold':>5} {'twice':>6} {'errors':>6}"
    )
    med = {}
    for k in levels:
        for n in scales:
            for rate in rates:
                rs = results[(n, k, rate)]
                m = {f: statistics.median(r[f] for r in rs) for f in FIGURES}
                med[(n, k, rate)] = m
                who = f"{n:,} units, {k} annotator{'s' if k > 1 else ''}, gold {rate:g}"
                record("queue.py", f"{who}: claims/s", m["claims_per_s"], "/s", smoke=SMOKE)
                record("queue.py", f"{who}: claim p95", m["claim_p95"], "ms", smoke=SMOKE)
                record("queue.py", f"{who}: submit p95", m["submit_p95"], "ms", smoke=SMOKE)
                print(
                    f"{n:>9} {k:>6} {rate:>5g} {m['claims_per_s']:>9.1f} {m['claim_p50']:>8.2f}ms "
                    f"{m['claim_p95']:>8.2f}ms {m['submit_p50']:>9.2f}ms {m['submit_p95']:>9.2f}ms "
                    f"{sum(r['claims'] for r in rs):>7} {sum(r['gold'] for r in rs):>5} "
                    f"{sum(r['twice'] for r in rs):>6} {sum(r['errors'] for r in rs):>6}"
                )
    if len(scales) > 1:
        small, large = scales[0], scales[-1]
        print(f"\n{large} / {small} units (target: every figure within 1.2x; for claims/s, at least 1/1.2 = 0.83x):")
        for rate in rates:
            for k in levels:
                a, b = med[(small, k, rate)], med[(large, k, rate)]
                print(f"  gold {rate:g}, {k:>2} annotators: " + ", ".join(f"{f} {b[f] / a[f]:.2f}x" for f in FIGURES))
    if 0.0 in rates and len(rates) > 1:
        print("\nclaim latency with gold / without (target: p95 within 1.2x at 5%):")
        for rate in (r for r in rates if r > 0):
            for n in scales:
                for k in levels:
                    a, b = med[(n, k, 0.0)], med[(n, k, rate)]
                    print(
                        f"  gold {rate:g}, {n} units, {k:>2} annotators: claim p50 {b['claim_p50'] / a['claim_p50']:.2f}x, "
                        f"claim p95 {b['claim_p95'] / a['claim_p95']:.2f}x"
                    )
    if any(key[2] > 0 for key in results):
        print(
            "\ngold claims / real claims of the same runs (issue 20: a gold unit's timing must not tell it; "
            "all repeats pooled, ms):"
        )
        for (n, k, rate), rs in sorted(results.items()):
            if rate <= 0:
                continue
            parts = []
            for what in ("real", "gold"):
                cnt = sum(r["split"][what]["n"] for r in rs)
                med_of = {
                    f: statistics.median(r["split"][what][f] for r in rs)
                    for f in ("claim_p50", "claim_p95", "submit_p50", "submit_p95")
                }
                parts.append(
                    f"{what} n={cnt} claim {med_of['claim_p50']:.2f}/{med_of['claim_p95']:.2f} "
                    f"submit {med_of['submit_p50']:.2f}/{med_of['submit_p95']:.2f}"
                )
            print(f"  gold {rate:g}, {n} units, {k:>2} annotators: " + "; ".join(parts))
    failed = [
        f"{key}: {what}"
        for key, rs in results.items()
        for what, bad in (
            ("a unit served twice", sum(r["twice"] for r in rs)),
            ("requests failed", sum(r["errors"] for r in rs)),
        )
        if bad
    ]
    if SMOKE:
        failed += [
            f"no gold unit served at gold {rate:g}"
            for rate in rates
            if rate > 0 and not sum(r["gold"] for key, rs in results.items() if key[2] == rate for r in rs)
        ]
    if failed:
        print("FAILED: " + "; ".join(failed))
        raise SystemExit(1)
    if SMOKE:
        print("smoke: ok")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--fill-child":
        print(json.dumps(fill_in_child(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))
    else:
        main()
