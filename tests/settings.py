"""Test settings: the normal settings, with media in a scratch folder and a broker DB of its own."""

import os

# Keys of their own, so the suite never depends on .local/ key files (tests that need other keys
# start a subprocess with its own environment).
os.environ.setdefault("DJANGO_SECRET_KEY", "test-secret-key-not-used-outside-the-test-suite-0123456789")
os.environ.setdefault("PSEUDONYM_KEY", "test-pseudonym-key-not-used-outside-the-test-suite-0123456789")
os.environ.setdefault("HANDLE_KEY", "test-handle-key-not-used-outside-the-test-suite-0123456789")
os.environ.setdefault("MEDIA_ROOT", os.path.join(os.path.dirname(os.path.dirname(__file__)), ".local", "test-media"))
os.environ.setdefault("MEDIA_WORK_DIR", os.path.join(os.path.dirname(os.path.dirname(__file__)), ".local", "test-work"))

# Under pytest-xdist (``make test`` runs two workers, gw0 and gw1) each worker has media folders of its
# own (``<MEDIA_ROOT>-gw1``: beside a serial run's, never inside it) and its own two Redis DBs
# (TEST_REDIS_DB + 2 per worker number), so one worker's Celery worker never takes the other's task;
# pytest-django gives each its own test database (``test_<POSTGRES_DB>_gw1``). Idempotent: a subprocess
# a test starts imports these settings again with the environment set here, and must land in the same folders.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
for _name in ("MEDIA_ROOT", "MEDIA_WORK_DIR") if _XDIST_WORKER else ():
    if not os.environ[_name].rstrip("/").endswith(f"-{_XDIST_WORKER}"):
        os.environ[_name] = f"{os.environ[_name].rstrip('/')}-{_XDIST_WORKER}"

from annotator.settings import *  # noqa: E402,F403
from annotator.settings import REDIS_PORT  # noqa: E402

# Redis DBs 2 and 3 so a running demo worker (DBs 0 and 1) never takes a test's task. Two test runs
# at once (e.g. two checkouts) set TEST_REDIS_DB to another even number, and POSTGRES_DB apart.
_REDIS_DB = int(os.environ.get("TEST_REDIS_DB", "2")) + 2 * int(_XDIST_WORKER.removeprefix("gw") or 0)
# Tests that run workers in subprocesses give them (and the commands they run) a broker of their own.
CELERY_BROKER_URL = os.environ.get("TEST_CELERY_BROKER_URL") or f"redis://127.0.0.1:{REDIS_PORT}/{_REDIS_DB}"
CELERY_RESULT_BACKEND = f"redis://127.0.0.1:{REDIS_PORT}/{_REDIS_DB + 1}"
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
LLM_MAX_ATTEMPTS = 3
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Static files straight from the finders (no collectstatic before tests).
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
os.makedirs(STATIC_ROOT, exist_ok=True)  # noqa: F405
