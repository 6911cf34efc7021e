"""Concurrency slots: at most ``concurrency`` requests in flight to one model server, counted in
Redis across all workers and processes (``ServerSlots``)."""

from __future__ import annotations

import threading
import time
import uuid
from contextlib import contextmanager
from typing import Callable

import redis
from django.conf import settings

from annotator.inference.errors import RunCancelled

_redis_lock = threading.Lock()
_redis_client: redis.Redis | None = None


def _redis() -> redis.Redis:
    global _redis_client
    with _redis_lock:
        if _redis_client is None:
            _redis_client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        return _redis_client


# Atomic in Redis: drop holders older than the lease, then take a slot if fewer than the limit hold one.
_TAKE_SLOT = """
redis.call('zremrangebyscore', KEYS[1], 0, ARGV[1])
if redis.call('zcard', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('zadd', KEYS[1], ARGV[3], ARGV[4])
  return 1
end
return 0
"""


class ServerSlots:
    """A counting semaphore per server in Redis: a sorted set of holders scored by the time they
    took a slot, taken by one Lua script (check and add are atomic). Holders older than
    ``lease_s`` seconds (a killed worker) no longer count."""

    def __init__(self, key: str, limit: int, lease_s: float):
        self.key, self.limit, self.lease_s = f"llm:slots:{key}", max(1, limit), lease_s

    @contextmanager
    def hold(self, cancelled: Callable[[], bool] = lambda: False):
        """Wait for a slot (polling every 20 ms), hold it for the block, then free it.
        Raises RunCancelled if ``cancelled()`` turns true while waiting."""
        client, token = _redis(), uuid.uuid4().hex
        take = client.register_script(_TAKE_SLOT)
        polls = 0
        while True:
            now = time.time()
            if take(keys=[self.key], args=[now - self.lease_s, self.limit, now, token]):
                break
            polls += 1
            if polls % 50 == 0 and cancelled():
                raise RunCancelled()
            time.sleep(0.02)
        try:
            yield
        finally:
            client.zrem(self.key, token)
