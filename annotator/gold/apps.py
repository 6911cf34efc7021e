from django.apps import AppConfig


class GoldConfig(AppConfig):
    name = "annotator.gold"
    label = "gold"
