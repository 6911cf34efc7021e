"""Panel participants through a study link (issue 19): simulated anonymous participants, each a real
HTTP client with its own cookies, from the link to the completion code, against gunicorn on loopback.

    .venv/bin/python bench/participants.py [--participants 500] [--concurrency 20] [--think-ms 1000]
                                           [--max-seconds 900] [--questions 5] [--items 20] [--smoke]

Needs the local stack (``scripts/stack.sh start``, or ``make bench-participants``).

**Data.** A database of its own (``<POSTGRES_DB>_bench_participants``, ``_smoke`` added for
``--smoke``; or ``BENCH_PARTICIPANTS_DB``, whose name must contain ``bench_participants``),
created and migrated the first time and kept; every run empties its tables (``TRUNCATE``, so
the append-only exposure ledger starts empty too) and builds afresh, with media under
``.local/bench-participants-<database>/``. A scripted first pass verifies ``--items`` + 1 work
units, each a real ffmpeg test-pattern video of about 2 s with one multiple-choice QA pair; a
multiple-choice study is built over them as ``study_create`` builds it
(real clips cut by ffmpeg): ``--items`` scored items, 1 practice item, no time limit,
``--questions`` scored questions per person and ``raters_per_item`` enough for every participant
(``ceil(participants x questions / items)``); then a link (``studies.links.create_link``).

**Server.** gunicorn as in ``docker-compose.yml`` and ``make demo`` (2 workers of 4 threads, sized
for 2 cores, ``gunicorn.conf.py``), on a free loopback port, with ``STUDY_LINK_RATE_PER_MIN``
raised (every participant comes from 127.0.0.1). No Celery worker: an answer queues its scoring as
a job row (``annotator.jobs``), whose one message goes to an in-memory broker; this measures the
web path.

**Warm-up.** Before the clock starts, 16 connections send 15 requests each that change nothing
(``warm_up``: the link without a panel id or with a malformed one, the participant API without a
session), so the workers' first requests (imports, URL resolver, templates, database connections)
are not counted as participants' (they took about 1 s each; the first 20 people all met them).

**Participants.** ``--participants`` (at most 2,000), ``--concurrency`` at a time (at most 100),
each a thread with its own keep-alive connection and cookie jar, as the pages and their scripts
would. Before each request a participant pauses ``--think-ms`` (default 1,000 ms; drawn uniformly
from half to one and a half times it, seeded per participant): a person reading a page, watching a
clip or choosing an answer, quicker than panel participants are (they take several seconds a
question). ``--think-ms 0`` is a closed loop with no pauses. The requests:

- ``link``: ``GET /s/<token>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=..`` (creates the participant,
  assigns the items, sets the HttpOnly session cookie; 302);
- ``page``: ``GET /s/<token>/`` after each step (consent, screening, take page, debrief; 200),
  its CSRF token read from the form or the ``csrf-token`` meta tag as the scripts read it;
- ``consent`` and ``screening``: the forms' POSTs (302);
- ``enroll``: ``POST /api/studies/<id>/enroll/``; then per trial ``shown``
  (``POST /api/trials/<id>/shown/``) and ``answer`` (``POST /api/trials/<id>/answer/`` with the
  option index, the client's time since the shown report, an idempotency key), and ``current``
  (``GET /api/studies/<id>/current/``) after the practice's feedback;
- ``done``: ``GET /s/<token>/done/`` (200, with the completion code).

``--max-seconds`` (default 900, at most 3,600) bounds the run: past it no participant starts and
those under way stop before their next request (counted as stopped, not lost).

**Printed.** Participants done (and in the database), answers sent, answers acknowledged, answers
stored (counted in the database afterwards), lost answers (acknowledged with 200 but not stored
with their idempotency key, plus answers answered 5xx), answers/s over the run, and per endpoint
the requests, p50, p95 and max latency (ms, client side, HTTP included) and 5xx, the machine's load
average at the run's start and end (the machine may be shared), then whether every
p95 met the target (under 100 ms on this machine; issue 19, "Tests and benchmark"), with the offered
load (requests/s) it was met or missed at. With ``--think-ms 0`` the participants never pause, a
closed loop: once the server is saturated, latency is about concurrency / throughput (Little's
law), so that mode measures capacity (requests/s), and ``--concurrency 1`` each request's own time.
Exits 1 on any lost answer, any 5xx, a request with no response, a participant whose flow broke
(an unexpected status) or a completion code the database does not hold for them; a missed latency
target is printed, not an error. ``--smoke``: 10 participants, concurrency 4, 3 items of 2
questions, 20 ms pauses (``make test`` runs it: tests/studies/test_bench_participants.py).
"""

