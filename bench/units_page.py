"""The units list for admins at scale (issue 20, section 7: "paging at 1M units"): how long each
page of ``/projects/<slug>/units/`` takes to render with every filter, on a database filled by SQL.

    .venv/bin/python bench/units_page.py [--units 1000000] [--repeats 10] [--smoke]

Needs the local stack (``scripts/stack.sh start``). A database of its own
(``<POSTGRES_DB>_bench_units``, ``_smoke`` added for ``--smoke``), migrated on first use and filled
afresh by SQL when the unit count differs from the last fill: ``--units`` work units over one video
per 1,000 units, one machine QA pair each (two QA types alternating, 1 in 100 model-flagged), one
first-pass queue item each, the first 30% done by 20 annotators in turn. The admin's pages are
rendered in this process through Django's test client (the view, its queries and the template;
no HTTP): the first page, the page 100 pages deep (by its keyset cursor; 20 in the smoke run), and the first page of
each filter (status, pass, annotator, QA type, video, flagged). Printed per page: rows shown, p50
and p95 of ``--repeats`` renders (ms). ``--smoke``: 2,000 units, 3 repeats (``make test`` runs it:
tests/console/test_bench_units_page.py). Exits 1 when a page does not answer 200 or shows no row.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))  # the repository: bench.lib.results

import argparse  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from bench.lib.results import record  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
MAX_UNITS, MAX_REPEATS = 5_000_000, 100
ANNOTATORS = 20


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank quantile ``q`` (0-1) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered) + 0.5)) - 1))]


def _ensure_database(db: str) -> None:
    import psycopg

    pg = dict(
        host=os.environ.get("POSTGRES_HOST", "127.0.0.1"),
        port=int(os.environ.get("POSTGRES_PORT", "54329")),
        user=os.environ.get("POSTGRES_USER", "annotator"),
    )
    with psycopg.connect(**pg, dbname="postgres", autocommit=True) as conn:
        if not conn.execute("select 1 from pg_database where datname = %s", [db]).fetchone():
            conn.execute(f'create database "{db}"')


def fill(n_units: int, progress) -> None:
    """Empty the queue's tables and fill them by SQL (see the module's docstring), unless they hold
    exactly this fill already."""
    from django.db import connection

    from annotator.media.models import Video
    from annotator.projects.services import ensure_member, ensure_project
    from annotator.qa.models import QAPair, QueueItem, WorkUnit
    from annotator.qa.services import ensure_qa_type

    project = ensure_project("bench-units", "Units list benchmark")
    if (
        n_units
        == WorkUnit.objects.filter(project=project).count()
        == QueueItem.objects.filter(project=project, kind="first_pass").count()
        == QAPair.objects.filter(project=project).count()
    ):
        progress(f"  {n_units:,} units there already")
        return
    t0 = time.monotonic()
    with connection.cursor() as c:
        c.execute(
            "truncate qa_autosave, qa_skip, qa_verdict, qa_revision, qa_submission, qa_qapair, qa_queueitem, "
            "qa_workunit, qa_qatype, media_videogroupmember, media_videogroup, media_video cascade"
        )
    people = [ensure_member(f"units{i}", role="annotator", project=project)[0].pk for i in range(ANNOTATORS)]
    types = [ensure_qa_type(project, "object_recognition").pk, ensure_qa_type(project, "scene_description").pk]
    n_videos = max(1, n_units // 1000)
    videos = Video.objects.bulk_create(
        [
            Video(
                project=project,
                sha256=f"{i:064x}",
                filename=f"walk-{i}.mp4",
                status=Video.Status.READY,
                duration_s=600.0,
                fps=25.0,
                width=640,
                height=360,
            )
            for i in range(1, n_videos + 1)
        ]
    )
    first_video = min(v.pk for v in videos)
    from bench.lib.fill import insert_select

    ours = {"project": project.pk}
    with connection.cursor() as c:
        # Through the schema (bench.lib.fill): every column the bench does not name gets the model's default.
        insert_select(
            c,
            WorkUnit,
            {
                "project_id": "%(project)s",
                "video_id": "%(first_video)s + (g - 1) / 1000",
                "start_s": "((g - 1) %% 1000) * 0.5",
                "end_s": "((g - 1) %% 1000) * 0.5 + 10",
            },
            "generate_series(1, %(n)s) g",
            {**ours, "first_video": first_video, "n": n_units},
        )
        insert_select(
            c,
            QAPair,
            {
                "project_id": "project_id",
                "unit_id": "id",
                "video_id": "video_id",
                "qa_type_id": "case when id %% 2 = 0 then %(type0)s else %(type1)s end",
                "origin": "'machine'",
                "question": "'What is on the table?'",
                "answer": "'a cup'",
                "clip_start_s": "start_s",
                "clip_end_s": "end_s",
                "flag_reason": "case when id %% 100 = 0 then 'answer unclear' else '' end",
                "flag_source": "case when id %% 100 = 0 then 'reviewer-vlm' else '' end",
            },
            "qa_workunit where project_id = %(project)s",
            {**ours, "type0": types[0], "type1": types[1]},
        )
        insert_select(
            c,
            QueueItem,
            {"project_id": "project_id", "unit_id": "id"},
            "qa_workunit where project_id = %(project)s",
            ours,
        )
        c.execute(
            "with ranked as (select id, row_number() over (order by id) as n from qa_queueitem "
            "where project_id = %s) "
            "update qa_queueitem q set status = 'done', completed_at = now(), time_spent_ms = 60000, "
            "completed_by_id = (%s::bigint[])[1 + (r.n %% %s)] from ranked r "
            "where q.id = r.id and r.n <= %s",
            [project.pk, people, ANNOTATORS, int(n_units * 0.3)],
        )
        c.execute("analyze")
    progress(
        f"  filled {n_units:,} units, {n_videos:,} videos, {ANNOTATORS} annotators in {time.monotonic() - t0:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=1_000_000, help=f"work units (1,000-{MAX_UNITS:,})")
    parser.add_argument("--repeats", type=int, default=10, help=f"renders per page (1-{MAX_REPEATS})")
    parser.add_argument("--smoke", action="store_true", help="2,000 units, 3 repeats")
    args = parser.parse_args()
    if args.smoke:
        args.units, args.repeats = 2_000, 3
    if not 1_000 <= args.units <= MAX_UNITS or not 1 <= args.repeats <= MAX_REPEATS:
        raise SystemExit(f"--units is 1,000 to {MAX_UNITS:,} and --repeats 1 to {MAX_REPEATS}")
    db = f"{os.environ.get('POSTGRES_DB', 'annotator')}_bench_units" + ("_smoke" if args.smoke else "")
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "annotator.settings",
            "POSTGRES_DB": db,
            "LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
        }
    )
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-units-not-secret-" + "x" * 40)
    os.environ.setdefault("PSEUDONYM_KEY", "bench-units-not-secret-" + "y" * 40)
    sys.path.insert(0, str(REPO))
    _ensure_database(db)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from annotator.projects.services import ensure_member, ensure_project
    from annotator.qa.models import QueueItem

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    print(f"units page: database {db}", flush=True)
    call_command("migrate", verbosity=0)
    fill(args.units, lambda line: print(line, flush=True))
    project = ensure_project("bench-units", "Units list benchmark")
    admin = ensure_member("units-admin", role="admin", project=project)[0]
    client = Client()
    client.force_login(admin)
    depth = min(100, args.units // 100)  # pages: 100 at a million units, 20 in the smoke run
    deep = QueueItem.objects.filter(project=project).order_by("-id").values_list("id", flat=True)[depth * 50 - 1]
    some_video = f"walk-{max(1, args.units // 2000)}.mp4"
    pages = [
        ("first page", ""),
        (f"{depth} pages deep", f"before={deep}"),
        ("status=done", "status=done"),
        ("pass=first_pass", "kind=first_pass"),
        ("annotator", "annotator=units7"),
        ("qa_type", "qa_type=scene_description"),
        ("video", f"video={some_video}"),
        ("flagged", "flagged=yes"),
        ("flagged + done", "flagged=yes&status=done"),
    ]
    print(f"\n{'page':<16} {'rows':>5} {'p50 ms':>8} {'p95 ms':>8}")
    client.get("/projects/bench-units/units/")  # warm: templates compiled, connection open
    failed = False
    for name, query in pages:
        times, rows = [], 0
        for _ in range(args.repeats):
            started = time.perf_counter()
            res = client.get("/projects/bench-units/units/" + ("?" + query if query else ""))
            times.append((time.perf_counter() - started) * 1000.0)
            rows = len(re.findall(rb'<tr data-item="', res.content))
            if res.status_code != 200 or rows == 0:
                failed = True
                print(f"{name}: {res.status_code}, {rows} rows")
                break
        print(f"{name:<16} {rows:>5} {percentile(times, 0.5):>8.1f} {percentile(times, 0.95):>8.1f}", flush=True)
        if not failed:
            record(
                "units_page.py",
                f"units page at {args.units:,} units, {name}: p95",
                percentile(times, 0.95),
                "ms",
                smoke=args.smoke,
            )
    print(f"\nresult: {'FAILED' if failed else 'ok'} ({args.units:,} units)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
