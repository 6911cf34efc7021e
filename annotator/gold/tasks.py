"""Gold checks' periodic work (Celery beat): gold copies made ahead of the claims that serve them."""

from celery import shared_task

from annotator.gold import claims


@shared_task(name="gold.premake", time_limit=60, soft_time_limit=50, ignore_result=True)
def premake() -> int:
    """Celery beat, every ``GOLD_PREMAKE_EVERY_S`` seconds: ``claims.premake`` (idempotent: a copy
    already waiting for a person is not made twice). Returns how many copies were made."""
    return claims.premake()
