"""Helpers shared by the management commands: waiting on Celery work with progress, and writing
export files so a reader never sees half of one."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from django.core.management.base import CommandError


def wait_with_progress(poll: Callable[[], tuple[bool, str | None]], *, write: Callable[[str], None],
                       timeout_s: float, on_timeout: str, interval_s: float = 0.5) -> None:
    """Call ``poll()`` every ``interval_s`` seconds; it returns (done, progress line). Write the line
    whenever it changes; return once done; raise CommandError(``on_timeout``) after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    last = None
    while True:
        done, line = poll()
        if line is not None and line != last:
            write(line)
            last = line
        if done:
            return
        if time.monotonic() > deadline:
            raise CommandError(on_timeout)
        time.sleep(interval_s)


def write_lines_atomically(path: Path, lines: Iterable[str]) -> int:
    """Write ``lines`` to ``path`` through a ``.part`` file renamed at the end (a reader never sees
    half an export); returns how many lines were written."""
    tmp = path.with_name(path.name + ".part")
    n = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line)
            n += 1
    os.replace(tmp, path)
    return n
