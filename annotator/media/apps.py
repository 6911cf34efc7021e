from django.apps import AppConfig


class MediaConfig(AppConfig):
    name = "annotator.media"
    label = "media"
