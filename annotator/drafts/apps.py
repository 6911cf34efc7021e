from django.apps import AppConfig


class DraftsConfig(AppConfig):
    name = "annotator.drafts"
    label = "drafts"
