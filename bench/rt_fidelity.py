"""Response-time fidelity of the study page: a scripted participant in headless Chromium answers
after known delays, and the page's and the server's response times are compared with them.

    .venv/bin/python bench/rt_fidelity.py [--trials 12] [--delays 1.5,3,6] [--kinds ordering,mcq,open_answer,likert]
                                          [--port 8766] [--smoke]

Needs the local stack (``scripts/stack.sh start``, or ``make bench-rt``). The bench builds a
database of its own (``annotator_bench_rt``, or ``BENCH_RT_DB``; made afresh each run) with media
under ``.local/bench-rt/<database>/``: a scripted first pass verifies ``--trials`` work units (real ffmpeg clips, one
open-ended and one multiple-choice QA pair each), and one study of each kind is created over them
as ``study_create`` does (ordering: 4 frames of 224 px from a real 3-minute video; multiple choice
with a 60 s limit; open answers; Likert correctness ratings, justified below 3). Gunicorn serves
the platform as in production (collected static files, 2 workers of 4 threads, the repository's
gunicorn.conf.py, no control socket: gunicorn's default one is shared by every gunicorn of the
user); Celery messages go to an in-memory broker (nothing is scored, nothing reaches a real queue).

The participant takes ``--trials`` trials of each kind. On each trial it waits for the mark the
page sets when it reports the trial visible (``#trial[data-shown]``, with the page's clock origin
in ``data-shown-at``), puts in an answer (moves a frame, presses an option or score key, types a
text), then, in the page, waits until ``delay`` after that origin and clicks Answer. Delays cycle
through ``--delays`` (seconds). Printed per trial: the intended delay, the client RT the page sent
(``client_rt_ms``) and the server RT (``answered_at - shown_at``), with their errors; then per kind
and overall the median absolute client error (target under 20 ms) and the share of server RTs
within 300 ms of the delay (target: all). Issue 8, "Tests and benchmark". Exits 1 when a trial was
not answered, timed out or stored no response, or a target is missed.

``--smoke``: 1 trial of each kind at 0.5 s, one gunicorn worker (each loads Django: seconds on a
busy machine), on a free port, in ``<POSTGRES_DB>_bench_rt_smoke``,
created and migrated the first time (so that run is slower) and kept, its tables emptied
(``TRUNCATE``) at each run, static files collected once; a missed target is printed, not an error
(a busy machine's timers); every trial must still be answered and stored, then ``smoke: ok``
(``make test`` runs it: tests/studies/test_bench_rt_fidelity.py).
"""

from __future__ import annotations

import os
import sys

# bench/queue.py would shadow the standard library's ``queue`` (psycopg and Celery import it) while
# this file's folder is sys.path[0].
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))  # the repository: bench.lib.results

import argparse  # noqa: E402
import hashlib  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402

from bench.lib.results import record  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DB = os.environ.get("BENCH_RT_DB", "annotator_bench_rt")
HOME = REPO / ".local" / "bench-rt" / DB
PG = dict(
    host=os.environ.get("POSTGRES_HOST", "127.0.0.1"),
    port=int(os.environ.get("POSTGRES_PORT", "54329")),
    user=os.environ.get("POSTGRES_USER", "annotator"),
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PARTICIPANT = ("rt-participant", "pw-rt-participant-123")
CLIENT_TARGET_MS = 20.0
SERVER_WINDOW_MS = 300.0
SERVER_START_S = 90.0

# In the page: wait until `delay` ms after the clock origin the page recorded when the trial became
# visible, then click Answer (its handler reads the page's clock at once). The last millisecond is
# spun so a timer firing a little early or late does not blur the measurement. Returns the actual
# time of the click after the origin.
ANSWER_AFTER = """async (delay) => {
  const origin = parseFloat(document.getElementById("trial").dataset.shownAt);
  const until = origin + delay;
  await new Promise((r) => setTimeout(r, Math.max(0, until - performance.now() - 2)));
  while (performance.now() < until) { /* the last 2 ms */ }
  const at = performance.now() - origin;
  document.getElementById("answer").click();
  return at;
}"""
NEW_TRIAL_SHOWN = """(last) => {
  const t = document.getElementById("trial");
  return !t.hidden && t.dataset.shown && t.dataset.shown !== last;
}"""


def _environment() -> None:
    """Settings for this process and the server it starts (read by ``annotator.settings``)."""
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "annotator.settings",
            "POSTGRES_DB": DB,
            "MEDIA_ROOT": str(HOME / "media"),
            "MEDIA_WORK_DIR": str(HOME / "work"),
            "STATIC_ROOT": str(HOME / "static"),
            "CELERY_BROKER_URL": "memory://",
            "CELERY_RESULT_BACKEND": "cache+memory://",
            # Plain http on loopback: Secure cookies would never be sent back (as in `make demo`).
            "DJANGO_SECURE_COOKIES": "0",
        }
    )
    sys.path.insert(0, str(REPO))


