from django.apps import AppConfig


class ExposureConfig(AppConfig):
    name = "annotator.exposure"
    label = "exposure"
