"""Export benchmark (issue 11): 1M verified QA pairs exported in under 60 s with memory flat.

    .venv/bin/python bench/export.py [--sizes 100000,1000000] [--formats jsonl,parquet] [--repeats 1] [--smoke]

Needs the local stack (``scripts/stack.sh start``, or ``make bench-export``).

1. **Seed**, once per size, in a scratch database of its own (``annotator_bench_export``, created
   and migrated if missing; ``BENCH_EXPORT_DB`` overrides): a project ``bench-export-<size>`` with
   1,000 videos (750 day, 250 night, the night ones paired with a day one, with the night recipe's
   mixed-type metadata), a draft run with a job per video, 1,250 units (one per video, one per
   pair) and ``size`` verified QA pairs: 60% open-ended, 20% multiple choice (4 options), 10% paired
   multiple choice and 10% paired open-ended, each from a machine draft, with one verifying revision
   by one of 5 annotators and a second (a double-check) on every fifth. The big tables are filled
   by ``INSERT ... SELECT generate_series`` in one statement each; a project already holding
   ``size`` pairs is kept.
2. **Export**, per size and format, in a child process (``manage.py export_qa`` does the same):
   ``annotator.qa.exports.export`` to a file under ``.local/bench-export/<database>/``; the child
   prints the rows, seconds, its peak RSS (``ru_maxrss``) and its RSS before the export (Django and
   the libraries loaded), so "memory flat" reads as the same peak at 100k and 1M; then reads the
   file back: its rows and their distinct QA pair ids (both equal to the rows exported when the
   keyset pages lose and repeat nothing).

Prints one line per (size, format): rows, seconds, rows/s, peak RSS, RSS growth during the export,
the file's size, and the rows and distinct ids read back from it. Exits 1 when a file holds other
rows than the QA pairs seeded. Target: 1,000,000 rows in under 60 s, peak RSS the same at 100k and 1M.

``--smoke``: 12,000 QA pairs (three keyset pages of 5,000: ``CHUNK_ROWS``) in
``<POSTGRES_DB>_bench_export_smoke`` (migrated and seeded on its first run, so that run is slower),
both formats written in the bench's own process, not a child (Django starts once; the peaks
include the seeding's and the first format's), then ``smoke: ok`` (``make test`` runs it: tests/qa/test_bench_export.py).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# bench/ holds queue.py, which would shadow the standard library's ``queue`` (psycopg imports it):
# drop this folder (sys.path[0] when run as a script) and put the repository first.
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

from bench.lib.results import record  # noqa: E402

DB = os.environ.get("BENCH_EXPORT_DB", "annotator_bench_export")
N_VIDEOS, N_NIGHT, N_ANNOTATORS = 1000, 250, 5
SMOKE_SIZE = 12_000


def out_dir() -> Path:
    """Where the exports are written: one folder per database (two runs at once write apart)."""
    return REPO / ".local" / "bench-export" / DB


def setup_django() -> None:
    """Django on the scratch database, created if missing and migrated."""
    import psycopg

    pg = dict(
        host=os.environ.get("POSTGRES_HOST", "127.0.0.1"),
        port=int(os.environ.get("POSTGRES_PORT", "54329")),
        user=os.environ.get("POSTGRES_USER", "annotator"),
    )
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


def seed(size: int) -> str:
    """The project ``bench-export-<size>`` with ``size`` verified QA pairs (see the module docstring);
    returns its slug. Kept when it already holds ``size``."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from annotator.drafts.models import DraftJob, DraftRun
    from annotator.media.models import Video, VideoGroup, VideoGroupMember
    from annotator.projects.services import ensure_project
    from annotator.qa.models import QAPair, QAType, WorkUnit

    slug = f"bench-export-{size}"
    project = ensure_project(slug)
    if QAPair.objects.filter(project=project, status="verified").count() == size:
        return slug
    started = time.perf_counter()
    with transaction.atomic():
        with connection.cursor() as c:  # a half-made earlier seed goes first (revisions refuse DELETE but here)
            c.execute("alter table qa_revision disable trigger qa_revision_append_only")
            c.execute(
                "delete from qa_revision r using qa_qapair q where q.id = r.qa_pair_id and q.project_id = %s",
                [project.pk],
            )
            c.execute("alter table qa_revision enable trigger qa_revision_append_only")
        for model in (QAPair, WorkUnit, VideoGroupMember, VideoGroup):
            model.objects.filter(
                **({"group__project": project} if model is VideoGroupMember else {"project": project})
            ).delete()
        DraftRun.objects.filter(project=project).delete()
        Video.objects.filter(project=project).delete()
        QAType.objects.filter(project=project).delete()
        User = get_user_model()
        users = [User.objects.get_or_create(username=f"bench-export-{i}")[0] for i in range(N_ANNOTATORS)]
        types = {
            slug_: QAType.objects.create(project=project, slug=slug_, name=slug_, paired=paired)
            for slug_, paired in (
                ("scene_description", False),
                ("object_recognition", False),
                ("spatial_reasoning", True),
            )
        }
        recipe = [["eq", {"brightness": -0.3, "gamma": 0.8}], ["noise", {"alls": 12}], "tmix"]
        videos = Video.objects.bulk_create(
            [
                Video(
                    project=project,
                    sha256=f"{size:08x}{i:056x}",
                    filename=f"clip{i:04d}.mp4",
                    original=f"originals/clip{i:04d}.mp4",
                    status="ready",
                    duration_s=60.0,
                    fps=30.0,
                    width=1280,
                    height=720,
                    illumination="night" if i >= N_VIDEOS - N_NIGHT else "day",
                    domain="kitchen",
                    source="synthetic" if i >= N_VIDEOS - N_NIGHT else "real",
                    extra={"night_recipe": recipe} if i >= N_VIDEOS - N_NIGHT else {"camera": "gopro"},
                )
                for i in range(N_VIDEOS)
            ]
        )
        groups = VideoGroup.objects.bulk_create(
            [VideoGroup(project=project, kind="day_night", name=f"pair {i}") for i in range(N_NIGHT)]
        )
        VideoGroupMember.objects.bulk_create(
            [VideoGroupMember(group=g, video=videos[i], role="day") for i, g in enumerate(groups)]
            + [
                VideoGroupMember(group=g, video=videos[N_VIDEOS - N_NIGHT + i], role="night", offset_s=0.5)
                for i, g in enumerate(groups)
            ]
        )
        run = DraftRun.objects.create(project=project, pipeline="templates", prompt_version="templates-v1")
        jobs = DraftJob.objects.bulk_create([DraftJob(run=run, video=v) for v in videos])
        units = WorkUnit.objects.bulk_create([WorkUnit(project=project, video=v, start_s=0, end_s=60) for v in videos])
        paired = WorkUnit.objects.bulk_create(
            [WorkUnit(project=project, video=videos[i], group=g, start_s=0, end_s=60) for i, g in enumerate(groups)]
        )
        params = {
            "n": size,
            "jobs": [j.pk for j in jobs],
            "units": [u.pk for u in units],
            "unit_videos": [u.video_id for u in units],
            "paired": [u.pk for u in paired],
            "paired_videos": [u.video_id for u in paired],
            "project": project.pk,
            "open": types["scene_description"].pk,
            "mc": types["object_recognition"].pk,
            "pt": types["spatial_reasoning"].pk,
            "users": [u.pk for u in users],
            "run": run.pk,
        }
        from annotator.drafts.models import Draft
        from annotator.qa.models import QAPair, Revision
        from bench.lib.fill import insert_select

        with connection.cursor() as c:
            # Through the schema (bench.lib.fill): every column not named here gets the model's default.
            # One draft per QA pair; g % 10 picks the kind: 0-5 open, 6-7 multiple choice, 8 paired MC, 9 paired open.
            insert_select(
                c,
                Draft,
                {
                    "job_id": "(%(jobs)s::bigint[])[g %% 1000 + 1]",
                    "qa_type": "case when g %% 10 < 6 then 'scene_description' when g %% 10 < 8 "
                    "then 'object_recognition' else 'spatial_reasoning' end",
                    "question": "'What happens in part ' || g || ' of the clip?'",
                    "answer": "'Someone pours water into a glass ' || g",
                    "options": 'case when g %% 10 in (6, 7, 8) then \'["pan", "cup", "lamp", "shoe"]\'::jsonb end',
                    "answer_index": "case when g %% 10 in (6, 7, 8) then 1 end",
                    "clip_start_s": "(g %% 57)::float",
                    "clip_end_s": "(g %% 57 + 3)::float",
                    "source_key": "'k' || g",
                },
                "generate_series(1, %(n)s) g",
                params,
            )
            insert_select(
                c,
                QAPair,
                {
                    "project_id": "%(project)s",
                    "unit_id": "case when x.k < 8 then (%(units)s::bigint[])[x.g %% 1000 + 1] "
                    "else (%(paired)s::bigint[])[x.g %% 250 + 1] end",
                    "video_id": "case when x.k < 8 then (%(unit_videos)s::bigint[])[x.g %% 1000 + 1] "
                    "else (%(paired_videos)s::bigint[])[x.g %% 250 + 1] end",
                    "qa_type_id": "case when x.k < 6 then %(open)s when x.k < 8 then %(mc)s else %(pt)s end",
                    "draft_id": "x.id",
                    "origin": "'machine'",
                    "question": "x.question",
                    "answer": "case when x.k in (6, 7, 8) then 'cup' else x.answer end",
                    "options": "x.options",
                    "answer_index": "x.answer_index",
                    "clip_start_s": "x.clip_start_s",
                    "clip_end_s": "x.clip_end_s",
                    "status": "'verified'",
                    "provenance": "case when x.g %% 7 = 0 then 'machine_modified' else 'machine_kept' end",
                    "version": "2",
                    "verified_at": "now()",
                },
                "(select d.*, substr(d.source_key, 2)::int as g, substr(d.source_key, 2)::int %% 10 as k "
                "from drafts_draft d join drafts_draftjob j on j.id = d.job_id where j.run_id = %(run)s) x order by x.id",
                params,
            )
            keep = {"qa_pair_id": "q.id", "action": "'keep'", "after": "'{}'::jsonb", "version": "2"}
            insert_select(
                c,
                Revision,
                {**keep, "actor_user_id": "(%(users)s::int[])[q.id %% 5 + 1]"},
                "qa_qapair q where q.project_id = %(project)s",
                params,
            )
            insert_select(
                c,
                Revision,
                {**keep, "actor_user_id": "(%(users)s::int[])[(q.id + 1) %% 5 + 1]"},
                "qa_qapair q where q.project_id = %(project)s and q.id %% 5 = 0",
                params,
            )
    with connection.cursor() as c:
        c.execute("vacuum analyze qa_qapair, qa_revision, drafts_draft")
    print(f"seeded {size:,} QA pairs in {time.perf_counter() - started:.1f} s", flush=True)
    return slug