def _fresh_database() -> None:
    import psycopg

    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as conn:
        conn.execute(f'drop database if exists "{DB}" with (force)')
        conn.execute(f'create database "{DB}"')


def _kept_database() -> None:
    """(``--smoke``.) The database, created if missing; migrated and emptied in ``build``."""
    import psycopg

    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as conn:
        if not conn.execute("select 1 from pg_database where datname = %s", [DB]).fetchone():
            conn.execute(f'create database "{DB}"')


def _empty_tables() -> None:
    """Empty every table but the migrations' bookkeeping (content types and permissions are Django's,
    made by migrate). TRUNCATE fires no row triggers, so append-only tables empty too."""
    from django.db import connection

    keep = {"django_migrations", "django_content_type", "auth_permission"}
    tables = [t for t in connection.introspection.table_names() if t not in keep]
    with connection.cursor() as c:
        c.execute("truncate " + ", ".join(connection.ops.quote_name(t) for t in tables) + " restart identity cascade")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ffmpeg_video(path: Path, seconds: float) -> bytes:
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
    return path.read_bytes()


def _stored_video(project, name: str, seconds: float, **fields):
    """A ready, real video of ``seconds`` (ffmpeg's counting test pattern), stored as its rendition."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    from annotator.media.models import Video

    data = _ffmpeg_video(HOME / "work" / name, seconds)
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


def build(n: int, progress, empty: bool = False) -> dict[str, str]:
    """The data and the four studies (see the module's docstring); returns kind -> study name.
    ``empty``: empty the (kept) database's tables first."""
    from django.core.management import call_command

    from annotator.drafts.models import DraftJob, DraftRun
    from annotator.drafts.services import save_drafts
    from annotator.drafts.templates import DraftSpec
    from annotator.projects.services import ensure_member, ensure_project
    from annotator.qa.queue import claim_next
    from annotator.qa.services import Decision, ensure_qa_type, submit_unit
    from annotator.studies.services import create_study

    call_command("migrate", verbosity=0)
    if empty:
        _empty_tables()
    call_command("collectstatic", "--noinput", verbosity=0)  # copies only what changed since the last run
    project = ensure_project("rt", "RT fidelity")
    project.double_check_share = 0.0
    project.save()
    ensure_member(PARTICIPANT[0], role="annotator", project=project, password=PARTICIPANT[1])
    builder = ensure_member("rt-builder", role="annotator", project=project, password="pw-rt-builder-123")[0]
    ensure_qa_type(project, "scene_description")
    ensure_qa_type(project, "object_recognition")
    run = DraftRun.objects.create(project=project, pipeline="templates", prompt_version="templates-v1")
    progress(f"  {n} verified work units of a 6 s clip each")
    for i in range(n):
        # A tenth of a second more each: every video's bytes differ (a project stores content once).
        video = _stored_video(project, f"unit{i}.mp4", 6.0 + i / 10, illumination="day", domain="bench")
        save_drafts(
            DraftJob.objects.create(run=run, video=video),
            [
                DraftSpec(
                    "scene_description",
                    f"What is shown in clip {i}?",
                    "colour bars and a counter",
                    0.0,
                    6.0,
                    source_key="open",
                ),
                DraftSpec(
                    "object_recognition",
                    "Which of these objects appears in the video?",
                    "cup",
                    0.0,
                    6.0,
                    source_key="objects",
                    options=["pan", "cup", "lamp", "shoe"],
                    answer_index=1,
                    params={"shuffle_seed": 7},
                ),
            ],
            actor="templates/templates-v1",
        )
    while (item := claim_next(project, builder)) is not None:
        submit_unit(
            item.unit_id,
            builder,
            idempotency_key=f"rt{item.pk}",
            time_spent_ms=None,
            additions=[],
            decisions=[Decision(p.pk, "keep", version=p.version) for p in item.unit.qa_pairs.order_by("id")],
        )
    progress("  a 3-minute video to order frames of")
    _stored_video(project, "ordering.mp4", 15.0 * n + 1.0)
    common = {"questions_per_participant": n, "practice_items": 0, "conditions_per_participant": 1}
    studies = {
        "ordering": (
            "rt-ordering",
            {
                "frame_size": 224,
                "conditions": [
                    {"number": 1, "label": "4 frames", "n_frames": 4, "clip_length": "medium", "annotation": "brief"}
                ],
            },
        ),
        "mcq": ("rt-mcq", {"time_limits": [60], "attention_items": 0}),
        "open_answer": ("rt-open", {}),
        "likert": (
            "rt-likert",
            {
                "source": "qa",
                "criteria": ["correctness"],
                "control_groups": False,
                "justify_below": 3,
                "attention_items": 0,
            },
        ),
    }
    for kind, (name, options) in studies.items():
        create_study(project, name, kind, seed=1, options={**common, **options})
        progress(f"  study {name} ({kind})")
    return {kind: name for kind, (name, _) in studies.items()}


def serve(port: int, workers: int = 2) -> subprocess.Popen:
    """Gunicorn on loopback (``workers`` of 4 threads) with this process's environment; returns once it
    answers."""
    log = open(HOME / "web.log", "ab")  # the server's own log lines stay out of the table
    server = subprocess.Popen(
        [
            str(REPO / ".venv" / "bin" / "gunicorn"),
            "annotator.wsgi",
            "-c",
            str(REPO / "gunicorn.conf.py"),
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--threads",
            "4",
            # gunicorn's default control socket ($HOME/.gunicorn/gunicorn.ctl) is one path for
            # every gunicorn of the user: a command meant for another one would reach this one.
            "--no-control-socket",
        ],
        cwd=REPO,
        env=os.environ.copy(),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    # Its workers load Django first: on 2 busy cores that has taken 30 s.
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2)
            return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"gunicorn exited ({server.returncode}); see {HOME / 'web.log'}")
            time.sleep(0.2)
    server.terminate()
    raise SystemExit(f"gunicorn did not answer within {SERVER_START_S:.0f} s; see {HOME / 'web.log'}")


