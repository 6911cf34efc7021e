from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "annotator.core"
    label = "core"
    verbose_name = "jobs"
