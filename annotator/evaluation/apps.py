from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "annotator.evaluation"
    label = "evaluation"
    verbose_name = "model evaluation"

    def ready(self):
        from annotator.evaluation import prompts  # noqa: F401  (registers the judge stage with the engine)
