from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "annotator.core"
    label = "core"
    verbose_name = "jobs"

    def ready(self) -> None:
        from django.core.signals import request_finished, request_started

        from annotator import jobs

        request_started.connect(jobs.request_started, dispatch_uid="jobs.request_started")
        request_finished.connect(jobs.request_finished, dispatch_uid="jobs.request_finished")
