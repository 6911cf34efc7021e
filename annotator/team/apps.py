"""The annotation team (issue 20, sections 5 and 6): active time from heartbeats, per-annotator
figures (a registry other apps add figures to), pay rates and the pay report."""

from django.apps import AppConfig


class TeamConfig(AppConfig):
    name = "annotator.team"
    label = "team"

    def ready(self):
        # The submit hook (a beat per submit) and this app's figures register themselves on import.
        from annotator.team import activity, stats  # noqa: F401
