from django.apps import AppConfig


class StudiesConfig(AppConfig):
    name = "annotator.studies"
    label = "studies"
    verbose_name = "human-baseline studies"

    def ready(self):
        from annotator.studies import file_access  # noqa: F401  (registers who may fetch frames and study clips)
