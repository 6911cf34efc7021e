"""Drafting benchmark (issue 10): N videos through every stage of the egonight pipeline against a
loopback model server that takes 500 ms per call, at server concurrency C, against the ideal.

    .venv/bin/python bench/drafting.py [--videos 8] [--concurrency 8] [--qa-types 12] [--delay 0.5]
                                       [--frames 6] [--profile] [--smoke]

Needs the local stack (``scripts/stack.sh start``, or ``make bench-drafting``).

1. A database of its own (``annotator_bench_drafting``, or ``BENCH_DRAFTING_DB``; created and
   migrated if missing, emptied at each run, so no answer comes from the cache), media under
   ``.local/bench-drafting/<database>/``, and a Redis database of its own for the servers'
   concurrency slots (``BENCH_DRAFTING_REDIS_DB``, default 14; the run's Celery message lands there
   too, unconsumed, and is purged at the end).
2. ``tests.fake_model_server.FakeModelServer(delay_s=--delay)``, in a process of its own: an
   OpenAI-compatible server on loopback answering every stage by its JSON Schema after ``--delay``
   seconds.
3. ``--videos`` real night clips made by ffmpeg (3 s of testsrc, each a little different), stored
   as ready videos (renditions), and the first ``--qa-types`` of EgoNight's 12 QA types (by slug;
   all 12 by default). Each clip is shorter than EgoNight's 3 s window, so every type drafts one
   clip per video: caption, questions and answer, 3 calls per type and video.
4. A model server of concurrency ``--concurrency`` and an egonight run over every video, started by
   ``annotator.drafts.runs.start`` and worked in this process by ``runs.execute``, the body of the
   ``drafts.run`` task (a worker runs the same code).

Prints: calls (requests the server answered, and those stored), calls/s, wall time, the ideal time
(calls x delay / C) and their ratio (target: within 1.2x), the most requests in flight at once
(never more than C), and per-stage mean latency. Exits 1 when a video is not drafted, the server
answered another number of calls than videos x QA types x 3 (a call stored for each), or more than
C were in flight at once. ``--profile`` adds where the wall time went: time the server's slots
were busy with requests, and per thread the seconds spent sampling frames, waiting for a slot, in
the HTTP call and elsewhere (database writes, parsing).

``--smoke``: 2 videos, 2 QA types, concurrency 2, 50 ms a call, 2 frames a clip, with ``--profile``,
in ``<POSTGRES_DB>_bench_drafting_smoke`` (migrated on its first run, so that run is slower) and
Redis database ``TEST_REDIS_DB`` + 1 (default 3: the tests' result backend, not their broker, where
a test session's Celery worker would take the run's message); prints ``smoke: ok`` (``make test``
runs it: tests/drafts/test_bench_drafting.py). Its ratio misses the target by design (the clips'
frame sampling outweighs 50 ms calls).

Note: a video's stages are sequential (each needs the one before), so a run can keep C requests in
flight only with at least C videos; with fewer videos than C the ideal is out of reach by design.
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
import multiprocessing  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402

from bench.lib.results import record  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DB = os.environ.get("BENCH_DRAFTING_DB", "annotator_bench_drafting")
HOME = REPO / ".local" / "bench-drafting" / DB
REDIS_DB = int(os.environ.get("BENCH_DRAFTING_REDIS_DB", "14"))
STAGES_PER_TYPE = 3  # caption, questions, answer
PG = dict(
    host=os.environ.get("POSTGRES_HOST", "127.0.0.1"),
    port=int(os.environ.get("POSTGRES_PORT", "54329")),
    user=os.environ.get("POSTGRES_USER", "annotator"),
)
TARGET = 1.2
JOB = "a video's job, in all"
CLIP_S = 3.0


def _serve(delay_s: float, conn) -> None:
    """(Child process.) Run the loopback model server; send its base URL, then, when asked, its
    counts: requests answered, the most in flight at once, and the stage of each request."""
    from tests.fake_model_server import FakeModelServer

    server = FakeModelServer(delay_s=delay_s)  # its handler sets TCP_NODELAY, as production servers do
    conn.send(server.base_url)
    conn.recv()  # "stats"
    conn.send({"requests": len(server.requests), "max_in_flight": server.max_in_flight, "stages": server.stages})
    server.close()


def _environment() -> None:
    """Settings for this process (read by ``annotator.settings``): the bench's database, media and
    Redis database."""
    port = os.environ.get("REDIS_PORT", "63799")
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "annotator.settings",
            "POSTGRES_DB": DB,
            "LOG_LEVEL": "WARNING",
            "MEDIA_ROOT": str(HOME / "media"),
            "MEDIA_WORK_DIR": str(HOME / "work"),
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/{REDIS_DB}",
            "CELERY_RESULT_BACKEND": f"redis://127.0.0.1:{port}/{REDIS_DB}",
        }
    )
    sys.path.insert(0, str(REPO))


def _database() -> None:
    import psycopg

    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as conn:
        if not conn.execute("select 1 from pg_database where datname = %s", [DB]).fetchone():
            conn.execute(f'create database "{DB}"')


def _clip(path: Path, i: int) -> bytes:
    """A 3 s night clip (testsrc at 320x240, 25 fps), different for each ``i``."""
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"testsrc=size=320x240:rate=25:duration={CLIP_S}",
            "-vf",
            f"hue=h={(i * 37) % 360}",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            str(path),
        ],
        check=True,
    )
    return path.read_bytes()


def build(n_videos: int, n_types: int, concurrency: int, base_url: str):
    """A fresh project with ``n_videos`` ready night videos, the first ``n_types`` EgoNight QA types and
    a model server at ``base_url`` of ``concurrency``. Returns the project."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from django.db import connection

    from annotator.inference.models import ModelServer
    from annotator.media.models import Video
    from annotator.projects.models import Project
    from annotator.qa.models import QAType
    from annotator.qa.services import apply_preset

    with connection.cursor() as cursor:  # earlier runs' rows (this database is the bench's alone)
        cursor.execute(f"truncate {Project._meta.db_table}, inference_modelcall, core_job cascade")
    project = Project.objects.create(slug=f"bench-drafting-{int(time.time())}", name="Drafting benchmark")
    apply_preset(project, "egonight")
    keep = list(QAType.objects.filter(project=project).order_by("slug").values_list("slug", flat=True)[:n_types])
    QAType.objects.filter(project=project).exclude(slug__in=keep).delete()
    for i in range(n_videos):
        data = _clip(HOME / "work" / f"night{i}.mp4", i)
        sha = hashlib.sha256(data).hexdigest()
        name = default_storage.save(f"renditions/{sha[:16]}/night{i}.mp4", ContentFile(data))
        Video.objects.create(
            project=project,
            sha256=sha,
            filename=f"night{i}.mp4",
            status=Video.Status.READY,
            duration_s=CLIP_S,
            fps=25.0,
            width=320,
            height=240,
            rendition=name,
            original=name,
            illumination="night",
            domain="bench",
        )
    ModelServer.objects.create(
        project=project, name="loopback", base_url=base_url, model="fake-vlm", concurrency=concurrency, timeout_s=60
    )
    return project, keep


