"""Load test (issue 22, section 4): simulated annotators and study participants, driven by Locust
(headless, loopback only), against K gunicorn worker processes and the one PostgreSQL.

    .venv/bin/python bench/load.py [--annotators 1000] [--participants 500] [--k 1,2,4] [--seconds 120]
                                   [--max-requests 200000] [--work-s 60] [--heartbeat-s 30] [--autosave-s 10]
                                   [--think-ms 4000] [--threads 4] [--smoke]

Needs the local stack (``scripts/stack.sh start``).

**Data.** A database of its own, ``<POSTGRES_DB>_bench_load`` (``_smoke`` added for ``--smoke``),
created and migrated the first time; every run empties its tables and fills them through the
models' own code, in this process (``fill``): a multiple-choice
study built by ``bench/participants.py``'s ``build`` (real ffmpeg clips, ``--items`` scored items,
1 practice item, ``--questions`` a person), one link participant per simulated participant and
K value (opened, consented and screened by ``annotator.studies.links``, bound to a session by the
session store, as the link's page does), a project ``bench-load`` whose units are made as drafting
makes them (``drafts.services.save_drafts``: a ready video, one draft QA pair, one unit each;
enough for every run's claims) and one annotator with an API token per simulated annotator.

**Runs.** For each K of ``--k``: gunicorn with ``--workers K`` (one master, K worker processes of
``--threads`` threads each, the repository's ``gunicorn.conf.py``, the application preloaded; K
processes of one gunicorn rather than K gunicorns behind a proxy), a warm-up that changes nothing
(``bench/participants.py``'s, 2K connections of 15 requests), then
``locust --headless`` on ``bench/load_users/locustfile.py`` (what each simulated person does is
written there) with every simulated person at once (spawned over ``--spawn-s``), stopped at
``--seconds`` or ``--max-requests`` requests. Each K gets participants of its own (the last K's
finished theirs); the annotators keep their accounts (a lease held at the end of one run is
claimed again by the next).

**Measured during a run**, once a second: PostgreSQL's ``pg_stat_activity`` of the database (active
backends by wait event: ``CPU`` when none, ``Lock:*``, ``LWLock:*``, ``IO:*``, ``Client:*``), and at
the end the CPU seconds of the gunicorn workers, of the database's backends (those alive at the
run's end, which the workers' kept connections are: ``CONN_MAX_AGE``), of Locust itself, and of
the whole machine (busy share of its CPUs), and the load average at the start and end.

**Printed** per K: per endpoint the requests, requests/s, p50/p95/p99 in ms (client side, HTTP
included) and errors (a status other than the one expected, or no response); the lost submits and
answers (acknowledged with a 2xx, but no row: ``qa_submission`` by its idempotency key, an answered
``studies_trial`` by its key); the CPU figures, the wait events and the bottleneck they point at
(the rule is in ``bottleneck``). Then the K curve, and whether claim, submit and answer p95 were
under ``TARGET_P95_MS``; then the requests/s the people's pacing sends (``offered_rate``), each
run's CPU per request (web, database, Locust) and the cores that rate needs at those costs, and the
stack's floor: the CPU of one request through Django alone and through DRF with token
authentication, measured in this process after the fill (``stack_floor``), and the cores the DRF
floor alone needs at that rate. Exits 1 on any error or lost submit/answer; a missed latency target
is printed, not an error.

``--smoke`` (``make test``, tests/ops/test_bench_load.py): 20 annotators (at most 3 submits each a
run), 10 participants, 130 units,
K = 1 and 2, 2 s of work a unit with a heartbeat every 1 s and an autosave every 0.7 s (the 30 s
heartbeat would never fire in a smoke run), 100 ms to think, 3 items of 2 questions; each run ends
once every endpoint (claim, heartbeat, autosave, submit, current, shown, answer) has answered a
2xx, or at 40 s. It fails (exit 1) as above or when an endpoint was never called.
"""

from __future__ import annotations

import os
import sys

# bench/queue.py would shadow the standard library's ``queue`` while this folder is sys.path[0].
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))  # the repository: bench.lib.results

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

