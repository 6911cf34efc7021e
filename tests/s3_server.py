"""Fixtures for S3 storage: moto's S3-compatible server on loopback (a separate process speaking the
S3 HTTP API; nothing in the code under test is mocked), and the default storage pointed at a fresh
bucket of it.

The storage settings are the ones ``annotator.settings`` builds for ``STORAGE_BACKEND=s3`` and the
``AWS_*`` variables: a subprocess imports the settings module with that environment and prints its
``STORAGES["default"]``; the ``s3`` fixture overrides ``STORAGES`` with exactly that (Django then
drops the cached ``default_storage``), with a fresh bucket per test.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import boto3
import pytest
import requests

REPO = Path(__file__).resolve().parents[1]
KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_S3_REGION_NAME": "us-east-1"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def s3_endpoint():
    """moto's S3-compatible server (``moto_server``) on a free loopback port, for the session."""
    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            requests.get(endpoint, timeout=1)
            break
        except (requests.ConnectionError, requests.Timeout):  # not listening yet, or its first answer is slow (load)
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                pytest.fail("moto_server did not start (is moto[server] installed? make venv installs it)")
            time.sleep(0.1)
    yield endpoint
    server.terminate()
    server.wait(timeout=10)


def _settings_for_s3(endpoint: str) -> dict:
    """``STORAGES["default"]`` and ``CONTENT_SECURITY_POLICY`` as ``annotator.settings`` builds them
    with ``STORAGE_BACKEND=s3`` and the ``AWS_*`` variables (a subprocess imports the settings)."""
    env = {
        **os.environ,
        **KEYS,
        "STORAGE_BACKEND": "s3",
        "AWS_STORAGE_BUCKET_NAME": "placeholder",
        "AWS_S3_ENDPOINT_URL": endpoint,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
    }
    code = (
        "import json; from django.conf import settings as s; "
        "print(json.dumps({'storage': s.STORAGES['default'], 'csp': s.CONTENT_SECURITY_POLICY}, default=str))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def s3_built_settings(s3_endpoint) -> dict:
    """``{"storage": ..., "csp": ...}`` from ``_settings_for_s3`` for the session's server."""
    built = _settings_for_s3(s3_endpoint)
    assert built["storage"]["BACKEND"] == "storages.backends.s3.S3Storage"
    assert built["storage"]["OPTIONS"]["endpoint_url"] == s3_endpoint
    return built


@pytest.fixture(scope="session")
def s3_storage_settings(s3_built_settings) -> dict:
    """``STORAGES["default"]`` as ``annotator.settings`` builds it for S3 (bucket name replaced per test)."""
    return s3_built_settings["storage"]


@pytest.fixture
def s3(s3_endpoint, s3_storage_settings, settings):
    """A fresh bucket, and the default storage pointed at it. Yields (boto3 client, bucket name)."""
    bucket = f"t-{uuid.uuid4().hex[:16]}"
    client = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=bucket)
    options = {**s3_storage_settings["OPTIONS"], "bucket_name": bucket}
    settings.STORAGE_BACKEND = "s3"
    settings.STORAGES = {**settings.STORAGES, "default": {**s3_storage_settings, "OPTIONS": options}}
    from annotator.media.services import on_local_disk

    assert not on_local_disk()
    yield client, bucket