from __future__ import annotations

import os
import sys

# bench/queue.py would shadow the standard library's ``queue`` (psycopg, concurrent.futures and
# Celery import it) while this file's folder is sys.path[0].
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))  # the repository: bench.lib.results

import argparse  # noqa: E402
import hashlib  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from http.cookies import SimpleCookie  # noqa: E402
from pathlib import Path  # noqa: E402
from urllib.parse import urlencode  # noqa: E402

from bench.lib.results import record  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PG = dict(
    host=os.environ.get("POSTGRES_HOST", "127.0.0.1"),
    port=int(os.environ.get("POSTGRES_PORT", "54329")),
    user=os.environ.get("POSTGRES_USER", "annotator"),
)
TARGET_P95_MS = 100.0
MAX_PARTICIPANTS, MAX_CONCURRENCY, MAX_SECONDS, MAX_ITEMS, MAX_QUESTIONS = 2000, 100, 3600, 200, 50
MAX_THINK_MS = 60_000
ENDPOINTS = ("link", "page", "consent", "screening", "enroll", "current", "shown", "answer", "done")
# A viewport and codec report that passes the screening (the study's minimum is 1024 x 600).
SCREENING = {"width": "1366", "height": "768", "codec": "yes", "played": "yes"}
CSRF_FORM = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
CODE = re.compile(rb'<output id="code">([A-Z0-9]{10})</output>')
REQUEST_TIMEOUT_S = 60.0


# ------------------------------------------------------------------------------ database and data


def _environment(db: str, home: Path) -> None:
    """Settings for this process and the server it starts (read by ``annotator.settings``)."""
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "annotator.settings",
            "POSTGRES_DB": db,
            "MEDIA_ROOT": str(home / "media"),
            "MEDIA_WORK_DIR": str(home / "work"),
            "STATIC_ROOT": str(home / "static"),
            # Scoring jobs' messages stay in the process (nothing reaches a real queue or a demo's worker).
            "CELERY_BROKER_URL": "memory://",
            "CELERY_RESULT_BACKEND": "cache+memory://",
            # Plain http on loopback: Secure cookies would never be sent back (as in `make demo`).
            "DJANGO_SECURE_COOKIES": "0",
            # Every simulated participant comes from 127.0.0.1.
            "STUDY_LINK_RATE_PER_MIN": "1000000",
            "PUBLIC_BASE_URL": "http://127.0.0.1",
            "LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
        }
    )
    # A scratch database needs no lasting keys (a fresh clone may have no .local key files yet).
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-" + secrets.token_urlsafe(48))
    os.environ.setdefault("PSEUDONYM_KEY", "bench-" + secrets.token_urlsafe(48))
    sys.path.insert(0, str(REPO))


def _ensure_database(db: str) -> None:
    import psycopg

    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as conn:
        if not conn.execute("select 1 from pg_database where datname = %s", [db]).fetchone():
            conn.execute(f'create database "{db}"')


def _empty_tables() -> None:
    """Empty every table but the migrations' bookkeeping (content types and permissions are
    Django's, made by migrate). TRUNCATE fires no row triggers, so the ledger empties too."""
    from django.db import connection

    keep = {"django_migrations", "django_content_type", "auth_permission"}
    tables = [t for t in connection.introspection.table_names() if t not in keep]
    with connection.cursor() as c:
        c.execute("truncate " + ", ".join(connection.ops.quote_name(t) for t in tables) + " restart identity cascade")