from bench.lib.results import record  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
LOCUSTFILE = REPO / "bench" / "load_users" / "locustfile.py"
SLUG = "bench-load"
TARGET_P95_MS = 100.0
TARGET_ENDPOINTS = ("claim", "submit", "answer")
ENDPOINTS = ("claim", "heartbeat", "autosave", "submit", "page", "enroll", "current", "shown", "answer")
MEASURED = ("claim", "heartbeat", "autosave", "submit", "current", "shown", "answer")  # the smoke needs each
MAX_ANNOTATORS, MAX_PARTICIPANTS, MAX_SECONDS, MAX_REQUESTS, MAX_K = 5000, 2000, 3600, 2_000_000, 16


def _participants_module():
    """bench/participants.py, whose study build and environment this bench shares."""
    if "bench_participants" in sys.modules:
        return sys.modules["bench_participants"]
    spec = importlib.util.spec_from_file_location("bench_participants", REPO / "bench" / "participants.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_participants"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------------ fill


def fill(plan: dict) -> dict:
    """(The environment set by ``bench/participants.py``'s ``_environment``.) Empty the database, fill
    it (see the module's docstring) and return the tokens, session keys, study id and link token.
    Closes its database connection at the end: the servers have the database to themselves."""
    import django

    django.setup()
    from importlib import import_module

    from django.conf import settings
    from django.core.management import call_command

    from annotator.drafts.models import DraftJob, DraftRun
    from annotator.drafts.services import save_drafts
    from annotator.drafts.templates import DraftSpec
    from annotator.media.models import Video
    from annotator.projects.services import ensure_member, ensure_project, token_for
    from annotator.qa.services import ensure_qa_type
    from annotator.studies import links, sessions

    bp = _participants_module()
    t0 = time.monotonic()

    def progress(line: str) -> None:
        print(f"  [{time.monotonic() - t0:5.1f} s] {line}", file=sys.stderr, flush=True)

    call_command("migrate", verbosity=0)
    bp._empty_tables()
    progress("migrated and emptied")
    home = Path(plan["home"])
    people = plan["participants"] * plan["runs"]
    setup = bp.build(home, plan["items"], plan["questions"], people, progress)
    progress("study built")
    link = links.link_of(setup.token)
    store = import_module(settings.SESSION_ENGINE).SessionStore
    session_keys = []
    for i in range(people):
        participant, _ = links.open_link(link, links.PanelIds(f"load{i:06d}", "bench-load", f"session-{i}"))
        participant = links.consent(participant, True)
        links.screened(participant, width=1366, height=768, played=True, codec=True)
        session = store()
        session[sessions.SESSION_KEY] = {str(setup.study_id): participant.pk}
        session.create()
        session_keys.append(session.session_key)
    progress(f"{people} link participants consented and screened")

    project = ensure_project(SLUG, "Load benchmark")
    project.double_check_share = 0.0  # one pass a unit: the units made are the units claimed
    project.save()
    ensure_qa_type(project, "object_recognition")
    run = DraftRun.objects.create(project=project, pipeline="templates", prompt_version="templates-v1")
    for i in range(plan["units"]):
        # No file: a claim, heartbeat, autosave and submit read the video's row, never its bytes.
        video = Video.objects.create(
            project=project,
            sha256=f"{i + 1:064x}",
            filename=f"load{i}.mp4",
            status=Video.Status.READY,
            duration_s=10.0,
            fps=25.0,
            width=640,
            height=360,
        )
        save_drafts(
            DraftJob.objects.create(run=run, video=video),
            [
                DraftSpec(
                    "object_recognition",
                    "Which object is on the table?",
                    "cup",
                    0.0,
                    3.0,
                    source_key="objects",
                    options=["pan", "cup", "lamp", "shoe"],
                    answer_index=1,
                    params={"shuffle_seed": 7},
                )
            ],
            actor="templates/templates-v1",
        )
    progress(f"{plan['units']} units drafted")
    tokens = [
        token_for(ensure_member(f"load{i}", role="annotator", project=project)[0]) for i in range(plan["annotators"])
    ]
    progress(f"{plan['annotators']} annotators")
    from django.db import connection

    connection.close()
    return {
        "tokens": tokens,
        "sessions": session_keys,
        "study_id": setup.study_id,
        "link_token": setup.token,
        "session_cookie": settings.SESSION_COOKIE_NAME,
    }


def stack_floor(token: str, requests: int) -> dict:
    """CPU per request (ms of this process's CPU, Django's test client, nothing else running in it)
    of the stack alone, no work of the platform's: ``django``, a GET through every middleware to a
    Django view answering ``{}``; ``drf``, the same to a DRF ``APIView`` with the project's
    ``REST_FRAMEWORK`` defaults, authenticated by API token (one query). Every API request of the
    platform costs its web process at least ``drf`` before its own statements. ``requests``
    requests each, after 50 of warm-up. Closes its database connection."""
    import types

    from django.db import connection
    from django.http import JsonResponse
    from django.test import Client, override_settings
    from django.urls import path
    from rest_framework.response import Response
    from rest_framework.views import APIView

    class Empty(APIView):
        def get(self, request):
            return Response({})

    urls = types.ModuleType("bench_load_floor_urls")
    urls.urlpatterns = [path("django/", lambda request: JsonResponse({})), path("drf/", Empty.as_view())]
    client = Client(HTTP_AUTHORIZATION=f"Token {token}", HTTP_HOST="127.0.0.1")
    out = {}
    with override_settings(ROOT_URLCONF=urls):
        for name in ("django", "drf"):
            for _ in range(50):
                assert client.get(f"/{name}/").status_code == 200, name
            t = time.process_time()
            for _ in range(requests):
                client.get(f"/{name}/")
            out[name] = (time.process_time() - t) / requests * 1000
    connection.close()
    return out


def offered_rate(args) -> float:
    """Requests/s the simulated people send at their pacing while all take part (the arithmetic of
    ``bench/load_users/locustfile.py``'s users): an annotator a claim and a submit per ``work_s``,
    a heartbeat per ``heartbeat_s`` and an autosave per ``autosave_s``; a participant a ``shown``
    and an ``answer`` per ``think_ms`` (and a few requests once, left out)."""
    annotator = 2 / args.work_s + 1 / args.heartbeat_s + 1 / args.autosave_s
    participant = 2 / max(args.think_ms / 1000, 0.001)
    return args.annotators * annotator + args.participants * participant


# ------------------------------------------------------------------------------ server, sampling


def start_server(port: int, k: int, threads: int, home: Path) -> subprocess.Popen:
    """Start gunicorn with ``k`` worker processes of ``threads`` threads on loopback (the application
    preloaded in the master, then forked); ``ready`` waits for it. Every run's server is started at
    the beginning, while the database is filled: importing the application is the slow part of a
    start on a busy machine, and an idle server takes no CPU."""
    with open(home / f"web-k{k}.log", "ab") as log:  # the server keeps its own copy of the descriptor
        return subprocess.Popen(
            [
                str(REPO / ".venv" / "bin" / "gunicorn"),
                "annotator.wsgi",
                "-c",
                str(REPO / "gunicorn.conf.py"),
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(k),
                "--threads",
                str(threads),
                "--preload",  # the application imported once, before the fork: K workers start in the time of one
                "--no-control-socket",
            ],  # gunicorn's default control socket is one path for every gunicorn of the user
            cwd=REPO,
            env=os.environ.copy(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def ready(server: subprocess.Popen, port: int, log: Path, seconds: float = 180) -> None:
    """Return once ``server`` answers on ``port``; SystemExit when it exits or takes ``seconds``."""
    import http.client

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/accounts/login/")
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"gunicorn exited ({server.returncode}); see {log}")
            time.sleep(0.2)
    raise SystemExit(f"gunicorn did not answer within {seconds:.0f} s; see {log}")


def stop_server(server: subprocess.Popen) -> None:
    """gunicorn's quick shutdown (SIGINT); its master and workers killed if still there after 5 s."""
    import psutil

    if server.poll() is not None:
        return
    try:
        workers = psutil.Process(server.pid).children()
    except psutil.Error:
        workers = []
    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=5)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    for worker in workers:
        try:
            worker.kill()
        except psutil.Error:
            pass


class Sampler(threading.Thread):
    """Once a second until stopped: the database's active backends by wait event, and the pids of
    its backends (their CPU is read at the end)."""

    def __init__(self, db: str, pg: dict):
        super().__init__(daemon=True)
        self.db, self.pg = db, pg
        self.waits: Counter = Counter()
        self.samples = 0
        self.backend_cpu: dict[int, float] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        import psutil
        import psycopg

        with psycopg.connect(**self.pg, dbname="postgres", autocommit=True) as conn:
            while not self.stop.is_set():
                rows = conn.execute(
                    "select pid, state, wait_event_type, wait_event from pg_stat_activity "
                    "where datname = %s and pid <> pg_backend_pid()",
                    [self.db],
                ).fetchall()
                self.samples += 1
                for pid, state, kind, event in rows:
                    if state == "active":
                        self.waits["CPU" if kind is None else f"{kind}:{event}"] += 1
                    try:
                        t = psutil.Process(pid).cpu_times()
                        self.backend_cpu[pid] = t.user + t.system
                    except (psutil.Error, OSError):
                        pass
                self.stop.wait(1.0)


def _cpu_of(pids: list[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def bottleneck(web_cores: float, db_cores: float, k: int, machine_busy: float, waits: Counter, samples: int) -> str:
    """The bottleneck the run's figures point at, in words. The rule: locks when more than a quarter
    of the active backends' samples wait on a heavyweight lock (``Lock:*``); else CPU when the
    machine was at least 90% busy (all cores: web, database, Locust and whatever else runs) or the
    web workers used at least 90% of the K cores they can use; else the database when its backends
    used more CPU than the web workers; else none (the offered load fit)."""
    active = sum(waits.values())
    locks = sum(n for w, n in waits.items() if w.startswith("Lock:"))
    cores = os.cpu_count() or 1
    if active and locks / active > 0.25:
        return f"locks ({locks} of {active} active-backend samples waited on a lock)"
    if machine_busy >= 0.9:
        return (
            f"CPU of the machine ({machine_busy:.0%} busy over {cores} cores: web {web_cores:.2f}, "
            f"database {db_cores:.2f} cores)"
        )
    if web_cores >= 0.9 * min(k, cores):
        return f"CPU of the web workers ({web_cores:.2f} cores of {min(k, cores)} usable)"
    if db_cores > web_cores:
        return f"database CPU ({db_cores:.2f} cores against web {web_cores:.2f})"
    return f"none saturated (machine {machine_busy:.0%} busy, web {web_cores:.2f}, database {db_cores:.2f} cores)"


# ------------------------------------------------------------------------------ one run


def percentile(sorted_ms: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of sorted values, nearest rank."""
    if not sorted_ms:
        return float("nan")
    return sorted_ms[min(len(sorted_ms) - 1, max(0, math.ceil(q * len(sorted_ms)) - 1))]


def run_k(
    k: int,
    server: subprocess.Popen,
    port: int,
    args,
    filled: dict,
    db: str,
    home: Path,
    pg: dict,
    participants_from: int,
) -> dict:
    """One run against ``server`` (gunicorn with ``k`` worker processes on ``port``); returns its
    figures (see ``report``). Stops the server."""
    import psutil
    import psycopg

    bp = _participants_module()
    t0 = time.monotonic()

    def stage(what):
        print(f"    [{time.monotonic() - t0:5.1f} s] {what}", file=sys.stderr, flush=True)

    ready(server, port, home / f"web-k{k}.log")
    stage("gunicorn answers")
    out = home / f"locust-k{k}.json"
    out.unlink(missing_ok=True)
    run_id = f"k{k}-{secrets.token_hex(4)}"
    try:
        setup = bp.Setup(filled["study_id"], filled["link_token"], args.items, 0)
        bp.warm_up(port, setup, threads=2 * k)  # 15 requests each: every worker's first requests
        stage("warmed up")
        workers = [c.pid for c in psutil.Process(server.pid).children()]
        sessions = filled["sessions"][participants_from : participants_from + args.participants]
        env = {
            **os.environ,
            "LOAD_SLUG": SLUG,
            "LOAD_TOKENS": json.dumps(filled["tokens"][: args.annotators]),
            "LOAD_SESSIONS": json.dumps(sessions),
            "LOAD_STUDY_ID": str(filled["study_id"]),
            "LOAD_LINK_TOKEN": filled["link_token"],
            "LOAD_SESSION_COOKIE": filled["session_cookie"],
            "LOAD_WORK_S": str(args.work_s),
            "LOAD_HEARTBEAT_S": str(args.heartbeat_s),
            "LOAD_AUTOSAVE_S": str(args.autosave_s),
            "LOAD_THINK_MS": str(args.think_ms),
            "LOAD_MAX_REQUESTS": str(args.max_requests),
            "LOAD_RUN_ID": run_id,
            "LOAD_OUT": str(out),
            "LOAD_ANNOTATORS": str(args.annotators),
            "LOAD_PARTICIPANTS": str(len(sessions)),
            "LOAD_UNTIL_SEEN": ",".join(MEASURED) if args.smoke else "",
            # The smoke's units are few: at most 3 submits an annotator per run, so every run has units.
            "LOAD_MAX_UNITS": "3" if args.smoke else "0",
        }
        users = args.annotators + len(sessions)
        sampler = Sampler(db, pg)
        load_start = os.getloadavg()[0]
        web_before = _cpu_of(workers)
        machine_before = psutil.cpu_times()
        sampler.start()
        with open(home / f"locust-k{k}.log", "wb") as log:
            locust = subprocess.Popen(
                [
                    str(REPO / ".venv" / "bin" / "locust"),
                    "-f",
                    str(LOCUSTFILE),
                    "--headless",
                    "--host",
                    f"http://127.0.0.1:{port}",
                    "-u",
                    str(users),
                    "-r",
                    str(max(1.0, users / args.spawn_s)),
                    "-t",
                    f"{args.seconds}s",
                    "--stop-timeout",
                    "0",
                    "--only-summary",
                    "--loglevel",
                    "WARNING",
                    "--exit-code-on-error",
                    "0",
                ],
                cwd=REPO / "bench" / "load_users",
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            started = time.monotonic()
            locust_cpu = 0.0
            while locust.poll() is None:
                try:
                    t = psutil.Process(locust.pid).cpu_times()
                    locust_cpu = t.user + t.system
                except psutil.Error:
                    pass
                if time.monotonic() - started > args.seconds + 120:
                    locust.terminate()
                time.sleep(0.5)
        stage("Locust done")
        sampler.stop.set()
        sampler.join()
        machine_after = psutil.cpu_times()
        web_cpu = _cpu_of(workers) - web_before
        load_end = os.getloadavg()[0]
    finally:
        stop_server(server)
        stage("gunicorn stopped")
    if not out.exists():
        raise SystemExit(f"Locust wrote no results (K={k}); see {home / f'locust-k{k}.log'}")
    data = json.loads(out.read_text())
    seconds = max(1e-3, (data["last"] or 0) - (data["first"] or 0))
    with psycopg.connect(**pg, dbname=db, autocommit=True) as conn:
        stored_submits = conn.execute(
            "select count(*) from qa_submission where idempotency_key = any(%s)", [data["acked"]["submit"]]
        ).fetchone()[0]
        stored_answers = conn.execute(
            "select count(*) from studies_trial where idempotency_key = any(%s) "
            "and answered_at is not null and response is not null",
            [data["acked"]["answer"]],
        ).fetchone()[0]

    def busy(t):
        return t.user + t.nice + t.system + t.irq + t.softirq + getattr(t, "steal", 0)

    machine_total = sum(machine_after) - sum(machine_before)
    machine_busy = (busy(machine_after) - busy(machine_before)) / machine_total if machine_total else 0.0
    db_cores = sum(sampler.backend_cpu.values()) / seconds
    return {
        "k": k,
        "seconds": seconds,
        "calls": data["calls"],
        "failures": data["failures"],
        "acked_submits": len(data["acked"]["submit"]),
        "stored_submits": stored_submits,
        "acked_answers": len(data["acked"]["answer"]),
        "stored_answers": stored_answers,
        "empty_claims": data["empty_claims"],
        "cut": data["cut"],
        "sent_again": data["sent_again"],
        "web_cores": web_cpu / seconds,
        "db_cores": db_cores,
        "locust_cores": locust_cpu / seconds,
        "machine_busy": machine_busy,
        "load": (load_start, load_end),
        "waits": sampler.waits,
        "samples": sampler.samples,
        "annotators": args.annotators,
        "participants": len(sessions),
    }


def report(r: dict) -> tuple[list[str], dict]:
    """Print one run's table; return (its failures, the p95 of each endpoint)."""
    print(
        f"\nK = {r['k']} worker process{'es' if r['k'] > 1 else ''} ({r['annotators']} annotators, "
        f"{r['participants']} participants, {r['seconds']:.1f} s from the first request to the last; "
        f"load average {r['load'][0]:.2f} at the start, {r['load'][1]:.2f} at the end, {os.cpu_count()} CPUs)"
    )
    print(f"{'endpoint':<10} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>7}")
    p95, failed = {}, []
    for endpoint in ENDPOINTS:
        values = sorted(r["calls"].get(endpoint, []))
        errors = sum(r["failures"].get(endpoint, {}).values())
        p95[endpoint] = percentile(values, 0.95)
        print(
            f"{endpoint:<10} {len(values):>9} {len(values) / r['seconds']:>8.1f} {percentile(values, 0.5):>8.1f} "
            f"{p95[endpoint]:>8.1f} {percentile(values, 0.99):>8.1f} {errors:>7}"
        )
        if errors:
            failed.append(f"K={r['k']}: {errors} {endpoint} errors {dict(r['failures'][endpoint])}")
    total = sum(len(v) for v in r["calls"].values())
    print(f"{'all':<10} {total:>9} {total / r['seconds']:>8.1f}")
    lost_submits = r["acked_submits"] - r["stored_submits"]
    lost_answers = r["acked_answers"] - r["stored_answers"]
    print(
        f"submits acknowledged {r['acked_submits']}, stored {r['stored_submits']}: lost {lost_submits}; "
        f"answers acknowledged {r['acked_answers']}, stored {r['stored_answers']}: lost {lost_answers}; "
        f"empty claims (nothing left) {r['empty_claims']}; requests cut by the run's end (in flight when Locust "
        f"stopped, not timed) {r['cut']}; requests sent again after no response on a kept-alive connection "
        f"{r['sent_again']}"
    )
    if lost_submits or lost_answers:
        failed.append(f"K={r['k']}: {lost_submits} submits and {lost_answers} answers lost")
    print(
        f"CPU (cores, averaged over the run): web workers {r['web_cores']:.2f}, database backends "
        f"{r['db_cores']:.2f}, Locust {r['locust_cores']:.2f}; the machine {r['machine_busy']:.0%} busy"
    )
    active = sum(r["waits"].values())
    top = ", ".join(f"{w} {n}" for w, n in r["waits"].most_common(6)) or "none"
    print(
        f"database backends active, by wait event ({r['samples']} samples, {active / max(1, r['samples']):.2f} "
        f"active on average): {top}"
    )
    print(
        "bottleneck: " + bottleneck(r["web_cores"], r["db_cores"], r["k"], r["machine_busy"], r["waits"], r["samples"])
    )
    return failed, p95


# ------------------------------------------------------------------------------ main


def _bounded(value, low, high, name):
    if not low <= value <= high:
        raise SystemExit(f"--{name} must be from {low} to {high} (got {value})")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=1000, help=f"simulated annotators (0-{MAX_ANNOTATORS})")
    parser.add_argument(
        "--participants", type=int, default=500, help=f"simulated participants per K (0-{MAX_PARTICIPANTS})"
    )
    parser.add_argument("--k", default="1,2,4", help=f"worker processes of the runs, comma-separated (1-{MAX_K})")
    parser.add_argument("--seconds", type=int, default=120, help=f"time bound of each run (1-{MAX_SECONDS})")
    parser.add_argument(
        "--max-requests", type=int, default=200_000, help=f"request bound of each run (1-{MAX_REQUESTS})"
    )
    parser.add_argument("--spawn-s", type=float, default=10.0, help="seconds over which every user starts (0.1-600)")
    parser.add_argument(
        "--work-s", type=float, default=60.0, help="mean seconds an annotator works on a unit (0.1-3600)"
    )
    parser.add_argument("--heartbeat-s", type=float, default=30.0, help="seconds between heartbeats (0.1-600)")
    parser.add_argument("--autosave-s", type=float, default=10.0, help="seconds between autosaves (0.1-600)")
    parser.add_argument("--think-ms", type=int, default=4000, help="mean ms a participant takes per trial (0-60000)")
    parser.add_argument("--threads", type=int, default=4, help="threads per worker process (1-32)")
    parser.add_argument("--items", type=int, default=20, help="scored items of the study (2-200)")
    parser.add_argument("--questions", type=int, default=10, help="scored questions per participant (1-50)")
    parser.add_argument(
        "--units", type=int, default=0, help="units to fill (0: enough for every claim; at most 200000)"
    )
    parser.add_argument("--smoke", action="store_true", help="20 annotators, 10 participants, K=1,2, 10 s runs")
    args = parser.parse_args()
    if args.smoke:
        args.annotators, args.participants, args.k, args.seconds, args.max_requests = 20, 10, "1,2", 40, 20_000
        args.spawn_s, args.work_s, args.heartbeat_s, args.autosave_s, args.think_ms = 1.0, 2.0, 1.0, 0.7, 100
        args.items, args.questions, args.units = 3, 2, 130
    _bounded(args.annotators, 0, MAX_ANNOTATORS, "annotators")
    _bounded(args.participants, 0, MAX_PARTICIPANTS, "participants")
    _bounded(args.seconds, 1, MAX_SECONDS, "seconds")
    _bounded(args.max_requests, 1, MAX_REQUESTS, "max-requests")
    _bounded(args.spawn_s, 0.1, 600, "spawn-s")
    _bounded(args.work_s, 0.1, 3600, "work-s")
    _bounded(args.heartbeat_s, 0.1, 600, "heartbeat-s")
    _bounded(args.autosave_s, 0.1, 600, "autosave-s")
    _bounded(args.think_ms, 0, 60_000, "think-ms")
    _bounded(args.threads, 1, 32, "threads")
    _bounded(args.units, 0, 200_000, "units")
    _bounded(args.items, 2, 200, "items")
    _bounded(args.questions, 1, min(50, args.items), "questions")
    try:
        ks = [_bounded(int(x), 1, MAX_K, "k") for x in args.k.split(",")]
    except ValueError:
        raise SystemExit(f"--k: expected whole numbers, comma-separated, got {args.k!r}") from None
    if args.annotators + args.participants == 0:
        raise SystemExit("nothing to simulate: --annotators and --participants are both 0")

    bp = _participants_module()
    db = f"{os.environ.get('POSTGRES_DB', 'annotator')}_bench_load" + ("_smoke" if args.smoke else "")
    home = REPO / ".local" / f"bench-load-{db}"
    shutil.rmtree(home, ignore_errors=True)
    for sub in ("work", "media", "static"):
        (home / sub).mkdir(parents=True)
    bp._environment(db, home)  # this process's environment, inherited by the fill, gunicorn and Locust
    os.environ["HANDLE_KEY"] = os.environ.get("HANDLE_KEY") or "bench-load-" + secrets.token_hex(16)
    bp._ensure_database(db)
    # Units: every annotator's claims in every run (a unit takes work_s/2 at least), and a margin.
    units = args.units or math.ceil(args.annotators * len(ks) * (args.seconds / (0.5 * args.work_s) + 1) * 1.2) + 10
    plan = {
        "home": str(home),
        "items": args.items,
        "questions": args.questions,
        "participants": args.participants,
        "runs": len(ks),
        "units": units,
        "annotators": args.annotators,
    }
    t0 = time.monotonic()
    print(
        f"load: database {db}; filling {units} units, {args.annotators} annotators, "
        f"{args.participants * len(ks)} link participants",
        flush=True,
    )
    servers = []
    try:
        for k in ks:
            port = bp.free_port()
            servers.append((k, port, start_server(port, k, args.threads, home)))
        filled = fill(plan)
        print(f"  filled in {time.monotonic() - t0:.1f} s", flush=True)
        floor = stack_floor(filled["tokens"][0], 200 if args.smoke else 2000) if filled["tokens"] else None
        failed, curve = [], []
        for i, (k, port, server) in enumerate(servers):
            t1 = time.monotonic()
            r = run_k(k, server, port, args, filled, db, home, bp.PG, participants_from=i * args.participants)
            print(
                f"  (K={k}: {time.monotonic() - t1:.1f} s with the warm-up, Locust's start and the server's stop)",
                flush=True,
            )
            bad, p95 = report(r)
            failed += bad
            curve.append((k, r, p95))
            if args.smoke:
                failed += [f"K={k}: no {e} request was made" for e in MEASURED if not r["calls"].get(e)]
    finally:
        for _, _, server in servers:
            stop_server(server)

    print("\nK curve (requests/s of all endpoints; p95 ms of claim, submit, answer; CPU cores used)")
    print(
        f"{'K':>3} {'req/s':>8} {'claim':>8} {'submit':>8} {'answer':>8} {'web':>6} {'db':>6} {'locust':>7} "
        f"{'busy':>5} {'load':>11}"
    )
    for k, r, p95 in curve:
        total = sum(len(v) for v in r["calls"].values()) / r["seconds"]
        people = f"K={k}, {r['annotators']} annotators and {r['participants']} participants"
        record("load.py", f"{people}: requests/s", total, "/s", smoke=args.smoke)
        for endpoint in ("claim", "submit", "answer"):
            if not math.isnan(p95[endpoint]):
                record("load.py", f"{people}: {endpoint} p95", p95[endpoint], "ms", smoke=args.smoke)
        print(
            f"{k:>3} {total:>8.1f} {p95['claim']:>8.1f} {p95['submit']:>8.1f} {p95['answer']:>8.1f} "
            f"{r['web_cores']:>6.2f} {r['db_cores']:>6.2f} {r['locust_cores']:>7.2f} {r['machine_busy']:>5.0%} "
            f"{r['load'][0]:>5.2f}-{r['load'][1]:<5.2f}"
        )
    for k, r, p95 in curve:
        worst = (
            max(p95[e] for e in TARGET_ENDPOINTS if not math.isnan(p95[e]))
            if any(not math.isnan(p95[e]) for e in TARGET_ENDPOINTS)
            else float("nan")
        )
        print(
            f"K={k}: p95 target (claim, submit, answer under {TARGET_P95_MS:.0f} ms): "
            f"{'met' if worst < TARGET_P95_MS else 'MISSED'} (worst {worst:.1f} ms)"
        )
    offered = offered_rate(args)
    print(
        f"\nCores the pacing needs: these people send about {offered:.0f} requests/s while all take part "
        f"(offered_rate); this machine has {os.cpu_count()} cores"
    )
    for k, r, _ in curve:
        n = sum(len(v) for v in r["calls"].values())
        per = {name: r[f"{name}_cores"] * r["seconds"] / max(n, 1) * 1000 for name in ("web", "db", "locust")}
        print(
            f"K={k}: CPU per request web {per['web']:.1f} ms, database {per['db']:.1f} ms, Locust "
            f"{per['locust']:.1f} ms: {offered * sum(per.values()) / 1000:.1f} cores at {offered:.0f} requests/s"
        )
    if floor is not None:
        for name, ms in floor.items():
            record("load.py", f"stack floor: CPU per request, {name} view", ms, "ms", smoke=args.smoke)
        print(
            f"stack floor (CPU per request, in one process, no work of the platform's; stack_floor): a Django view "
            f"{floor['django']:.2f} ms, a DRF view with token authentication {floor['drf']:.2f} ms: the DRF floor "
            f"alone is {offered * floor['drf'] / 1000:.1f} cores at {offered:.0f} requests/s"
        )
    if failed:
        print("FAILED: " + "; ".join(failed))
        raise SystemExit(1)
    print("result: ok" + (" (smoke)" if args.smoke else ""))


if __name__ == "__main__":
    main()
