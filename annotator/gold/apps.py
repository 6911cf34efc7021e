"""Onboarding, qualification and gold checks (issue 20, sections 1 and 2)."""

from django.apps import AppConfig


class GoldConfig(AppConfig):
    name = "annotator.gold"
    label = "gold"

    def ready(self):
        # Extension points of qa and team (arrows point down: they import nothing of gold).
        from annotator.access import files
        from annotator.gold import checks, claims, figures  # noqa: F401 (figures registers gold_accuracy)
        from annotator.gold import selectors as gold_selectors
        from annotator.qa import queue, selectors, services

        queue.before_claim(claims.gate)
        services.after_submit(checks.on_submit)
        services.after_skip(checks.on_skip)
        selectors.register_payload_part("qualification")(checks.qualification_part)
        files.grant_video(gold_selectors.shows_example)