# ------------------------------------------------------------------------------ profiling


class Profile:
    """Seconds per thread spent in the parts of a call, summed over threads (``--profile``)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seconds: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self.local = threading.local()

    @contextmanager
    def timed(self, what: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            with self.lock:
                self.seconds[what] += time.perf_counter() - start
                self.counts[what] += 1

    def wrap(self, module, name: str, what: str):
        original = getattr(module, name)
        profile = self

        def wrapped(*args, **kwargs):
            with profile.timed(what):
                return original(*args, **kwargs)

        setattr(module, name, wrapped)

    def wrap_slots(self, engine):
        """Time spent waiting for a slot (``ServerSlots.hold`` up to its yield)."""
        original = engine.ServerSlots.hold
        profile = self

        @contextmanager
        def hold(slots, cancelled=lambda: False):
            start = time.perf_counter()
            with original(slots, cancelled):
                with profile.lock:
                    profile.seconds["waiting for a slot"] += time.perf_counter() - start
                    profile.counts["waiting for a slot"] += 1
                yield

        engine.ServerSlots.hold = hold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=int, default=8, help="videos drafted (default 8)")
    parser.add_argument("--concurrency", type=int, default=8, help="the model server's concurrency C (default 8)")
    parser.add_argument("--qa-types", type=int, default=12, help="EgoNight QA types drafted, 1-12 (default all 12)")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the loopback server takes per call (0.5)")
    parser.add_argument("--frames", type=int, default=6, help="frames sampled per clip (default 6, LLM_FRAMES)")
    parser.add_argument("--profile", action="store_true", help="where the wall time went")
    parser.add_argument("--smoke", action="store_true", help="a small case with checks (make test runs it)")
    args = parser.parse_args()
    if not 1 <= args.qa_types <= 12 or args.videos < 1 or args.concurrency < 1:
        parser.error("--qa-types is 1 to 12; --videos and --concurrency at least 1")
    if args.smoke:
        global DB, HOME, REDIS_DB
        args.videos, args.qa_types, args.concurrency, args.delay, args.frames, args.profile = 2, 2, 2, 0.05, 2, True
        DB = os.environ.get("BENCH_DRAFTING_DB", f"{os.environ.get('POSTGRES_DB', 'annotator')}_bench_drafting_smoke")
        HOME = REPO / ".local" / "bench-drafting" / DB
        REDIS_DB = int(os.environ.get("BENCH_DRAFTING_REDIS_DB", int(os.environ.get("TEST_REDIS_DB", "2")) + 1))

    _environment()
    shutil.rmtree(HOME, ignore_errors=True)
    (HOME / "work").mkdir(parents=True)
    _database()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from annotator.adapters import ffmpeg, llm
    from annotator.drafts import runs
    from annotator.drafts.models import DraftRun
    from annotator.inference import engine
    from annotator.inference.models import ModelCall
    from workers.celery import app

    # The model server in a process of its own, as a real one would be: in this process its threads
    # would compete with the run's for the interpreter lock and add their time to every call.
    ours, theirs = multiprocessing.Pipe()
    child = multiprocessing.get_context("spawn").Process(target=_serve, args=(args.delay, theirs), daemon=True)
    child.start()
    base_url = ours.recv()
    stats = None
    try:
        project, types = build(args.videos, args.qa_types, args.concurrency, base_url)
        print(
            f"drafting: {args.videos} videos of {CLIP_S:g} s, {len(types)} QA types, egonight (caption, questions, "
            f"answer), server concurrency {args.concurrency}, {args.delay * 1000:.0f} ms per call, "
            f"{args.frames} frames a clip; database {DB}; {os.cpu_count()} CPUs, load average "
            f"{os.getloadavg()[0]:.1f} before the run",
            flush=True,
        )
        profile = None
        if args.profile:
            profile = Profile()
            profile.wrap(runs.ENGINE, "_work_one", JOB)  # one video, claim to save (the run engine)
            profile.wrap(ffmpeg, "sample_frames", "sampling frames (ffmpeg)")
            profile.wrap(llm, "chat", "HTTP call (holding a slot)")
            profile.wrap(llm.openai, "OpenAI", "  making the client")
            profile.wrap(engine, "parse_reply", "validating answers")
            profile.wrap(ModelCall, "save", "storing calls")
            profile.wrap_slots(engine)
        launch = runs.start(project, "egonight", server="loopback", params={"frames": args.frames})
        started = time.perf_counter()
        outcome = runs.execute(launch.run.pk)
        wall = time.perf_counter() - started
        run = DraftRun.objects.get(pk=launch.run.pk)
        report = runs.progress(run)
        ours.send("stats")
        stats = ours.recv()
    finally:
        child.terminate()
        app.control.purge()  # the run's message, which no worker here consumes

    calls = stats["requests"]
    stored = ModelCall.objects.filter(job__run=run, cached_from__isnull=True).count()
    ideal = calls * args.delay / args.concurrency
    ratio = wall / ideal if ideal else float("nan")
    v = report["videos"]
    print(
        f"  run {run.pk}: {outcome}, {v['done']} of {v['total']} videos done, {v['failed']} failed, "
        f"{report['drafts']} drafts"
    )
    print(
        f"  calls             {calls} ({stored} stored; "
        + ", ".join(f"{s} {c['calls']}" for s, c in report["calls"].items())
        + ")"
    )
    print(f"  most in flight    {stats['max_in_flight']} (limit {args.concurrency})")
    print(f"  wall time         {wall:.2f} s")
    print(f"  calls/s           {calls / wall:.2f} (ideal {args.concurrency / args.delay:.2f})")
    print(f"  ideal time        {ideal:.2f} s (calls x {args.delay:g} s / {args.concurrency})")
    print(f"  ratio             {ratio:.3f} (target <= {TARGET}: {'met' if ratio <= TARGET else 'MISSED'})")
    what = f"{calls} model calls of {args.delay:g} s at concurrency {args.concurrency}"
    record("drafting.py", f"{what}: calls/s", calls / wall, "/s", smoke=args.smoke)
    record("drafting.py", f"{what}: wall time / ideal time", ratio, "x", smoke=args.smoke)
    print("  mean latency      " + ", ".join(f"{s} {c['latency_ms_mean']} ms" for s, c in report["calls"].items()))
    if profile is not None:
        busy = profile.seconds["HTTP call (holding a slot)"]
        print(
            f"  profile: slots busy {busy:.1f} of {args.concurrency} x {wall:.1f} = {args.concurrency * wall:.1f} "
            f"slot-seconds ({busy / (args.concurrency * wall):.1%}); thread-seconds by part (count):"
        )
        parts = (
            "sampling frames (ffmpeg)",
            "waiting for a slot",
            "HTTP call (holding a slot)",
            "  making the client",
            "validating answers",
            "storing calls",
        )
        for what in (JOB, *parts):
            print(f"    {what:28s} {profile.seconds[what]:8.2f} s  ({profile.counts[what]})")
        known = sum(profile.seconds[w] for w in parts if not w.startswith(" "))  # "making the client" is in the call
        print(
            f"    {'elsewhere':28s} {profile.seconds[JOB] - known:8.2f} s  (waiting for a frame sampler, cache look-ups, "
            "the job's other queries, building requests, saving drafts)"
        )
    if v["done"] != v["total"]:
        sys.exit(f"not every video was drafted: {report['failures'][:3]}")
    expected = args.videos * len(types) * STAGES_PER_TYPE
    if not calls == stored == expected or stats["max_in_flight"] > args.concurrency:
        sys.exit(
            f"expected {expected} calls ({args.videos} videos x {len(types)} QA types x {STAGES_PER_TYPE} stages), "
            f"each stored, at most {args.concurrency} in flight; got {calls} answered, {stored} stored, "
            f"{stats['max_in_flight']} in flight"
        )
    if args.smoke:
        print("smoke: ok")


if __name__ == "__main__":
    main()
