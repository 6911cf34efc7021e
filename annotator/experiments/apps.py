from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    name = "annotator.experiments"
    label = "experiments"
