from django.apps import AppConfig


class StudiesConfig(AppConfig):
    name = "annotator.studies"
    label = "studies"
    verbose_name = "human-baseline studies"

    def ready(self):
        from django.conf import settings
        from django.db.models.signals import pre_delete

        from annotator.studies import file_access  # noqa: F401  (registers who may fetch frames and study clips)
        from annotator.studies.links import lock_participants_of

        pre_delete.connect(
            lock_participants_of, sender=settings.AUTH_USER_MODEL, dispatch_uid="studies.lock_participants_of"
        )
