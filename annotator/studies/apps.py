from django.apps import AppConfig


class StudiesConfig(AppConfig):
    name = "annotator.studies"
    label = "studies"
    verbose_name = "human-baseline studies"
