from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "annotator.reports"
    label = "reports"
    verbose_name = "benchmark report"
