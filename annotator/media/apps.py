from django.apps import AppConfig


class MediaConfig(AppConfig):
    name = "annotator.media"
    label = "media"

    def ready(self):
        from annotator.media import file_access  # noqa: F401  (registers who may fetch a video's files)
