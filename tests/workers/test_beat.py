"""One beat whatever the number of hosts (issue 22): two real ``celery beat`` processes on one
broker; only the one holding RedBeat's lock sends the periodic jobs, and the other takes over when
the first is killed."""

import json
import os
import signal
import subprocess
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

from redis import Redis

from tests.conftest import REPO, wait_for

# Ticks of half a second, a lock that outlives a dead holder by 2 s, and a job every second.
FAST = {
    "BEAT_MAX_INTERVAL_S": "0.5",
    "BEAT_LOCK_TIMEOUT_S": "2",
    "JOBS_RECONCILE_EVERY_S": "1",
    "GOLD_PREMAKE_EVERY_S": "1",
    "LOG_FORMAT": "text",
}


@contextmanager
def beat_process(broker_url: str, log: Path):
    """``celery -A workers beat`` exactly as deployed (no scheduler option: the settings choose it)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "TEST_CELERY_BROKER_URL": broker_url, **FAST}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                str(REPO / ".venv/bin/celery"),
                "-A",
                "workers",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(log.with_suffix(".schedule")),
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _senders(client: Redis, task: str) -> list[str]:
    """The ``origin`` (``gen<pid>@<host>``: the process that sent it) of every message of ``task``
    waiting in the ``default`` queue (no worker consumes it here), oldest first."""
    messages = [json.loads(raw) for raw in reversed(client.lrange("default", 0, -1))]
    return [m["headers"]["origin"].split("@")[0] for m in messages if m["headers"]["task"] == task]


def test_a_second_beat_sends_nothing_until_the_first_is_killed_then_takes_over(own_redis, tmp_path):
    client = Redis.from_url(own_redis.url)
    logs = {name: tmp_path / f"beat-{name}.log" for name in "ab"}
    with ExitStack() as stack:
        first = stack.enter_context(beat_process(own_redis.url, logs["a"]))
        wait_for(
            lambda: f"gen{first.pid}" in _senders(client, "core.reconcile_jobs"),
            timeout=90,
            what="the first beat sending the reconciler",
        )
        second = stack.enter_context(beat_process(own_redis.url, logs["b"]))
        wait_for(lambda: "beat: Starting..." in logs["b"].read_text(), timeout=90, what="the second beat starting")

        # While both run: three more reconciler runs, every one sent by the first beat.
        sent_before = len(_senders(client, "core.reconcile_jobs"))
        wait_for(
            lambda: len(_senders(client, "core.reconcile_jobs")) >= sent_before + 3,
            timeout=30,
            what="three reconciler runs with both beats up",
        )
        assert second.poll() is None  # waiting for the lock, not dead
        assert set(_senders(client, "core.reconcile_jobs")) == {f"gen{first.pid}"}
        assert set(_senders(client, "gold.premake")) == {f"gen{first.pid}"}
        assert "Sending due task" not in logs["b"].read_text()
        assert "Acquired lock" not in logs["b"].read_text()

        # The first host dies without releasing its lock: the second sends once the lock expires.
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        killed_at = time.monotonic()
        wait_for(
            lambda: f"gen{second.pid}" in _senders(client, "core.reconcile_jobs"),
            timeout=30,
            what="the second beat sending the reconciler",
        )
        took_over_s = time.monotonic() - killed_at
        senders = _senders(client, "core.reconcile_jobs")
        # One sender at a time: the first's runs, then only the second's.
        first_of_second = senders.index(f"gen{second.pid}")
        assert set(senders[:first_of_second]) == {f"gen{first.pid}"}
        assert set(senders[first_of_second:]) == {f"gen{second.pid}"}
        assert "beat: Acquired lock" in logs["b"].read_text()
    # Not before the lock's 2 s TTL (renewed at most 0.5 s before the kill), then a poll every 0.5 s.
    assert 1.0 < took_over_s < 10, took_over_s


def test_a_beat_lives_through_a_redis_restart_and_only_the_lock_holder_sends(own_redis):
    """workers/beat.py's own steps, in-process on a Celery app of the test's own: while Redis is
    down a tick sends nothing and does not raise; Redis back without the lock (no persistence), the
    holder notices the lost lock, takes it again on its next tick and sends; the other scheduler
    never sends while the holder runs."""
    from celery import Celery

    from workers.beat import OneBeatScheduler

    app = Celery("beat-test", set_as_current=False)
    app.conf.update(
        broker_url=own_redis.url,
        redbeat_redis_url=own_redis.url,
        redbeat_redis_options={},
        redbeat_lock_timeout=30,
        beat_max_loop_interval=0.5,
        beat_schedule={"tick": {"task": "beat-test.tick", "schedule": 0.1}},
    )
    client = Redis.from_url(own_redis.url)

    def sent() -> int:
        return client.llen("celery")

    def tick_until_sent(scheduler, before: int) -> None:
        wait_for(lambda: scheduler.tick() is not None and sent() > before, timeout=10, what="a send")

    holder = OneBeatScheduler(app)
    assert holder._take_lock()
    tick_until_sent(holder, 0)
    other = OneBeatScheduler(app)
    for _ in range(3):  # the lock is held: no send, however often it ticks
        before = sent()
        assert other.tick() == other.max_interval
        assert sent() == before and not other.holding

    own_redis.stop()
    assert holder.tick() == holder.max_interval  # no exception: the tick is skipped
    own_redis.start()  # empty: the lock is gone
    before = sent()
    assert holder.tick() == holder.max_interval and not holder.holding  # the renewal found the lock gone
    assert sent() == before
    tick_until_sent(holder, before)  # took it again and sends
    assert holder.holding and client.get("redbeat::lock") == holder.lock.local.token
