"""The call cache: a successful answer keyed by the content of what was asked, reused without a request.

The key is the SHA-256 of (model, stage, prompt version, system prompt, schema, input text, image
key, captions). A later call of the same project with the same key reuses the newest answered
call; the engine stores the hit as a call row with ``cached_from`` set and cost 0 (``call_stage``),
so re-running over unchanged inputs costs nothing and resumes where it failed.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from annotator.inference.models import ModelCall

if TYPE_CHECKING:
    from annotator.inference.engine import Endpoint, Stage, StageInput


def cache_key(stage: Stage, endpoint: Endpoint, inp: StageInput) -> str:
    """SHA-256 hex of the model, stage, prompt version, system prompt, schema, text, image key and
    captions (when there are any: keys of inputs without captions are as they always were)."""
    parts = [endpoint.model, stage.name, stage.prompt_version, stage.system, stage.schema, inp.text, inp.image_key]
    if inp.captions:
        parts.append(sorted(inp.captions.items()))
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def answered(key: str, project_id: int | None) -> ModelCall | None:
    """The newest call of ``project_id`` with cache key ``key`` that was answered by the model
    itself (no error, an output, not a cache hit), with only ``id`` and ``output`` loaded; or None."""
    return (ModelCall.objects.filter(cache_key=key, project_id=project_id, error="", cached_from__isnull=True)
            .filter(output__isnull=False).order_by("-id").only("id", "output").first())
