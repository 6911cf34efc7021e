"""Gold checks' background work: gold copies made ahead of the claims that serve them (Celery beat's
periodic ``gold.premake``, and ``gold.premake_for`` after each claim)."""

from celery import shared_task

from annotator.gold import claims


@shared_task(name="gold.premake", time_limit=60, soft_time_limit=50, ignore_result=True)
def premake() -> int:
    """Celery beat, every ``GOLD_PREMAKE_EVERY_S`` seconds: ``claims.premake`` (idempotent: a copy
    already waiting for a person is not made twice). Returns how many copies were made."""
    return claims.premake()


@shared_task(name="gold.premake_for", time_limit=60, soft_time_limit=50, ignore_result=True)
def premake_for(project_id: int, user_id: int) -> int:
    """Sent by each counted claim of a project with gold (``claims.gate``): ``claims.premake`` for
    that one person, so the copy their next claim may draw is made right after this one. No job row:
    beat's ``gold.premake`` makes the same copies if a message is lost. Returns 0 or 1 copies made."""
    return claims.premake(project_id=project_id, user_id=user_id)
