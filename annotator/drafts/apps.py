from django.apps import AppConfig


class DraftsConfig(AppConfig):
    name = "annotator.drafts"
    label = "drafts"

    def ready(self):
        from annotator.drafts import pipelines  # noqa: F401  (each module registers its pipeline)
