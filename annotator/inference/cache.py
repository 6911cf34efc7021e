"""The call cache: a successful answer keyed by the content of what was asked, reused without a request.

The key is the SHA-256 of (model, stage, prompt version, system prompt, schema, input text, image
key, captions): ``engine.cache_key``, beside the stage and input it reads. A later call of the same project with the same key reuses the newest answered
call; the engine stores the hit as a call row with ``cached_from`` set and cost 0 (``call_stage``),
so re-running over unchanged inputs costs nothing and resumes where it failed.
"""

from __future__ import annotations

from annotator.inference.models import ModelCall


def answered(key: str, project_id: int | None) -> ModelCall | None:
    """The newest call of ``project_id`` with cache key ``key`` that was answered by the model
    itself (no error, an output, not a cache hit), with only ``id`` and ``output`` loaded; or None."""
    return (
        ModelCall.objects.filter(cache_key=key, project_id=project_id, error="", cached_from__isnull=True)
        .filter(output__isnull=False)
        .order_by("-id")
        .only("id", "output")
        .first()
    )
