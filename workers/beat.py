"""The beat scheduler (``settings.CELERY_BEAT_SCHEDULER``): one beat sends the periodic jobs whatever
the number of hosts, and it lives through a Redis outage.

RedBeat (``celery-redbeat``) keeps the schedule's last run times and a lock in the broker's Redis. At
start a beat takes the lock, waiting for it while another beat holds it (polling every
``BEAT_MAX_INTERVAL_S``); the holder renews it at every tick, and a holder that dies without releasing
it loses it after ``BEAT_LOCK_TIMEOUT_S``. Stock RedBeat then stops on the first Redis error of a tick
(the renewal raises), and a beat that could not take the lock at start (Redis down) dies at its first
tick. This subclass keeps ticking instead:

1. a tick first makes sure this beat holds the lock: if it never had it, or lost it (a renewal found
   the key gone or another beat's), it tries once to take it, without waiting, and sends nothing
   unless it did; once taken, it writes the schedule again (a Redis restarted without its data lost
   it with the lock; entries still there keep their last run times);
2. RedBeat's own tick renews the lock and sends what is due;
3. a Redis error (connection refused, time-out) skips the tick and the next one starts again at 1.

So at most one beat sends at any time: sending needs the lock, renewed just before.
"""

from __future__ import annotations

import time

from celery.utils.log import get_logger
from redbeat.schedulers import LUA_EXTEND_TO_SCRIPT, RedBeatScheduler, get_redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = get_logger("celery.beat")
REDIS_DOWN = (RedisConnectionError, RedisTimeoutError)


class OneBeatScheduler(RedBeatScheduler):
    """RedBeat, kept alive through Redis errors and a lost lock (steps in the module's docstring)."""

    #: Whether this beat may send: None before the first tick, False until it holds the lock, and
    #: again once a renewal fails.
    holding: bool | None = None

    def setup_schedule(self) -> None:
        """Write the static schedule to Redis, waiting for Redis (every ``max_interval`` seconds)
        if it is down when the beat starts."""
        while True:
            try:
                super().setup_schedule()
                return
            except REDIS_DOWN as exc:
                logger.warning(
                    "beat: Redis unreachable while loading the schedule (%s); trying again in %s s",
                    exc,
                    self.max_interval,
                )
                time.sleep(self.max_interval)

    def tick(self, *args, **kwargs) -> float:
        """One pass: hold the lock (else send nothing), then RedBeat's tick. Returns the seconds
        to sleep before the next pass."""
        if self.holding is None:
            # RedBeat's start-up hook (``beat_init``) took the lock, waiting for it, before the first
            # tick; with Redis down it could not, and left no lock.
            self.holding = self.lock is not None and self.lock.local.token is not None
        try:
            if not self.holding and not self._take_lock():
                return self.max_interval
            return super().tick(*args, **kwargs)
        except LockError:
            logger.warning(
                "beat: Lost the lock (it expired or another beat holds it); sending nothing until "
                "this beat takes it again"
            )
            self.holding = False
            return self.max_interval
        except REDIS_DOWN as exc:
            logger.warning("beat: Redis unreachable (%s); trying again in %s s", exc, self.max_interval)
            return self.max_interval

    def _take_lock(self) -> bool:
        """Try once, without waiting, to take the lock; True if this beat holds it now."""
        if self.lock is None:
            client = get_redis(self.app)
            self.lock = client.lock(self.lock_key, timeout=self.lock_timeout, sleep=self.max_interval)
            # RedBeat's extend sets the time left to the timeout (redis-py's would add to it).
            self.lock.lua_extend = client.register_script(LUA_EXTEND_TO_SCRIPT)
        self.holding = bool(self.lock.acquire(blocking=False))
        if self.holding:
            logger.info("beat: Acquired lock")
            # The schedule may be gone with the lock (a Redis restarted without its data): write it
            # again; entries still there keep their last run times.
            self.setup_schedule()
        return self.holding

    def close(self) -> None:
        """Release the lock if held (RedBeat's close); with Redis down there is nothing to release,
        the lock expires on its own."""
        try:
            super().close()
        except REDIS_DOWN as exc:
            logger.warning("beat: Redis unreachable at shutdown (%s); the lock expires on its own", exc)
