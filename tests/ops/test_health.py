"""/health/ reports PostgreSQL, the broker's Redis, the media storage and a Celery worker, for real."""

import socket

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


def test_with_a_worker_running_every_check_is_ok_and_the_status_is_200(worker, client, settings):
    response = client.get("/health/?format=json")

    assert response.status_code == 200
    assert response.json() == _expected_web(settings) | {"WorkerPing()": "OK"}


def test_json_is_also_served_for_an_accept_header(worker, client, settings):
    response = client.get("/health/", HTTP_ACCEPT="application/json")

    assert (response.status_code, response["Content-Type"]) == (200, "application/json")
    assert response.json() == _expected_web(settings) | {"WorkerPing()": "OK"}


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
