from django.apps import AppConfig


class QAConfig(AppConfig):
    name = "annotator.qa"
    label = "qa"

    def ready(self):
        from annotator.qa import file_access  # noqa: F401  (registers the grant to play a held unit's videos)
