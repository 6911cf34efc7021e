"""The Celery application and its beat schedule. Start a worker with ``celery -A workers worker`` and
the scheduler with ``celery -A workers beat``.

Tasks live beside their apps (``annotator/<app>/tasks.py``) and are found by name; services queue
them through ``annotator.jobs``, never by importing them.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")

app = Celery("annotator")
# CELERY_* settings, CELERY_BEAT_SCHEDULE (the job reconciler) included.
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["annotator.media", "annotator.drafts", "annotator.studies", "annotator.core", "annotator.agreement",
                        "annotator.evaluation", "annotator.gold"])