def read_back(path: Path, fmt: str) -> tuple[int, int]:
    """(rows, distinct ``id`` values) in the written file ``path`` (JSONL or Parquet)."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        ids = pq.read_table(path, columns=["id"]).column("id").to_pylist()
    else:
        import orjson

        with path.open("rb") as f:
            ids = [orjson.loads(line)["id"] for line in f]
    return len(ids), len(set(ids))


def export_formats(slug: str, formats: list[str]):
    """Export project ``slug`` in each of ``formats``, one after the other; yield per format a dict of
    rows, seconds, RSS before and peak (MB), the file's bytes, and its rows and distinct ids read back."""
    import pyarrow  # noqa: F401  (loaded before the baseline, as the exporter loads it for parquet)

    from annotator.projects.models import Project
    from annotator.qa import exports

    project = Project.objects.get(slug=slug)
    for fmt in formats:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out_dir().mkdir(parents=True, exist_ok=True)
        out = out_dir() / f"{slug}.{'parquet' if fmt == 'parquet' else 'jsonl'}"
        started = time.perf_counter()
        result = exports.export(project, fmt, out)
        out = result.files[0]  # Parquet is written under data/ (the Hub layout)
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rows, ids = read_back(out, fmt)  # after the peak: reading back is not the export's memory
        yield {
            "format": fmt,
            "rows": result.rows,
            "seconds": seconds,
            "rss_before_mb": before / 1024,
            "peak_mb": peak / 1024,
            "bytes": out.stat().st_size,
            "file_rows": rows,
            "file_ids": ids,
        }
        out.unlink()


