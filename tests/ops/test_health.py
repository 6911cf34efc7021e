"""/health/ reports PostgreSQL, the broker's Redis, the media storage and the Celery workers, for real;
/health/web/ (the web container's liveness check) the same without the workers."""

import socket
import time

import pytest

HEALTHY_WEB = {
    "Database(alias='default')": "OK",
    "Redis(db={db}, host='127.0.0.1', port={port})": "OK",
    "Storage(alias='default')": "OK",
}


def _expected_web(settings, **overrides):
    from redis import Redis

    kwargs = Redis.from_url(settings.CELERY_BROKER_URL).connection_pool.connection_kwargs
    out = {key.format(db=kwargs["db"], port=kwargs["port"]): value for key, value in HEALTHY_WEB.items()}
    return out | overrides


def _dead_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_with_a_worker_running_every_check_is_ok_and_the_status_is_200_at_once(worker, client, settings):
    client.get("/health/?format=json")  # connections made
    started = time.monotonic()
    response = client.get("/health/?format=json")
    took_s = time.monotonic() - started

    assert response.status_code == 200
    assert response.json() == _expected_web(settings) | {"Workers()": "OK"}
    # Done once the replies cover every queue: the library's ping waited its whole 2 s timeout.
    assert took_s < 1.0, took_s


def test_a_queue_no_worker_takes_fails_the_full_check_by_name_and_not_the_web_check(worker, client, settings):
    settings.WORKER_QUEUES = (*settings.WORKER_QUEUES, "orphan")

    full = client.get("/health/?format=json")
    started = time.monotonic()
    web = client.get("/health/web/?format=json")
    web_took_s = time.monotonic() - started

    assert full.status_code == 500
    assert full.json() == _expected_web(settings) | {"Workers()": "Unavailable: No worker for Celery task queue orphan"}
    assert web.status_code == 200
    assert web.json() == _expected_web(settings)
    assert web_took_s < 1.0, web_took_s


def test_json_is_also_served_for_an_accept_header(worker, client, settings):
    response = client.get("/health/", HTTP_ACCEPT="application/json")

    assert (response.status_code, response["Content-Type"]) == (200, "application/json")
    assert response.json() == _expected_web(settings) | {"Workers()": "OK"}


@pytest.mark.django_db
def test_a_dead_broker_redis_is_reported_by_name_with_a_500(client, settings):
    port = _dead_port()
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{port}/0"

    response = client.get("/health/web/?format=json")

    assert response.status_code == 500
    assert response.json() == {
        "Database(alias='default')": "OK",
        f"Redis(db=0, host='127.0.0.1', port={port})": "Unavailable: Unable to connect to Redis: Connection Error",
        "Storage(alias='default')": "OK",
    }
