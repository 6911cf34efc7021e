"""A worker keeps its database connection from task to task (``settings.CELERY_DB_REUSE_MAX`` and
``workers.celery``): Celery's Django fix-up closed it before and after every task, so each
``gold.premake_for`` message, sent by every claim of a project with gold, opened a PostgreSQL
session of its own (issue 20: the claim's p95 with gold, bench/queue.py)."""

import time

import pytest
from django.db import connection

from tests.conftest import wait_for
from tests.workers.conftest import worker_process

TASKS = 8


def _sessions() -> int:
    """Sessions ever opened on this test's database (PostgreSQL's cumulative statistics)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def _send(broker_url: str, n: int) -> None:
    """``n`` messages of a task that queries the database and changes nothing (no such project)."""
    from workers.celery import app

    with app.connection_for_write(broker_url) as conn:
        for _ in range(n):
            app.send_task("gold.premake_for", args=[0, 0], connection=conn, ignore_result=True)


def _succeeded(log) -> int:
    return log.read_text().count("succeeded in")


@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_task_after_task_on_one_database_session(own_redis, tmp_path):
    log = tmp_path / "worker.log"
    with worker_process(own_redis.url, log, queues="default"):
        _send(own_redis.url, 1)  # the pool process's first task opens its connection
        wait_for(lambda: _succeeded(log) == 1, timeout=60, what="the first task")
        time.sleep(1.5)  # statistics are flushed at most once a second
        before = _sessions()
        _send(own_redis.url, TASKS)
        wait_for(lambda: _succeeded(log) == 1 + TASKS, timeout=60, what=f"{TASKS} more tasks")
        time.sleep(1.5)  # a closed session is counted when its backend exits
        opened = _sessions() - before
    # This test's own session is counted once at most; a session per task would be TASKS or more.
    assert opened <= 2, f"{opened} database sessions opened for {TASKS} tasks"