def _stored_video(project, home: Path, name: str, seconds: float, **fields):
    """A ready, real video of ``seconds`` (ffmpeg's counting test pattern, 160x120 at 10 fps),
    stored as its rendition."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    from annotator.media.models import Video

    path = home / "work" / name
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"testsrc=size=160x120:rate=10:duration={seconds}",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            "-g",
            "10",
            str(path),
        ],
        check=True,
    )
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    rendition = default_storage.save(f"renditions/{sha[:16]}/{name}", ContentFile(data))
    return Video.objects.create(
        project=project,
        sha256=sha,
        filename=name,
        status=Video.Status.READY,
        duration_s=seconds,
        fps=10.0,
        width=160,
        height=120,
        rendition=rendition,
        **fields,
    )


@dataclass
class Setup:
    study_id: int
    token: str
    items: int
    raters_per_item: int


def build(home: Path, n_items: int, questions: int, participants: int, progress) -> Setup:
    """The verified units, the study and its link (see the module's docstring)."""
    from annotator.drafts.models import DraftJob, DraftRun
    from annotator.drafts.services import save_drafts
    from annotator.drafts.templates import DraftSpec
    from annotator.projects.services import ensure_member, ensure_project
    from annotator.qa.queue import claim_next
    from annotator.qa.services import Decision, ensure_qa_type, submit_unit
    from annotator.studies import links
    from annotator.studies.models import Item
    from annotator.studies.services import create_study

    project = ensure_project("bench-participants", "Participants benchmark")
    project.double_check_share = 0.0  # one verification pass: the study's data, nothing more
    project.save()
    builder = ensure_member("bench-builder", role="annotator", project=project, password="pw-bench-builder-123")[0]
    ensure_qa_type(project, "object_recognition")
    run = DraftRun.objects.create(project=project, pipeline="templates", prompt_version="templates-v1")
    progress(f"  {n_items + 1} verified work units (a 2 s ffmpeg test pattern and one multiple-choice QA pair each)")
    for i in range(n_items + 1):
        # A tenth of a second more each: every video's bytes differ (a project stores content once).
        video = _stored_video(project, home, f"unit{i}.mp4", 2.0 + i / 10, illumination="day", domain="bench")
        save_drafts(
            DraftJob.objects.create(run=run, video=video),
            [
                DraftSpec(
                    "object_recognition",
                    f"Which of these objects appears in clip {i}?",
                    "cup",
                    0.0,
                    2.0,
                    source_key="objects",
                    options=["pan", "cup", "lamp", "shoe"],
                    answer_index=1,
                    params={"shuffle_seed": 7},
                )
            ],
            actor="templates/templates-v1",
        )
    while (unit := claim_next(project, builder)) is not None:
        submit_unit(
            unit.unit_id,
            builder,
            idempotency_key=f"bench{unit.pk}",
            time_spent_ms=None,
            additions=[],
            decisions=[Decision(p.pk, "keep", version=p.version) for p in unit.unit.qa_pairs.order_by("id")],
        )
    raters = max(1, math.ceil(participants * questions / n_items))
    study, _ = create_study(
        project,
        "bench-mcq",
        "mcq",
        seed=1,
        options={
            "per_type": n_items,
            "questions_per_participant": questions,
            "practice_items": 1,
            "attention_items": 0,
            "conditions_per_participant": 1,
            "raters_per_item": raters,
        },
    )
    scored = Item.objects.filter(condition__study=study, role=Item.Role.SCORED).count()
    if scored != n_items:
        raise SystemExit(f"the study has {scored} scored items, expected {n_items}")
    progress(
        f"  study {study.name}: {scored} scored items + 1 practice, {questions} questions a person, "
        f"{raters} raters per item"
    )
    return Setup(study.pk, links.create_link(study).token, scored, raters)


def serve(port: int, home: Path) -> subprocess.Popen:
    """gunicorn on loopback (2 workers of 4 threads, the repository's gunicorn.conf.py) with this
    process's environment; returns once it answers."""
    log = open(home / "web.log", "ab")  # the server's own log lines stay out of the table
    server = subprocess.Popen(
        [
            str(REPO / ".venv" / "bin" / "gunicorn"),
            "annotator.wsgi",
            "-c",
            str(REPO / "gunicorn.conf.py"),
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--threads",
            "4",
            # No control socket: gunicorn's default ($HOME/.gunicorn/gunicorn.ctl) is one path
            # for every gunicorn of the user, so a command meant for another reached this one.
            "--no-control-socket",
        ],
        cwd=REPO,
        env=os.environ.copy(),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/accounts/login/")
            conn.getresponse().read()
            conn.close()
            return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"gunicorn exited ({server.returncode}); see {home / 'web.log'}")
            time.sleep(0.2)
    server.terminate()
    raise SystemExit(f"gunicorn did not answer within 60 s; see {home / 'web.log'}")


WARM_UP_ROUNDS = 3


def warm_up(port: int, setup: Setup, threads: int = 16) -> tuple[int, int]:
    """Before the clock starts: each of ``threads`` connections (at least every thread of every
    worker) sends ``WARM_UP_ROUNDS`` rounds of requests that change nothing (the link without a
    panel id, with a malformed one, the participant API without a session: 400 and 403/404), so a
    worker's first requests (imports, URL resolver, templates, database connections) are not
    counted as a participant's. Returns (requests, answered 5xx or not at all)."""
    base, api = f"/s/{setup.token}/", f"/api/studies/{setup.study_id}/"
    paths = [
        ("GET", base),
        ("GET", base + "?pid=not%20an%20id"),
        ("GET", api + "current/"),
        ("POST", api + "enroll/"),
        ("GET", base + "done/"),
    ]
    counts = [0, 0]
    lock = threading.Lock()

    def one(_: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
        try:
            for _round in range(WARM_UP_ROUNDS):
                for method, path in paths:
                    try:
                        conn.request(
                            method, path, body=b"" if method == "POST" else None, headers={"Host": "127.0.0.1"}
                        )
                        response = conn.getresponse()
                        response.read()
                        bad = response.status >= 500
                    except (OSError, http.client.HTTPException):
                        conn.close()
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
                        bad = True
                    with lock:
                        counts[0] += 1
                        counts[1] += bad
        finally:
            conn.close()

    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(one, range(threads)))
    return counts[0], counts[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------ participants


class Broken(Exception):
    """The flow got an answer a participant's page would not expect."""


class TimeUp(Exception):
    """The run's time bound passed before the participant's next request."""


@dataclass
class Record:
    """What one participant saw: per endpoint (latency ms, status; status 0 = no response)."""

    calls: list[tuple[str, float, int]] = field(default_factory=list)
    answers_sent: int = 0
    acked: list[tuple[int, str]] = field(default_factory=list)  # (trial id, idempotency key) answered 200
    answer_5xx: int = 0
    retries: int = 0  # requests sent again on a new connection (the kept-alive one was closed)
    done: bool = False
    pid: str = ""
    code: str = ""
    stopped: bool = False
    problem: str = ""


class Browser:
    """One participant's HTTP client: a keep-alive connection and a cookie jar (what a browser sends
    back of its cookies: name=value). Redirects are not followed: the next step asks for the page."""

    def __init__(self, port: int, record: Record, deadline: float, think_ms: float = 0.0, seed: int = 0):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
        self.cookies: dict[str, str] = {}
        self.record, self.deadline = record, deadline
        self.think_s, self.rng = think_ms / 1000.0, random.Random(seed)
        self.used = False  # a response came on the connection (it is kept alive)

    def call(
        self,
        endpoint: str,
        method: str,
        path: str,
        *,
        form: dict | None = None,
        payload: dict | None = None,
        csrf: str = "",
        expect: int = 200,
    ) -> tuple[int, bytes]:
        if self.think_s:  # the person reads, watches, chooses (not counted in the latency)
            time.sleep(self.think_s * self.rng.uniform(0.5, 1.5))
        if time.monotonic() > self.deadline:
            raise TimeUp()
        if endpoint == "answer":
            self.record.answers_sent += 1
        headers = {"Host": "127.0.0.1"}
        body = None
        if form is not None:
            body, headers["Content-Type"] = urlencode(form).encode(), "application/x-www-form-urlencoded"
        elif payload is not None or method == "POST":
            body, headers["Content-Type"] = json.dumps(payload or {}).encode(), "application/json"
        if csrf and form is None:
            headers["X-CSRFToken"] = csrf
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        started = time.perf_counter()
        try:
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
            except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
                if not self.used:
                    raise
                # The server closed the kept-alive connection while the person paused (gunicorn's
                # keep-alive is 2 s; a pause plus a slow machine can pass it) and nothing of a
                # response came: a browser sends the request again on a new connection, once.
                # Every request here is safe to send twice (answers carry their idempotency key, the
                # link resumes the participant, the forms record once).
                self.conn.close()
                self.record.retries += 1
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
            data = response.read()
            self.used = True
        except (OSError, http.client.HTTPException) as exc:
            self.record.calls.append((endpoint, (time.perf_counter() - started) * 1000.0, 0))
            self.conn.close()
            raise Broken(f"{endpoint}: no response ({type(exc).__name__}: {exc})") from None
        ms = (time.perf_counter() - started) * 1000.0
        self.record.calls.append((endpoint, ms, response.status))
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        if response.status != expect:
            if endpoint == "answer" and response.status >= 500:
                self.record.answer_5xx += 1
            raise Broken(f"{endpoint}: {response.status} (expected {expect}): {data[:200]!r}")
        return response.status, data

    def close(self) -> None:
        self.conn.close()


def _token(pattern: re.Pattern, page: bytes, what: str) -> str:
    found = pattern.search(page.decode("utf-8", "replace"))
    if not found:
        raise Broken(f"page: no CSRF token on the {what} page")
    return found.group(1)


def take_part(i: int, port: int, setup: Setup, run_id: str, deadline: float, think_ms: float = 0.0) -> Record:
    """Participant ``i`` from the link to the completion code (see the module's docstring), pausing
    about ``think_ms`` before each request."""
    record = Record()
    browser = Browser(port, record, deadline, think_ms, seed=i)
    base = f"/s/{setup.token}/"
    pid = (run_id + f"{i:06x}").rjust(24, "0")  # Prolific ids are 24 hex digits
    try:
        browser.call(
            "link",
            "GET",
            base + "?" + urlencode({"PROLIFIC_PID": pid, "STUDY_ID": "bench-study", "SESSION_ID": f"bench-{i}"}),
            expect=302,
        )
        _, page = browser.call("page", "GET", base)
        if b'id="consent"' not in page:
            raise Broken("page: not the consent page after the link")
        browser.call(
            "consent",
            "POST",
            base + "consent/",
            expect=302,
            form={"decision": "accept", "csrfmiddlewaretoken": _token(CSRF_FORM, page, "consent")},
        )
        _, page = browser.call("page", "GET", base)
        browser.call(
            "screening",
            "POST",
            base + "screening/",
            expect=302,
            form={**SCREENING, "csrfmiddlewaretoken": _token(CSRF_FORM, page, "screening")},
        )
        _, page = browser.call("page", "GET", base)
        if b'id="take-config"' not in page:
            raise Broken("page: not the take page after the screening")
        csrf = _token(CSRF_META, page, "take")
        api = f"/api/studies/{setup.study_id}/"
        state = json.loads(browser.call("enroll", "POST", api + "enroll/", csrf=csrf)[1])
        shown_at = 0.0
        for _ in range(4 * MAX_QUESTIONS):  # a bound: practice + questions, each at most twice
            trial = state.get("trial")
            if trial is None:
                if state.get("next") == "current":  # after a practice answer's feedback
                    state = json.loads(browser.call("current", "GET", api + "current/")[1])
                    continue
                break
            tid = trial["trial_id"]
            if not trial.get("shown"):
                browser.call("shown", "POST", f"/api/trials/{tid}/shown/", csrf=csrf)
                shown_at = time.perf_counter()
            key = f"{pid}-{tid}"
            rt = max(1.0, (time.perf_counter() - shown_at) * 1000.0)
            _, body = browser.call(
                "answer",
                "POST",
                f"/api/trials/{tid}/answer/",
                csrf=csrf,
                payload={
                    "response": i % len(trial["content"]["options"]),
                    "client_rt_ms": round(rt, 1),
                    "idempotency_key": key,
                },
            )
            record.acked.append((tid, key))
            state = json.loads(body)
        else:
            raise Broken("answer: the trials never ended")
        if state.get("stage") != "done":
            raise Broken(f"answer: no trial left but the stage is {state.get('stage')!r}")
        _, page = browser.call("page", "GET", base)
        if b'id="debrief"' not in page:
            raise Broken("page: not the debrief after the last answer")
        _, page = browser.call("done", "GET", base + "done/")
        found = CODE.search(page)
        if not found:
            raise Broken("done: no completion code on the page")
        record.pid, record.code, record.done = pid, found.group(1).decode(), True
    except TimeUp:
        record.stopped = True
    except Broken as exc:
        record.problem = str(exc)
    finally:
        browser.close()
    return record


# ------------------------------------------------------------------------------ figures


def percentile(sorted_ms: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of sorted values, nearest rank (the value below which q of them lie)."""
    if not sorted_ms:
        return float("nan")
    return sorted_ms[min(len(sorted_ms) - 1, max(0, math.ceil(q * len(sorted_ms)) - 1))]


def stored(study_id: int) -> tuple[dict[int, str], dict[str, str]]:
    """(trial id -> idempotency key of every answered, non-timed-out trial of the study's people,
    panel id -> completion code of every participant who finished), read from the database."""
    from django.db import connection

    from annotator.studies.models import Participant, Trial

    connection.close()  # a fresh connection after the run
    answered = dict(
        Trial.objects.filter(
            participant__study_id=study_id,
            participant__kind=Participant.Kind.PERSON,
            answered_at__isnull=False,
            timed_out=False,
            response__isnull=False,
        ).values_list("id", "idempotency_key")
    )
    finished = dict(
        Participant.objects.filter(
            study_id=study_id, kind=Participant.Kind.PERSON, finished_at__isnull=False
        ).values_list("external_id", "completion_code")
    )
    return answered, finished


def report(
    records: list[Record],
    seconds: float,
    answered: dict[int, str],
    finished: dict[str, str],
    participants: int,
    concurrency: int = 0,
    think_ms: float = 0.0,
    load: tuple[float, float] | None = None,
    smoke: bool = False,
) -> int:
    """Print the figures; return the exit status (1 on anything lost, a 5xx, no response or a broken flow).
    ``load``: the machine's 1-minute load average at the run's start and end (the machine may be
    shared: latency figures mean little without it). The headline figures go on record
    (``bench.lib.results``), marked ``smoke`` for a smoke run."""
    calls: dict[str, list[float]] = {e: [] for e in ENDPOINTS}
    fives = {e: 0 for e in ENDPOINTS}
    no_response = 0
    for r in records:
        for endpoint, ms, status in r.calls:
            calls[endpoint].append(ms)
            fives[endpoint] += status >= 500
            no_response += status == 0
    acked = [a for r in records for a in r.acked]
    missing = [(tid, key) for tid, key in acked if answered.get(tid) != key]
    answer_5xx = sum(r.answer_5xx for r in records)
    lost = len(missing) + answer_5xx
    sent = sum(r.answers_sent for r in records)
    done = sum(r.done for r in records)
    stopped = sum(r.stopped for r in records)
    broken = [r.problem for r in records if r.problem]
    started = len(records)
    wrong_codes = sum(1 for r in records if r.done and finished.get(r.pid) != r.code)

    print(
        f"\nparticipants: {done} done of {participants} ({started} started, {stopped} stopped by the time bound, "
        f"{len(broken)} broken); {len(finished)} finished in the database, {wrong_codes} shown a code the database "
        "does not hold for them"
    )
    print(f"answers sent: {sent}   acknowledged: {len(acked)}   stored (database): {len(answered)}")
    print(f"lost answers: {lost} ({len(missing)} acknowledged but not stored, {answer_5xx} answered 5xx)")
    requests = sum(len(v) for v in calls.values())
    print(
        f"answers/s: {len(acked) / seconds:.1f} over {seconds:.1f} s ({requests} requests, "
        f"{requests / seconds:.1f} requests/s)"
    )
    if load is not None:
        print(
            f"machine load (1-minute average, {os.cpu_count()} CPUs): {load[0]:.1f} at the start, "
            f"{load[1]:.1f} at the end"
        )
    print(f"\n{'endpoint':<10} {'requests':>9} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'5xx':>5}")
    worst = 0.0
    for endpoint in ENDPOINTS:
        values = sorted(calls[endpoint])
        p95 = percentile(values, 0.95)
        if values:
            worst = max(worst, p95)
        print(
            f"{endpoint:<10} {len(values):>9} {percentile(values, 0.5):>8.1f} {p95:>8.1f} "
            f"{(values[-1] if values else float('nan')):>8.1f} {fives[endpoint]:>5}"
        )
    met = worst < TARGET_P95_MS
    who = f"{participants} participants, {concurrency} at a time"
    record("participants.py", f"{who}: answers/s", len(acked) / seconds, "/s", smoke=smoke)
    record("participants.py", f"{who}: worst endpoint p95", worst, "ms", smoke=smoke)
    record("participants.py", f"{who}: lost answers", lost, "answers", smoke=smoke)
    pace = (
        f"{concurrency} participants at a time pausing about {think_ms:.0f} ms"
        if think_ms
        else f"closed loop, {concurrency} at a time, no pauses"
    )
    print(
        f"\np95 target (every endpoint under {TARGET_P95_MS:.0f} ms): {'met' if met else 'MISSED'} "
        f"(worst p95 {worst:.1f} ms) at {requests / seconds:.1f} requests/s offered ({pace})"
    )
    for problem in sorted(set(broken))[:5]:
        print(f"broken flow ({broken.count(problem)}): {problem}")
    if no_response:
        print(f"requests with no response: {no_response}")
    retries = sum(r.retries for r in records)
    if retries:
        print(f"requests sent again on a new connection (the server had closed the kept-alive one): {retries}")
    total_5xx = sum(fives.values())
    failed = lost or total_5xx or no_response or broken or wrong_codes
    print(f"\nresult: {'FAILED' if failed else 'ok'} ({lost} lost, {total_5xx} 5xx)")
    return 1 if failed else 0


# ------------------------------------------------------------------------------ main


def _bounded(value: int, low: int, high: int, name: str) -> int:
    if not low <= value <= high:
        raise SystemExit(f"--{name} must be from {low} to {high} (got {value})")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=500, help=f"simulated participants (1-{MAX_PARTICIPANTS})")
    parser.add_argument("--concurrency", type=int, default=20, help=f"participants at a time (1-{MAX_CONCURRENCY})")
    parser.add_argument(
        "--think-ms",
        type=int,
        default=1000,
        help=f"mean pause before each request, ms (0-{MAX_THINK_MS}; 0: a closed loop)",
    )
    parser.add_argument("--max-seconds", type=int, default=900, help=f"time bound of the run (1-{MAX_SECONDS})")
    parser.add_argument("--items", type=int, default=20, help=f"scored items of the study (2-{MAX_ITEMS})")
    parser.add_argument("--questions", type=int, default=5, help=f"scored questions per person (1-{MAX_QUESTIONS})")
    parser.add_argument("--smoke", action="store_true", help="10 participants, concurrency 4, 3 items of 2 questions")
    args = parser.parse_args()
    if args.smoke:
        args.participants, args.concurrency, args.items, args.questions, args.max_seconds = 10, 4, 3, 2, 120
        args.think_ms = 20
    participants = _bounded(args.participants, 1, MAX_PARTICIPANTS, "participants")
    concurrency = _bounded(args.concurrency, 1, MAX_CONCURRENCY, "concurrency")
    max_seconds = _bounded(args.max_seconds, 1, MAX_SECONDS, "max-seconds")
    think_ms = _bounded(args.think_ms, 0, MAX_THINK_MS, "think-ms")
    items = _bounded(args.items, 2, MAX_ITEMS, "items")
    questions = _bounded(args.questions, 1, min(MAX_QUESTIONS, items), "questions")

    db = os.environ.get("BENCH_PARTICIPANTS_DB") or (
        f"{os.environ.get('POSTGRES_DB', 'annotator')}_bench_participants" + ("_smoke" if args.smoke else "")
    )
    if "bench_participants" not in db:  # every table of it is emptied: never a working database by mistake
        raise SystemExit(f"the bench empties its database; {db!r} must have 'bench_participants' in its name")
    home = REPO / ".local" / f"bench-participants-{db}"
    shutil.rmtree(home, ignore_errors=True)
    for sub in ("work", "media", "static"):
        (home / sub).mkdir(parents=True)
    _environment(db, home)
    t0 = time.monotonic()
    print(f"participants: database {db}, media under {home.relative_to(REPO)}", flush=True)
    _ensure_database(db)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    _empty_tables()
    setup = build(home, items, questions, participants, lambda line: print(line, flush=True))
    connection.close()  # the server has the database to itself during the run
    port = free_port()
    server = serve(port, home)
    print(
        f"  gunicorn on 127.0.0.1:{port} (2 workers x 4 threads); setup took {time.monotonic() - t0:.1f} s", flush=True
    )
    print(
        f"  {participants} participants, {concurrency} at a time, pausing about {think_ms} ms before each request, "
        f"at most {max_seconds} s",
        flush=True,
    )
    run_id = secrets.token_hex(4)
    try:
        sent, bad = warm_up(port, setup)
        print(
            f"  warm-up, not measured: {sent} requests that change nothing ({bad} answered 5xx or not at all)",
            flush=True,
        )
        if bad:
            raise SystemExit("the server failed requests of the warm-up; see its log")
        started = time.monotonic()
        load_at_start = os.getloadavg()[0]
        deadline = started + max_seconds
        progress_lock = threading.Lock()
        finished_count = [0]

        def one(i: int) -> Record | None:
            if time.monotonic() > deadline:
                return None
            taken = take_part(i, port, setup, run_id, deadline, think_ms)
            with progress_lock:
                finished_count[0] += 1
                if finished_count[0] % 100 == 0:
                    print(
                        f"  {finished_count[0]} participants through ({time.monotonic() - started:.0f} s)", flush=True
                    )
            return taken

        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            records = [r for r in pool.map(one, range(participants)) if r is not None]
        seconds = time.monotonic() - started
        load = (load_at_start, os.getloadavg()[0])
    finally:
        server.terminate()
        server.wait(timeout=30)
    answered, finished = stored(setup.study_id)
    sys.exit(report(records, seconds, answered, finished, participants, concurrency, think_ms, load, args.smoke))


if __name__ == "__main__":
    main()
