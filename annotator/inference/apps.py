from django.apps import AppConfig


class InferenceConfig(AppConfig):
    name = "annotator.inference"
    label = "inference"
