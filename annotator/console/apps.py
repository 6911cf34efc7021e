from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "annotator.console"
    label = "console"
