"""A stalled upload is cut off (issue 19 review finding: an upload that announced 8 GiB and sent
nothing waited for ever). Run against gunicorn as deployed (``gunicorn annotator.wsgi`` from the
repository's root, so it reads ``gunicorn.conf.py``), with REQUEST_BODY_TIMEOUT_S = 2."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from django.db import connection

from annotator.media.models import Video
from annotator.projects.services import token_for

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def gunicorn(db):
    port = _free_port()
    env = {
        **os.environ,
        "POSTGRES_DB": connection.settings_dict["NAME"],
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "REQUEST_BODY_TIMEOUT_S": "2",
        "LOG_LEVEL": "WARNING",
    }
    proc = subprocess.Popen(
        [
            str(REPO / ".venv/bin/gunicorn"),
            "annotator.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--threads",
            "2",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/health/web/")
                conn.getresponse().read()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("gunicorn did not start")
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


@pytest.mark.django_db(transaction=True)
def test_an_upload_announcing_8_gib_that_sends_nothing_is_cut_off_with_408(gunicorn, project, admin_user):
    head = (
        f"POST /api/projects/{project.slug}/videos/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Token {token_for(admin_user)}\r\n"
        "Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: 8589934592\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", gunicorn), timeout=15) as sock:
        started = time.monotonic()
        sock.sendall(head + b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.mp4"\r\n\r\n')
        try:
            raw = _answer(sock)
        except TimeoutError:
            pytest.fail("no answer within 15 s: the upload is still being waited for")
        waited = time.monotonic() - started
    status_line, _, rest = raw.partition(b"\r\n")
    body = json.loads(rest.partition(b"\r\n\r\n")[2])
    assert status_line == b"HTTP/1.1 408 Request Timeout"
    assert body == {
        "detail": "the upload stalled: nothing arrived for 2 s (REQUEST_BODY_TIMEOUT_S), so it was cut "
        "off; nothing was saved",
        "errors": {},
    }
    assert 2.0 <= waited < 8.0, waited
    assert not Video.objects.exists()
    # The thread is free again: the server answers the next request.
    conn = http.client.HTTPConnection("127.0.0.1", gunicorn, timeout=5)
    conn.request("GET", "/health/web/")
    assert conn.getresponse().status == 200


@pytest.mark.django_db(transaction=True)
def test_a_slow_upload_that_keeps_sending_is_not_cut_off(gunicorn, project, admin_user, short_video):
    """Pauses shorter than the timeout are fine: the file arrives in 4 pieces 1 s apart (4 s in all,
    twice the timeout) and is ingested."""
    data = short_video.read_bytes()
    body = (
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="slow.mp4"\r\n'
        b"Content-Type: video/mp4\r\n\r\n" + data + b"\r\n--xyz--\r\n"
    )
    head = (
        f"POST /api/projects/{project.slug}/videos/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Token {token_for(admin_user)}\r\n"
        f"Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", gunicorn), timeout=30) as sock:
        sock.sendall(head)
        quarter = len(body) // 4 + 1
        for i in range(4):
            time.sleep(1.0)
            sock.sendall(body[i * quarter : (i + 1) * quarter])
        raw = _answer(sock)
    assert raw.startswith(b"HTTP/1.1 201 "), raw[:300]
    assert json.loads(raw.partition(b"\r\n\r\n")[2])["filename"] == "slow.mp4"
