"""Long commands draw a progress bar with an ETA in a terminal (a real pseudo-terminal here) and print
plain lines when their output is a pipe; shown with `ingest --wait` and a real worker process."""

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time

import pytest

from annotator.media.models import Video
from tests.conftest import REPO, make_video
from tests.workers.conftest import own_redis, process_env, worker_process  # noqa: F401 (fixture)

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
ETA = re.compile(r"\[\d\d:\d\d<\d\d:\d\d")  # tqdm's [elapsed<remaining


def _in_terminal(args: list[str], env: dict, timeout: float = 120) -> tuple[int, str]:
    """Run ``args`` with stdin, stdout and stderr on a 120-column pseudo-terminal; everything it drew."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            out += data
        else:
            proc.kill()
            pytest.fail(f"{args} did not finish within {timeout} s:\n{out.decode(errors='replace')}")
        return proc.wait(timeout=10), out.decode(errors="replace")
    finally:
        os.close(master)


def _ingest_args(*paths) -> list[str]:
    return [str(REPO / ".venv/bin/python"), "manage.py", "ingest", *map(str, paths), "--project", "bars", "--wait"]


@pytest.mark.django_db(transaction=True)
def test_in_a_terminal_ingest_draws_bars_with_an_eta_and_keeps_the_result_lines(own_redis, tmp_path):  # noqa: F811
    a, b = make_video(tmp_path / "a.mp4", seconds=1.0), make_video(tmp_path / "b.mp4", seconds=1.2)
    with worker_process(own_redis.url, tmp_path / "worker.log"):
        code, drawn = _in_terminal(_ingest_args(a, b), process_env(own_redis.url, LOG_FORMAT="text"))

    assert code == 0, drawn
    ids = {v.filename: v.pk for v in Video.objects.filter(project__slug="bars")}
    # What a terminal would show at each carriage return or newline, cursor moves taken out.
    lines = [ANSI.sub("", line) for line in re.split(r"[\r\n]", drawn)]
    # The result of each file and the summary are printed whole, above the bars.
    assert f"queued    {a}  (video {ids['a.mp4']})" in lines
    assert f"queued    {b}  (video {ids['b.mp4']})" in lines
    assert "2 files: 2 queued, 0 duplicate, 0 failed" in lines
    # Two bars redrawn in place (carriage returns), each ending full with its count, rate and ETA.
    final = {bar: [frame for frame in lines if frame.startswith(bar)][-1] for bar in ("ingest:", "transcoding:")}
    assert re.match(r"ingest: 100%\|█+\| 2/2 ", final["ingest:"]) and ETA.search(final["ingest:"]), final
    assert re.match(r"transcoding: 100%\|█+\| 2/2 ", final["transcoding:"]), final
    assert ETA.search(final["transcoding:"]) and re.search(r"(video/s|s/video), 0 failed\]$", final["transcoding:"]), (
        final
    )
    # The plain progress lines of a pipe are not printed in a terminal.
    assert "transcoding: 2 ready, 0 processing, 0 failed" not in lines


@pytest.mark.django_db(transaction=True)
def test_into_a_pipe_ingest_prints_plain_lines_and_no_bar(own_redis, tmp_path):  # noqa: F811
    a, b = make_video(tmp_path / "a.mp4", seconds=1.0), make_video(tmp_path / "b.mp4", seconds=1.2)
    with worker_process(own_redis.url, tmp_path / "worker.log"):
        done = subprocess.run(
            _ingest_args(a, b), cwd=REPO, env=process_env(own_redis.url), capture_output=True, text=True, timeout=120
        )

    assert done.returncode == 0, done.stderr
    ids = {v.filename: v.pk for v in Video.objects.filter(project__slug="bars")}
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        f"queued    {a}  (video {ids['a.mp4']})",
        f"queued    {b}  (video {ids['b.mp4']})",
        "2 files: 2 queued, 0 duplicate, 0 failed",
    ]
    # Then one line per change of the counts, the last one when all are done.
    assert all(re.fullmatch(r"transcoding: \d ready, \d processing, \d failed", line) for line in lines[3:])
    assert lines[-1] == "transcoding: 2 ready, 0 processing, 0 failed"
    assert "\r" not in done.stdout + done.stderr and "%|" not in done.stdout + done.stderr
