from django.apps import AppConfig


class AgreementConfig(AppConfig):
    name = "annotator.agreement"
    label = "agreement"
    verbose_name = "inter-annotator agreement"

    def ready(self) -> None:
        from annotator.agreement import export_part, services  # noqa: F401 (export_part registers itself)
        from annotator.qa.services import after_submit

        after_submit(services.overlap_submitted)  # issue 20: overlap disagreements go to consensus
