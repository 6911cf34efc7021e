"""The stage engine: calling a model for one stage: structured output, validation, retries, cache, cost.

A *stage* (``Stage``) is a prompt with a version, a JSON Schema the answer must follow, and an
optional rule check beyond the schema (e.g. VUDG's distractor rules). ``call_stage`` sends the
stage's input to an *endpoint* (a server snapshot, ``Endpoint``) as

    response_format={"type": "json_schema", "json_schema": {"name": STAGE, "schema": ..., "strict": true}}

validates the reply with ``jsonschema`` and the stage's check, and stores every attempt as a
``ModelCall`` (input, prompt version, raw output, parsed output, model, tokens, latency, error,
estimated cost). A malformed or rule-breaking answer, a refusal, a timeout, a 429 or a transport
error is recorded and retried with exponential backoff (``LLM_BACKOFF_BASE_S`` x 2^(n-1), capped at
``LLM_BACKOFF_CAP_S``), or after the server's ``Retry-After`` when it sent one; after
``LLM_MAX_ATTEMPTS`` attempts ``StageFailed`` is raised. Nothing is written but call rows: saving
what a stage produced is the caller's business, in its own transaction.

Cache (``annotator.inference.cache``): a successful answer is keyed by the SHA-256 of (model,
stage, prompt version, system prompt, schema, input text, image key). A later call of the same
project with the same key reuses it without a request: the cache hit is stored as a call row with
``cached_from`` set and cost 0, so re-running over unchanged inputs costs nothing and resumes
where it failed.

Concurrency: every request holds one of the server's ``concurrency`` slots, counted in Redis
across all workers and processes (``annotator.inference.slots.ServerSlots``).

Drafting pipelines, evaluations and study evaluations all call their models through here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable

import jsonschema
from django.conf import settings

from annotator.adapters import ffmpeg, llm
from annotator.inference import cache
from annotator.inference.errors import MalformedModelOutput, MissingKey, RunCancelled, StageFailed
from annotator.inference.models import KEY_ENV_PATTERN, KEY_ENV_RULE, ModelCall, ModelServer
from annotator.inference.slots import ServerSlots

__all__ = [
    "STAGES",
    "STAGE_NAME",
    "Endpoint",
    "MalformedModelOutput",
    "MissingKey",
    "RunCancelled",
    "ServerSlots",
    "Stage",
    "StageFailed",
    "StageInput",
    "backoff_s",
    "cache_key",
    "call_stage",
    "parse_reply",
    "register",
]

NO_KEY = "no-key"  # sent to a server configured without a key variable (openai needs some key)


@dataclass(frozen=True)
class Stage:
    """One stage of a pipeline.

    ``schema`` is a JSON Schema in the strict subset of OpenAI structured outputs (every object has
    ``additionalProperties: false`` and lists all its properties as ``required``). A stage with
    ``schema=None`` asks for free text (a model under evaluation answering as the papers prompted
    it): no ``response_format`` is sent and the output is ``{"text": reply}``. ``check(output,
    context)`` may raise MalformedModelOutput for rules a schema cannot say (``context`` is the
    dict the caller passes to ``call_stage``); a breach is recorded and retried like bad JSON.
    """

    name: str
    prompt_version: str
    system: str
    schema: dict | None
    check: Callable[[dict, dict], None] | None = None
    temperature: float = 0.2

    def response_format(self) -> dict | None:
        """The ``response_format`` sent with every request of this stage (None for free text)."""
        if self.schema is None:
            return None
        return {"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema, "strict": True}}


# Every stage, by name: registered by the modules that define them (the drafting pipelines, the
# evaluation's judge). A run configures a server per stage name.
STAGES: dict[str, Stage] = {}
STAGE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


def register(stage: Stage) -> Stage:
    """Add ``stage`` to ``STAGES``; returns it. Raises ValueError for a name that is not 1 to 40
    lower-case letters, digits and underscores, or an invalid JSON schema."""
    if not STAGE_NAME.match(stage.name):
        raise ValueError(f"a stage name is 1 to 40 lower-case letters, digits and underscores: {stage.name!r}")
    if stage.schema is not None:
        jsonschema.Draft202012Validator.check_schema(stage.schema)
    STAGES[stage.name] = stage
    return stage


@dataclass(frozen=True)
class Endpoint:
    """What a run knows of the server a stage calls: ``ModelServer.snapshot()`` as stored on the run.
    Prices in USD per million tokens; ``timeout_s`` in seconds."""

    server: str
    base_url: str
    model: str
    key_env: str = ""
    concurrency: int = 4
    timeout_s: float = 120.0
    price_prompt_per_mtok: float = 0.0
    price_completion_per_mtok: float = 0.0
    server_id: int | None = None

    @classmethod
    def from_snapshot(cls, snap: dict) -> Endpoint:
        """Build from a stored snapshot; unknown keys are ignored."""
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in snap.items() if k in names})

    @classmethod
    def of(cls, server: ModelServer) -> Endpoint:
        return cls.from_snapshot(server.snapshot())

    def api_key(self) -> str:
        """The key from the environment variable ``key_env``; with none named, the placeholder
        ``NO_KEY`` (a server with no key never gets another server's). Raises MissingKey when the
        named variable is unset or empty, or its name does not end in ``_API_KEY``."""
        if not self.key_env:
            return NO_KEY
        if not re.fullmatch(KEY_ENV_PATTERN, self.key_env):
            raise MissingKey(f"the key variable of server {self.server!r} must be {KEY_ENV_RULE}, not {self.key_env}")
        value = os.environ.get(self.key_env)
        if not value:
            raise MissingKey(
                f"the environment variable {self.key_env} (the API key of server {self.server!r}) is not set"
            )
        return value

    def cost_usd(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        """Estimated cost in USD of one call, or None when the server reported no token counts."""
        if prompt_tokens is None and completion_tokens is None:
            return None
        return (
            (prompt_tokens or 0) * self.price_prompt_per_mtok
            + (completion_tokens or 0) * self.price_completion_per_mtok
        ) / 1e6


# ----------------------------------------------------------------------------- calling a stage


@dataclass
class StageInput:
    """What one call of a stage sends: ``text`` (the user message) and images.

    ``image_key`` identifies the images by content (e.g. the video's sha256, the frame times in
    seconds and the frame size) for the cache; ``images`` is called only on a cache miss and returns
    JPEG bytes in the order the text describes them. ``captions`` {image index: text} are text parts
    sent just before the image of that index (the label introducing each video's frames when several
    videos are sent, EgoExoBench seed 001 App. B.1 Fig. 18: "Video1: <frames> Video2: <frames>").
    ``context`` is passed to the stage's check.
    """

    text: str
    image_key: str = ""
    images: Callable[[], list[bytes]] | None = None
    context: dict = field(default_factory=dict)
    record: dict = field(default_factory=dict)  # extra input fields stored on the call (frame times, ids)
    captions: dict[int, str] = field(default_factory=dict)


def cache_key(stage: Stage, endpoint: Endpoint, inp: StageInput) -> str:
    """SHA-256 hex of the model, stage, prompt version, system prompt, schema, text, image key and
    captions (when there are any: keys of inputs without captions are as they always were)."""
    parts = [endpoint.model, stage.name, stage.prompt_version, stage.system, stage.schema, inp.text, inp.image_key]
    if inp.captions:
        parts.append(sorted(inp.captions.items()))
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def parse_reply(stage: Stage, text: str, context: dict) -> dict:
    """The reply as a dict valid against the stage's schema and check; raises MalformedModelOutput.
    A reply wrapped in a ```json fence is accepted (some servers ignore ``response_format``)."""
    body = (text or "").strip()
    if stage.schema is None:
        if not body:
            raise MalformedModelOutput("empty reply")
        data = {"text": body}
        if stage.check:
            stage.check(data, context)
        return data
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    if not body:
        raise MalformedModelOutput("empty reply")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise MalformedModelOutput(f"not JSON: {exc}") from None
    errors = sorted(jsonschema.Draft202012Validator(stage.schema).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        where = "/".join(map(str, errors[0].path)) or "(root)"
        raise MalformedModelOutput(f"does not match the {stage.name} schema at {where}: {errors[0].message}")
    if stage.check:
        stage.check(data, context)
    return data


def backoff_s(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): the server's Retry-After when it
    sent one (capped at ``LLM_BACKOFF_CAP_S``), else ``LLM_BACKOFF_BASE_S`` x 2^(attempt-1), capped."""
    cap = settings.LLM_BACKOFF_CAP_S
    if retry_after is not None:
        return min(cap, retry_after)
    return min(cap, settings.LLM_BACKOFF_BASE_S * 2 ** (attempt - 1))


def call_stage(
    stage: Stage | str,
    endpoint: Endpoint,
    inp: StageInput,
    *,
    project_id: int | None,
    job=None,
    use_cache: bool = True,
    max_attempts: int | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    sleep: Callable[[float], None] = time.sleep,
) -> dict:
    """Get a valid answer of ``stage`` from ``endpoint`` for ``inp``; returns the parsed dict.

    Every attempt (and a cache hit) is stored as a ModelCall of ``project_id`` and ``job`` (a
    drafting run's ``DraftJob``, or None).
    Raises StageFailed after ``max_attempts`` (default ``LLM_MAX_ATTEMPTS``) unusable answers, or
    at once when the server's key variable is unset; RunCancelled when ``cancelled()`` is true
    before an attempt.
    """
    stage = STAGES[stage] if isinstance(stage, str) else stage
    key = cache_key(stage, endpoint, inp)
    request = {"system": stage.system, "text": inp.text, "image_key": inp.image_key, **inp.record}
    if inp.captions:
        request["captions"] = {str(i): c for i, c in sorted(inp.captions.items())}
    base = dict(
        project_id=project_id,
        job=job,
        server_id=endpoint.server_id,
        stage=stage.name,
        prompt_version=stage.prompt_version,
        model=endpoint.model,
        request=request,
        cache_key=key,
    )
    if use_cache:
        hit = cache.answered(key, project_id)
        if hit is not None:
            ModelCall.objects.create(**base, attempt=0, output=hit.output, cached_from=hit, cost_usd=0.0, latency_ms=0)
            return hit.output
    try:
        api_key = endpoint.api_key()
    except MissingKey as exc:
        ModelCall.objects.create(**base, attempt=1, error=str(exc))
        raise StageFailed(stage.name, str(exc)) from None
    max_attempts = max_attempts or settings.LLM_MAX_ATTEMPTS
    # One set of slots per configured server, whichever model is asked for on it.
    slot_key = f"server-{endpoint.server_id}" if endpoint.server_id else endpoint.base_url
    slots = ServerSlots(slot_key, endpoint.concurrency, lease_s=endpoint.timeout_s * 2 + 60)
    images: list[bytes] | None = None
    last = ""
    for attempt in range(1, max_attempts + 1):
        if cancelled():
            raise RunCancelled()
        call = ModelCall(**base, attempt=attempt)
        retry_after = None
        try:
            if images is None:
                images = inp.images() if inp.images else []
            content = [{"type": "text", "text": inp.text}]
            for i, jpeg in enumerate(images):
                if i in inp.captions:
                    content.append({"type": "text", "text": inp.captions[i]})
                content.append(llm.image_part(jpeg))
            with slots.hold(cancelled):
                reply = llm.chat(
                    base_url=endpoint.base_url,
                    api_key=api_key,
                    model=endpoint.model,
                    system=stage.system,
                    content=content,
                    timeout_s=endpoint.timeout_s,
                    response_format=stage.response_format(),
                    temperature=stage.temperature,
                )
            call.raw_output, call.latency_ms = reply.text, reply.latency_ms
            call.prompt_tokens, call.completion_tokens = reply.prompt_tokens, reply.completion_tokens
            call.cost_usd = endpoint.cost_usd(reply.prompt_tokens, reply.completion_tokens)
            call.output = parse_reply(stage, reply.text, inp.context)
        except llm.ModelCallError as exc:
            call.error, retry_after = f"{exc.kind}: {exc}", exc.retry_after_s
        except MalformedModelOutput as exc:
            call.error, call.output = f"malformed: {exc}", None
        except ffmpeg.MediaError as exc:  # frames could not be sampled: the input is at fault, not the model
            call.error = f"media: {exc}"
            call.save()
            raise StageFailed(stage.name, call.error) from None
        call.retry_after_s = retry_after
        call.save()
        if not call.error:
            return call.output
        last = call.error
        if attempt < max_attempts:
            sleep(backoff_s(attempt, retry_after))
    raise StageFailed(stage.name, f"no usable answer in {max_attempts} attempts; last: {last}")
