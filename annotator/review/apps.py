from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "annotator.review"
    label = "review"

    def ready(self):
        # Extension points of other apps, registered here so that they import nothing of this one:
        # the submit hook (a submitted pass enters review), the rework part of the unit payload, and
        # the rework_rate figure.
        from annotator.qa.selectors import register_payload_part
        from annotator.qa.services import after_submit
        from annotator.review import figures  # noqa: F401 (registers rework_rate)
        from annotator.review.selectors import rework_part
        from annotator.review.services import note_submission

        after_submit(note_submission)
        register_payload_part("review")(rework_part)
