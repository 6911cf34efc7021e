"""Helpers shared by the management commands: progress (a bar with an ETA in a terminal, plain lines
otherwise), waiting on Celery work with progress, and writing export files so a reader never sees
half of one."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar

from django.core.management.base import CommandError, OutputWrapper
from tqdm import tqdm

T = TypeVar("T")


def _raw(stream) -> IO[str]:
    """The file under Django's OutputWrapper(s) (``call_command`` may wrap a wrapper): tqdm redraws
    with ``\r`` and must not get the wrapper's added newline."""
    while isinstance(stream, OutputWrapper):
        stream = stream._out
    return stream


def is_terminal(stream) -> bool:
    """Whether ``stream`` (a file or a command's ``self.stdout`` / ``self.stderr``) is a terminal."""
    try:
        return bool(_raw(stream).isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class Progress:
    """Progress of one long step of a command, on ``out`` (``self.stdout``, or ``self.stderr`` when
    stdout carries data).

    In a terminal: a tqdm bar redrawn in place, with count, rate, elapsed time and ETA, and a short
    ``note`` beside it. Otherwise (a pipe, a file, ``make demo``'s log): the plain ``line`` of each
    ``show``, written only when it changed, as the commands printed before; nothing is drawn.
    ``write`` prints a line above the bar (or plainly). Use as a context manager, or call ``close``.
    """

    def __init__(self, out, *, desc: str, unit: str = "it", total: int | None = None):
        self.out = out
        self._last: str | None = None
        self.bar = (
            tqdm(total=total, desc=desc, unit=unit, file=_raw(out), dynamic_ncols=True, mininterval=0.2, leave=True)
            if is_terminal(out)
            else None
        )

    def show(self, line: str | None, n: int | None = None, total: int | None = None, note: str = "") -> None:
        """Report progress: ``n`` of ``total`` units done (for the bar), ``line`` (for plain output)."""
        if self.bar is None:
            if line is not None and line != self._last:
                self.out.write(line)
                self._last = line
            return
        changed = False
        if total is not None and total != self.bar.total:
            self.bar.total = total
            changed = True
        if note and note != self.bar.postfix:
            self.bar.set_postfix_str(note, refresh=False)
            changed = True
        if n is not None and n != self.bar.n:
            # tqdm's ETA comes from these increments over time; it redraws at most every mininterval
            # (an export of a million lines must not write a million frames), and close() draws the last.
            self.bar.update(n - self.bar.n)
        elif changed:
            self.bar.refresh()

    def write(self, text: str) -> None:
        """A line of output (a per-file result, a warning) that stays above the bar."""
        if self.bar is None:
            self.out.write(text)
        else:
            self.bar.write(text, file=_raw(self.out))

    def iterate(self, items: Iterable[T], *, line: Callable[[int], str | None] = lambda n: None) -> Iterator[T]:
        """Yield ``items``, advancing the bar by one per item; ``line(n)`` after ``n`` items is the
        plain line (None: print nothing)."""
        n = 0
        for item in items:
            yield item
            n += 1
            self.show(line(n), n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class Tick:
    """What one poll of ``wait_with_progress`` saw: ``done`` (stop waiting), the plain ``line``, and
    for the bar ``n`` of ``total`` units finished and a short ``note`` (e.g. "2 failed")."""

    done: bool
    line: str | None
    n: int | None = None
    total: int | None = None
    note: str = ""


def wait_with_progress(
    poll: Callable[[], Tick | tuple[bool, str | None]],
    *,
    timeout_s: float,
    on_timeout: str,
    out=None,
    write: Callable[[str], None] | None = None,
    desc: str = "",
    unit: str = "it",
    interval_s: float = 0.5,
) -> None:
    """Call ``poll()`` every ``interval_s`` seconds until it reports done; raise CommandError(``on_timeout``)
    after ``timeout_s`` seconds. ``poll`` returns a ``Tick`` (or a ``(done, line)`` pair).

    Progress goes to ``out`` (a command's ``self.stdout``) through ``Progress``: a bar with an ETA in a
    terminal, else each changed line. With ``write`` instead of ``out``, only the lines are written.
    """
    if out is None and write is None:
        raise TypeError("wait_with_progress needs out= or write=")
    progress = Progress(out, desc=desc, unit=unit) if out is not None else None
    deadline = time.monotonic() + timeout_s
    last = None
    try:
        while True:
            tick = poll()
            if not isinstance(tick, Tick):
                tick = Tick(*tick)
            if progress is not None:
                progress.show(tick.line, tick.n, tick.total, tick.note)
            elif tick.line is not None and tick.line != last:
                write(tick.line)
                last = tick.line
            if tick.done:
                return
            if time.monotonic() > deadline:
                raise CommandError(on_timeout)
            time.sleep(interval_s)
    finally:
        if progress is not None:
            progress.close()


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
