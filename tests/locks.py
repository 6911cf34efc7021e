"""Race tests' one wait: poll PostgreSQL until another connection waits on a row lock.

The two-connection tests (a claim against premake, a review against a round's close, an answer
against an idle release or a preview's restart) hold a lock in one thread and need to know that the
other thread's statement now waits on it before letting the first go on. PostgreSQL says so in
``pg_stat_activity``: ``wait_event_type = 'Lock'``."""

from __future__ import annotations

import time
from collections.abc import Callable

_ANY = (
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
    "AND datname = current_database() AND pid <> pg_backend_pid()"
)
_ONE = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid = %s"


def lock_waiters(cursor, pid: int | None = None) -> int:
    """How many backends wait on a lock now: backend ``pid`` only (0 or 1), or every other backend
    of this database when ``pid`` is None."""
    cursor.execute(*((_ONE, [pid]) if pid is not None else (_ANY,)))
    return cursor.fetchone()[0]


def wait_until_a_lock_waits(
    cursor,
    *,
    pid_of: Callable[[], int | None] | None = None,
    alive: Callable[[], bool] | None = None,
    timeout_s: float = 20.0,
) -> bool:
    """Poll every 20 ms, through ``cursor``, until a backend waits on a lock: the one whose pid
    ``pid_of()`` returns once it is known (None: not yet), or any other backend of this database
    when ``pid_of`` is None. True once one waits; False after ``timeout_s`` seconds or as soon as
    ``alive()`` is false (the other thread ended without waiting)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if alive is not None and not alive():
            return False
        pid = pid_of() if pid_of is not None else None
        if (pid_of is None or pid is not None) and lock_waiters(cursor, pid):
            return True
        time.sleep(0.02)
    return False