def prepare(page, kind: str, i: int) -> None:
    """Put in an answer the way a person would (nothing is sent yet)."""
    if kind == "ordering":
        page.locator("#frames > li:not(.pinned)").first.focus()
        page.keyboard.press("ArrowRight")
    elif kind == "mcq":
        page.keyboard.press(str(1 + i % 4))
    elif kind == "open_answer":
        page.fill("#open-answer", "colour bars with a counter")
    elif kind == "likert":
        page.keyboard.press(str(3 + i % 3))


def take(page, base: str, name: str, kind: str, delays: list[float]) -> list[dict]:
    """Take study ``name``: one trial per delay; returns ``{kind, delay_ms, trial_id, acted_ms}`` rows."""
    page.goto(f"{base}/projects/rt/studies/{name}/")
    page.wait_for_selector("#instructions:not([hidden])")
    page.keyboard.press("Enter")
    rows, last = [], None
    for i, delay in enumerate(delays):
        page.wait_for_function(NEW_TRIAL_SHOWN, arg=last, timeout=60_000)
        last = page.get_attribute("#trial", "data-shown")
        prepare(page, kind, i)
        acted = page.evaluate(ANSWER_AFTER, delay * 1000)
        rows.append({"kind": kind, "delay_ms": delay * 1000, "trial_id": int(last), "acted_ms": acted})
    page.wait_for_selector("#done:not([hidden])", timeout=60_000)
    return rows


