from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "annotator.evaluation"
    label = "evaluation"
    verbose_name = "model evaluation"

    def ready(self):
        # prompts registers the judge stage with the engine; study_items registers study items with the runs.
        from annotator.evaluation import prompts, study_items  # noqa: F401
