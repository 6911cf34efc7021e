"""Thin client for any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp).

One function, ``chat``: sends text and JPEG frames, returns the reply text with token counts and
latency, or raises ModelCallError with a reason fit to store on the run.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass

import openai


class ModelCallError(Exception):
    """The request failed: connection, timeout, HTTP error, or an empty/refused reply."""


@dataclass(frozen=True)
class ModelReply:
    """A model's answer. ``latency_ms`` is wall-clock time of the request in milliseconds."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: int


def image_part(jpeg: bytes) -> dict:
    """A chat content part carrying one JPEG as a data URL."""
    return {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(jpeg).decode()}}


def chat(*, base_url: str, api_key: str, model: str, system: str, content: list[dict], timeout_s: float) -> ModelReply:
    """One chat completion. ``content`` is the user message's parts (text and image_url dicts).

    Retries are the caller's business (the client's own are turned off so every attempt is
    recorded). Raises ModelCallError on any transport or API error, and on a reply with no text
    (a refusal is reported in ``message.refusal`` by servers that support it).
    """
    client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
    started = time.perf_counter()
    try:
        response = client.chat.completions.create(
            model=model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": content}],
            temperature=0.2,
        )
    except openai.APIError as exc:
        raise ModelCallError(f"{type(exc).__name__}: {exc}") from None
    latency_ms = round((time.perf_counter() - started) * 1000)
    if not response.choices:
        raise ModelCallError("reply has no choices")
    message = response.choices[0].message
    refusal = getattr(message, "refusal", None)
    if refusal:
        raise ModelCallError(f"refused: {refusal}")
    usage = response.usage
    return ModelReply(
        text=message.content or "",
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        latency_ms=latency_ms,
    )
