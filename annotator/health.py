"""What ``/health/`` checks (django-health-check; the view and its JSON, text and HTML output are the
library's, see ``annotator/urls.py``).

- ``WEB``: what the web server itself needs: PostgreSQL (``SELECT 1``), the Redis of the Celery
  broker (``PING`` on ``CELERY_BROKER_URL``; a dead broker only delays jobs, the outbox keeps them,
  but nothing gets processed) and the media storage (a file written, read and deleted).
- ``ALL``: those plus Celery workers answering a control ping and, between them, consuming every
  queue (``settings.WORKER_QUEUES``).

``/health/web/`` (``WEB``) is the web container's healthcheck, so a stopped worker does not mark the
web server unhealthy; ``/health/`` (``ALL``) is what monitoring polls. Every check reports its own
failure; any failure makes the response 500.
"""

from __future__ import annotations

import dataclasses
import datetime

from celery import Celery
from django.conf import settings
from health_check.checks import Database, Storage
from health_check.contrib.celery import Ping
from health_check.contrib.redis import Redis
from redis.asyncio import Redis as RedisClient


def broker_client() -> RedisClient:
    """A client for the broker's Redis, made per check (the URL is read at each request); short
    timeouts so an unreachable host fails the check instead of the healthcheck's own timeout."""
    return RedisClient.from_url(settings.CELERY_BROKER_URL, socket_connect_timeout=2, socket_timeout=2)


def _celery_app() -> Celery:
    from workers.celery import app

    return app


@dataclasses.dataclass
class WorkerPing(Ping):
    """The library's Celery ping, bound to our app (the web process never makes it the default) and
    without the app in its name: the name is the key of the JSON output."""

    app: Celery = dataclasses.field(default_factory=_celery_app, repr=False)
    timeout: datetime.timedelta = dataclasses.field(default=datetime.timedelta(seconds=2), repr=False)
    # Every worker that answers within the timeout: each queue (``settings.WORKER_QUEUES``, one
    # worker per queue) must be taken by one of them, so waiting for the first answer is not enough.
    limit: int | None = dataclasses.field(default=None, repr=False)


WEB = [Database, (Redis, {"client_factory": broker_client}), Storage]
ALL = [*WEB, WorkerPing]
