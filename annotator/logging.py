"""Logging for the web server, the commands and the Celery worker and beat: one configuration
(``settings.LOGGING``, built by ``logging_config``), JSON lines or text, every line carrying the
context it was written in.

Context on each record (``ContextFilter``):

- ``request_id``: the web request's id. ``django_guid``'s middleware takes it from an incoming
  ``X-Request-ID`` that parses as a UUID (any other value is replaced by a new one, so a client
  cannot inject text into the logs) or makes a new one, and returns it in the response's
  ``X-Request-ID``. Its Celery integration copies it into the header of every task message published
  while it is set (a job sent on commit of a request's transaction), and sets it again in the worker
  around that task; a task published outside any request (the beat reconciler, a command) gets a
  fresh id of its own, so its lines still group together.
- ``task_id`` and ``task_name``: the Celery task being executed on this thread, else null.

The worker and beat do not install Celery's own log handlers: ``setup_logging`` below takes over
(Celery's documented hook), applies the same ``settings.LOGGING`` and, when the process was started
with ``--logfile``, sends the lines to that file instead of stderr.
"""

from __future__ import annotations

import logging
import logging.config

from celery.signals import setup_logging
from django.core.exceptions import ImproperlyConfigured

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMATS = ("json", "text")

# Fields of a JSON line after ``time`` (ISO 8601, UTC), in this order; ``rename`` gives the short
# names operators grep for.
_JSON_FIELDS = "%(levelname)s %(name)s %(message)s %(request_id)s %(task_id)s %(task_name)s"
_JSON_RENAME = {"levelname": "level", "name": "logger"}
_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(context)s%(message)s"


class ContextFilter(logging.Filter):
    """Set ``request_id``, ``task_id`` and ``task_name`` on every record (None where there is none)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from celery._state import get_current_task  # what Celery's own TaskFormatter reads
        from django_guid import get_guid

        task = get_current_task()
        record.request_id = get_guid()
        record.task_id = getattr(task.request, "id", None) if task else None
        record.task_name = task.name if task else None
        return True


class TextFormatter(logging.Formatter):
    """Lines for a terminal: ``time LEVEL logger [request=... task=name[id]] message``; the bracket
    only when there is a request or task (set by ``ContextFilter``)."""

    def format(self, record: logging.LogRecord) -> str:
        parts = [f"request={rid}"] if (rid := getattr(record, "request_id", None)) else []
        if task_id := getattr(record, "task_id", None):
            parts.append(f"task={getattr(record, 'task_name', None)}[{task_id}]")
        record.context = f"[{' '.join(parts)}] " if parts else ""
        return super().format(record)


def logging_config(level: str, fmt: str) -> dict:
    """The ``LOGGING`` dict: one stderr handler on the root logger at ``level`` (one of ``LEVELS``),
    writing JSON lines (``fmt="json"``: time, level, logger, message, request_id, task_id, task_name
    and any ``extra=`` fields) or text (``fmt="text"``). Raises ImproperlyConfigured for an unknown
    level or format, so a typo in ``LOG_LEVEL`` / ``LOG_FORMAT`` stops the process at start."""
    level = level.strip().upper()
    if level not in LEVELS:
        raise ImproperlyConfigured(f"LOG_LEVEL must be one of {', '.join(LEVELS)}, got {level!r}")
    if fmt not in FORMATS:
        raise ImproperlyConfigured(f"LOG_FORMAT must be 'json' or 'text', got {fmt!r}")
    formatters = {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": _JSON_FIELDS,
            "rename_fields": _JSON_RENAME,
            "timestamp": "time",
        },
        "text": {"()": "annotator.logging.TextFormatter", "format": _TEXT_FORMAT},
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "annotator.logging.ContextFilter"}},
        "formatters": {fmt: formatters[fmt]},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": fmt, "filters": ["context"]}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # django-guid logs every id it makes at INFO, and a rejected one at WARNING before the
            # request has its id (a line without it); the response header shows what was used.
            "django_guid": {"level": "ERROR"}
        },
    }


@setup_logging.connect
def _celery_uses_our_logging(loglevel=None, logfile=None, **kwargs) -> None:
    """Celery's hook for custom logging: a receiver here means Celery installs none of its handlers.
    Apply ``settings.LOGGING``; with ``--logfile`` the console handler writes to that file instead.
    ``--loglevel`` is not applied: ``LOG_LEVEL`` is the one setting for every process."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    if logfile:
        root = logging.getLogger()
        for handler in list(root.handlers):
            if getattr(handler, "name", None) == "console":
                file_handler = logging.FileHandler(logfile, encoding="utf-8")
                file_handler.setFormatter(handler.formatter)
                for f in handler.filters:
                    file_handler.addFilter(f)
                root.removeHandler(handler)
                root.addHandler(file_handler)
