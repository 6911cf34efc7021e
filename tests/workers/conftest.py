"""Real processes for the job tests: a Redis server of the test's own (so it can be stopped), and
Celery workers as subprocesses (prefork, so a pool process can be killed) on that broker and the
test database."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO, wait_for


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """``redis-server`` on a free loopback port, no persistence; ``stop`` and ``start`` keep the port."""

    def __init__(self, tmp: Path):
        self.port = _free_port()
        self.tmp = tmp
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.tmp),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(
            lambda: (
                subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True).stdout.strip()
                == b"PONG"
            ),
            timeout=10,
        )

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


@pytest.fixture
def own_redis(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


def process_env(broker_url: str, **extra: str) -> dict[str, str]:
    """Environment for a subprocess that must see this test's database and broker."""
    from django.db import connection

    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "POSTGRES_DB": connection.settings_dict["NAME"],
        "TEST_CELERY_BROKER_URL": broker_url,
        **extra,
    }


@contextmanager
def worker_process(broker_url: str, log: Path, *, beat: bool = False, queues: str | None = None, **extra_env: str):
    """A Celery worker subprocess (prefork, one pool process) consuming ``queues`` (comma-separated;
    every queue of ``settings.WORKER_QUEUES`` by default), optionally with beat embedded."""
    from django.conf import settings

    args = [
        str(REPO / ".venv/bin/celery"),
        "-A",
        "workers",
        "worker",
        "--pool",
        "prefork",
        "--concurrency",
        "1",
        "--loglevel",
        "INFO",
        "-n",
        f"test-{uuid.uuid4().hex[:8]}@%h",
        "--without-gossip",
        "--without-mingle",
        "-Q",
        queues or ",".join(settings.WORKER_QUEUES),
    ]
    if beat:
        args += ["-B", "--schedule", str(log.with_suffix(".beat"))]
    with log.open("w") as out:
        proc = subprocess.Popen(
            args,
            cwd=REPO,
            env=process_env(broker_url, **extra_env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def processes_matching(text: str) -> list[tuple[int, int, str]]:
    """(pid, parent pid, command line) of every live process whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if text in cmdline and (stat.rsplit(")", 1)[1].split()[0] != "Z"):
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            found.append((int(entry.name), ppid, cmdline))
    return found


def run_manage(broker_url: str, *args: str, timeout: float = 120, **extra_env: str) -> subprocess.CompletedProcess:
    """``manage.py ARGS`` in a subprocess on this test's database and broker (``extra_env``: more
    environment variables, e.g. a storage and folders of its own)."""
    return subprocess.run(
        [str(REPO / ".venv/bin/python"), "manage.py", *args],
        cwd=REPO,
        env=process_env(broker_url, **extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