def child(slug: str, formats: str) -> None:
    """(Child process.) ``export_formats`` of ``formats`` (comma-separated), each as a line of JSON."""
    setup_django()
    for run in export_formats(slug, formats.split(",")):
        print(json.dumps(run), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--formats", default="jsonl,parquet")
    parser.add_argument("--repeats", type=int, default=1, help="runs per (size, format); the median is shown")
    parser.add_argument("--smoke", action="store_true", help="a small case with checks (make test runs it)")
    parser.add_argument("--child", nargs=2, metavar=("SLUG", "FORMATS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    global DB
    if args.smoke:
        args.sizes, args.formats, args.repeats = str(SMOKE_SIZE), "jsonl,parquet", 1
        DB = os.environ.get("BENCH_EXPORT_DB", f"{os.environ.get('POSTGRES_DB', 'annotator')}_bench_export_smoke")
    formats = args.formats.split(",")
    if not set(formats) <= {"jsonl", "parquet"} or args.repeats < 1:
        parser.error("--formats is jsonl, parquet or both; --repeats at least 1")
    setup_django()  # sets POSTGRES_DB to DB: the children inherit it
    sizes = [int(s) for s in args.sizes.split(",")]
    slugs = {size: seed(size) for size in sizes}
    print(
        f"{'rows':>10} {'format':>8} {'seconds':>8} {'rows/s':>9} {'peak RSS':>9} {'growth':>8} {'file':>9} "
        f"{'read back':>10} {'distinct ids':>13}"
    )
    # One child per (size, format, repeat): each peak is that export's alone. The smoke run exports in this
    # process (Django starts once: several seconds on 2 busy cores), so its peaks include the seeding's.
    batches = [formats] if args.smoke else [[fmt] for fmt in formats]
    lost = []
    for size in sizes:
        for batch in batches:
            runs = []
            for _ in range(args.repeats):
                if args.smoke:
                    runs.append(list(export_formats(slugs[size], batch)))
                    continue
                done = subprocess.run(
                    [sys.executable, __file__, "--child", slugs[size], ",".join(batch)],
                    capture_output=True,
                    text=True,
                    cwd=REPO,
                    check=False,
                    env={**os.environ, "PYTHONPATH": str(REPO), "BENCH_EXPORT_DB": DB},
                )
                if done.returncode != 0:
                    sys.exit(done.stderr[-3000:])
                runs.append([json.loads(line) for line in done.stdout.strip().splitlines()[-len(batch) :]])
            for i, fmt in enumerate(batch):
                run = sorted((r[i] for r in runs), key=lambda r: r["seconds"])[len(runs) // 2]
                print(
                    f"{run['rows']:>10,} {fmt:>8} {run['seconds']:>8.1f} {run['rows'] / run['seconds']:>9,.0f} "
                    f"{run['peak_mb']:>7.0f}MB {run['peak_mb'] - run['rss_before_mb']:>6.0f}MB "
                    f"{run['bytes'] / 2**20:>7.1f}MB {run['file_rows']:>10,} {run['file_ids']:>13,}",
                    flush=True,
                )
                record("export.py", f"{fmt} export of {run['rows']:,} QA pairs", run["seconds"], "s", smoke=args.smoke)
                record(
                    "export.py",
                    f"{fmt} export of {run['rows']:,} QA pairs, peak resident memory",
                    run["peak_mb"],
                    "MB",
                    smoke=args.smoke,
                )
                if not size == run["rows"] == run["file_rows"] == run["file_ids"]:
                    lost.append(
                        f"{fmt} at {size:,}: {run['rows']:,} rows exported, {run['file_rows']:,} in the file, "
                        f"{run['file_ids']:,} distinct ids"
                    )
    if lost:
        sys.exit("QA pairs lost or repeated: " + "; ".join(lost))
    if args.smoke:
        print("smoke: ok")


if __name__ == "__main__":
    main()
