from django.apps import AppConfig


class QAConfig(AppConfig):
    name = "annotator.qa"
    label = "qa"
