from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "annotator.review"
    label = "review"
