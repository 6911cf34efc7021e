"""The Celery application and its beat schedule. Start a worker with ``celery -A workers worker`` and
the scheduler with ``celery -A workers beat``.

Tasks live beside their apps (``annotator/<app>/tasks.py``) and are found by name; services queue
them through ``annotator.jobs``, never by importing them.
"""

import os

from celery import Celery
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")

app = Celery("annotator")
# CELERY_* settings, CELERY_BEAT_SCHEDULE (the job reconciler) included.
app.config_from_object("django.conf:settings", namespace="CELERY")
# The apps with a ``tasks`` module: one list, ``settings.TASK_APPS``, read lazily (after Django's set-up).
app.autodiscover_tasks(lambda: settings.TASK_APPS)
