"""What ``/health/`` checks (django-health-check; the view and its JSON, text and HTML output are the
library's, see ``annotator/urls.py``).

- ``WEB``: what the web server itself needs: PostgreSQL (``SELECT 1``), the Redis of the Celery
  broker (``PING`` on ``CELERY_BROKER_URL``; a dead broker only delays jobs, the outbox keeps them,
  but nothing gets processed) and the media storage (a file written, read and deleted).
- ``ALL``: those plus Celery workers answering a control message and, between them, consuming every
  queue (``settings.WORKER_QUEUES``).

``/health/web/`` (``WEB``) is the web container's liveness check: a worker restarting never marks
the web server unhealthy, and it answers in milliseconds. ``/health/`` (``ALL``) is the operators'
full check: on a healthy stack it answers as soon as the workers' replies cover every queue (a few
ms), and only waits ``Workers.timeout`` when some queue has no worker. Every check reports its own
failure; any failure makes the response 500.
"""

from __future__ import annotations

import dataclasses
import datetime

from celery import Celery
from django.conf import settings
from health_check.base import HealthCheck
from health_check.checks import Database, Storage
from health_check.contrib.redis import Redis
from health_check.exceptions import ServiceUnavailable
from redis.asyncio import Redis as RedisClient


def broker_client() -> RedisClient:
    """A client for the broker's Redis, made per check (the URL is read at each request); short
    timeouts so an unreachable host fails the check instead of the healthcheck's own timeout."""
    return RedisClient.from_url(settings.CELERY_BROKER_URL, socket_connect_timeout=2, socket_timeout=2)


def _celery_app() -> Celery:
    from workers.celery import app

    return app


class _EveryQueueTaken(Exception):
    """Raised from a reply's callback to stop waiting for more workers' replies."""


@dataclasses.dataclass
class Workers(HealthCheck):
    """Celery workers answer a control broadcast (``active_queues``: each replies with the queues it
    consumes, so a reply is also a ping), and between them they consume every queue of
    ``settings.WORKER_QUEUES``.

    Returns as soon as the replies cover every queue. Otherwise kombu waits until no reply came for
    ``timeout`` (the library's ``Ping`` without a limit always waited that long, 2 s on every
    request), then the check fails: ``Celery workers unavailable`` if none answered, else
    ``No worker for Celery task queue <names>``, or the broker's error if it cannot be reached."""

    app: Celery = dataclasses.field(default_factory=_celery_app, repr=False)
    timeout: datetime.timedelta = dataclasses.field(default=datetime.timedelta(seconds=2), repr=False)

    def run(self) -> None:
        wanted = set(settings.WORKER_QUEUES)
        taken: set[str] = set()
        answered: list[str] = []

        def on_reply(reply: dict) -> None:
            # {worker's name: [{"name": queue, ...}, ...]}
            for worker, queues in reply.items():
                answered.append(worker)
                if isinstance(queues, list):
                    taken.update(queue.get("name") for queue in queues if isinstance(queue, dict))
            if wanted <= taken:
                raise _EveryQueueTaken

        try:
            self.app.control.broadcast(
                "active_queues", reply=True, timeout=self.timeout.total_seconds(), callback=on_reply
            )
        except _EveryQueueTaken:
            return
        except OSError as exc:
            raise ServiceUnavailable(f"Broker unreachable: {exc}") from exc
        if not answered:
            raise ServiceUnavailable("Celery workers unavailable")
        raise ServiceUnavailable(f"No worker for Celery task queue {', '.join(sorted(wanted - taken))}")


WEB = [Database, (Redis, {"client_factory": broker_client}), Storage]
ALL = [*WEB, Workers]
