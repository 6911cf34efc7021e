from django.apps import AppConfig


class TeamConfig(AppConfig):
    name = "annotator.team"
    label = "team"