def report(rows: list[dict], smoke: bool = False) -> tuple[bool, bool]:
    """Print the table and the summaries, and put each kind's median client error on record
    (``bench.lib.results``); returns (every trial answered and stored, every target met)."""
    from annotator.studies.models import Trial
    from annotator.studies.selectors import server_rt_ms

    trials = {t.pk: t for t in Trial.objects.filter(pk__in=[r["trial_id"] for r in rows])}
    print(
        f"\n{'kind':<12} {'trial':>5} {'delay ms':>9} {'client RT':>10} {'server RT':>10} {'client err':>11} "
        f"{'server err':>11}  problems"
    )
    for r in rows:
        t = trials[r["trial_id"]]
        r["client_ms"], r["server_ms"] = t.client_rt_ms, server_rt_ms(t)
        problems = []
        if t.answered_at is None:
            problems.append("not answered")
        if t.timed_out:
            problems.append("timed out")
        if t.response is None and t.answered_at is not None:
            problems.append("no response stored")
        r["problems"] = ", ".join(problems)
        client_err = None if r["client_ms"] is None else r["client_ms"] - r["delay_ms"]
        server_err = None if r["server_ms"] is None else r["server_ms"] - r["delay_ms"]
        r["client_err"], r["server_err"] = client_err, server_err
        fmt = lambda x, sign="": "-" if x is None else f"{x:{sign}.1f}"  # noqa: E731
        print(
            f"{r['kind']:<12} {r['trial_id']:>5} {r['delay_ms']:>9.0f} {fmt(r['client_ms']):>10} {fmt(r['server_ms']):>10} "
            f"{fmt(client_err, '+'):>11} {fmt(server_err, '+'):>11}  {r['problems']}"
        )

    def summary(label: str, rs: list[dict]) -> bool:
        client = [abs(r["client_err"]) for r in rs if r["client_err"] is not None]
        server = [abs(r["server_err"]) for r in rs if r["server_err"] is not None]
        median = statistics.median(client) if client else float("nan")
        within = sum(1 for e in server if e <= SERVER_WINDOW_MS)
        mean_server = (
            statistics.mean(r["server_err"] for r in rs if r["server_err"] is not None) if server else float("nan")
        )
        if client:
            record(
                "rt_fidelity.py",
                f"{label}: median |client RT - delay| over {len(rs)} trials",
                median,
                "ms",
                smoke=smoke,
            )
        ok = bool(client) and median < CLIENT_TARGET_MS and within == len(rs) and not any(r["problems"] for r in rs)
        print(
            f"{label:<12} n={len(rs):>3}  median |client err| {median:6.2f} ms (max {max(client, default=float('nan')):6.2f})"
            f"   server RT within {SERVER_WINDOW_MS:.0f} ms: {within}/{len(rs)} ({100.0 * within / len(rs):5.1f}%)"
            f"   mean server err {mean_server:+7.1f} ms   {'ok' if ok else 'MISSED'}"
        )
        return ok

    print(
        f"\nTargets: median |client RT - delay| under {CLIENT_TARGET_MS:.0f} ms; server RT (answered_at - shown_at) within "
        f"{SERVER_WINDOW_MS:.0f} ms of the delay"
    )
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    results = [summary(k, [r for r in rows if r["kind"] == k]) for k in kinds]
    overall = summary("overall", rows)
    return not any(r["problems"] for r in rows), all(results) and overall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=12, help="trials per kind")
    parser.add_argument("--delays", default="1.5,3,6", help="seconds, cycled over the trials")
    parser.add_argument("--kinds", default="ordering,mcq,open_answer,likert")
    parser.add_argument("--port", type=int, default=int(os.environ.get("BENCH_RT_PORT", "8766")))
    parser.add_argument("--smoke", action="store_true", help="a small case with checks (make test runs it)")
    args = parser.parse_args()
    if args.smoke:
        global DB, HOME
        args.trials, args.delays, args.kinds, args.port = 1, "0.5", "ordering,mcq,open_answer,likert", free_port()
        DB = os.environ.get("BENCH_RT_DB", f"{os.environ.get('POSTGRES_DB', 'annotator')}_bench_rt_smoke")
        HOME = REPO / ".local" / "bench-rt" / DB
    delays = [float(d) for d in args.delays.split(",")]
    kinds = args.kinds.split(",")
    if (
        args.trials < 1
        or not delays
        or min(delays) <= 0
        or not set(kinds) <= {"ordering", "mcq", "open_answer", "likert"}
    ):
        parser.error("--trials at least 1, --delays positive seconds, --kinds of ordering, mcq, open_answer, likert")

    _environment()
    for part in ("media", "work"):  # the collected static files stay (collectstatic copies what changed)
        shutil.rmtree(HOME / part, ignore_errors=True)
    (HOME / "work").mkdir(parents=True)
    print(
        f"rt_fidelity: database {DB} ({'kept, emptied' if args.smoke else 'fresh'}), media under "
        f"{HOME.relative_to(REPO)}",
        flush=True,
    )
    _kept_database() if args.smoke else _fresh_database()
    import django

    django.setup()
    names = build(args.trials, lambda line: print(line, flush=True), empty=args.smoke)
    from django.db import connection

    connection.close()  # the server has the database to itself while the participant takes part
    from playwright.sync_api import sync_playwright

    server = serve(args.port, workers=1 if args.smoke else 2)
    base = f"http://127.0.0.1:{args.port}"
    rows: list[dict] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1366, "height": 768})
            page = context.new_page()
            page.goto(f"{base}/accounts/login/")
            page.fill("#id_username", PARTICIPANT[0])
            page.fill("#id_password", PARTICIPANT[1])
            page.keyboard.press("Enter")
            page.wait_for_url(f"{base}/")
            for kind in kinds:
                plan = [delays[i % len(delays)] for i in range(args.trials)]
                print(
                    f"  taking {names[kind]}: {args.trials} trials, delays {', '.join(f'{d:g}' for d in delays)} s",
                    flush=True,
                )
                rows += take(page, base, names[kind], kind, plan)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    stored, met = report(rows, args.smoke)
    expected = args.trials * len(kinds)
    if len(rows) != expected:
        sys.exit(f"{len(rows)} trials taken, expected {expected} ({args.trials} of each of {len(kinds)} kinds)")
    if not stored or not (met or args.smoke):
        sys.exit(1)
    if args.smoke:
        print("smoke: ok")


if __name__ == "__main__":
    main()
