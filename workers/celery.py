"""The Celery application and its beat schedule. Start a worker with ``celery -A workers worker`` and
the scheduler with ``celery -A workers beat``.

Tasks live beside their apps (``annotator/<app>/tasks.py``) and are found by name; services queue
them through ``annotator.jobs``, never by importing them.
"""

import os

from celery import Celery
from celery.signals import task_postrun, task_prerun
from django.conf import settings
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")

app = Celery("annotator")
# CELERY_* settings, CELERY_BEAT_SCHEDULE (the job reconciler) included.
app.config_from_object("django.conf:settings", namespace="CELERY")
# The apps with a ``tasks`` module: one list, ``settings.TASK_APPS``, read lazily (after Django's set-up).
app.autodiscover_tasks(lambda: settings.TASK_APPS)


@app.on_after_configure.connect
def _redbeat_in_the_broker(sender: Celery, **kwargs) -> None:
    """Point RedBeat (``settings.CELERY_BEAT_SCHEDULER``: its lock and the schedule's last run times)
    at the broker's Redis. It reads these two keys without Celery's ``CELERY_`` namespace, else it
    falls back to the broker's settings with a deprecation warning at every start."""
    sender.conf.update(
        redbeat_redis_url=sender.conf.broker_url,
        redbeat_redis_options={"socket_connect_timeout": 5, "socket_timeout": 30},
    )


@task_prerun.connect
@task_postrun.connect
def _close_old_connections(task=None, **kwargs) -> None:
    """Before and after each task a worker runs, close this thread's database connection if it is
    broken, left in a failed transaction, or older than ``CONN_MAX_AGE``, as Django does around each
    request; a healthy one is kept for the next task (``settings.CELERY_DB_REUSE_MAX``). Not for a task
    run in line (eager): its caller's connection, maybe inside a transaction, is not the task's."""
    if not getattr(getattr(task, "request", None), "is_eager", False):
        close_old_connections()
