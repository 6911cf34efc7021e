"""Thin client for any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp).

One function, ``chat``: sends text and JPEG frames (optionally with a JSON Schema the reply must
follow), returns the reply text with token counts and latency, or raises ModelCallError with a
reason fit to store on the run and, for a 429 or 503, the server's ``Retry-After`` in seconds.
"""

from __future__ import annotations

import base64
import email.utils
import threading
import time
from dataclasses import dataclass

import openai


class ModelCallError(Exception):
    """The request failed: connection, timeout, HTTP error, or an empty/refused reply.

    ``kind`` is one of ``timeout``, ``rate_limited``, ``refused``, ``http``, ``connection``,
    ``empty``; ``retry_after_s`` is the server's ``Retry-After`` in seconds (None when absent)."""

    def __init__(self, message: str, *, kind: str = "http", retry_after_s: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.retry_after_s = retry_after_s


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


def retry_after_s(headers) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), or None.
    Negative or unparseable values give None."""
    value = (headers or {}).get("retry-after") if headers is not None else None
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return seconds if seconds >= 0 else None


_clients: dict[tuple[str, str, float], openai.OpenAI] = {}
_clients_lock = threading.Lock()


def client_for(base_url: str, api_key: str, timeout_s: float) -> openai.OpenAI:
    """One ``openai.OpenAI`` client per (base URL, key, timeout), made once and shared by threads
    (it keeps its HTTP connections open; a new client per call cost 30-75 ms of a server's slot in
    ``bench/drafting.py``). Its own retries are off: the caller records and retries every attempt."""
    key = (base_url, api_key, timeout_s)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
        return client


def chat(
    *,
    base_url: str,
    api_key: str,
    model: str,
    system: str,
    content: list[dict],
    timeout_s: float,
    response_format: dict | None = None,
    temperature: float = 0.2,
) -> ModelReply:
    """One chat completion. ``content`` is the user message's parts (text and image_url dicts);
    ``response_format`` is passed as is (e.g. ``{"type": "json_schema", "json_schema": {...}}``).

    Retries are the caller's business (the client's own are turned off so every attempt is
    recorded). Raises ModelCallError on any transport or API error, and on a reply with no text
    (a refusal is reported in ``message.refusal`` by servers that support it).
    """
    client = client_for(base_url, api_key, timeout_s)
    started = time.perf_counter()
    extra = {"response_format": response_format} if response_format else {}
    try:
        response = client.chat.completions.create(
            model=model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": content}],
            temperature=temperature,
            **extra,
        )
    except openai.APITimeoutError:
        raise ModelCallError(f"timed out after {timeout_s:g} s", kind="timeout") from None
    except openai.APIConnectionError as exc:
        raise ModelCallError(f"APIConnectionError: {exc}", kind="connection") from None
    except openai.APIStatusError as exc:
        kind = "rate_limited" if exc.status_code == 429 else "http"
        raise ModelCallError(
            f"{type(exc).__name__}: {exc}", kind=kind, retry_after_s=retry_after_s(exc.response.headers)
        ) from None
    except openai.APIError as exc:
        raise ModelCallError(f"{type(exc).__name__}: {exc}") from None
    latency_ms = round((time.perf_counter() - started) * 1000)
    if not response.choices:
        raise ModelCallError("reply has no choices", kind="empty")
    message = response.choices[0].message
    refusal = getattr(message, "refusal", None)
    if refusal:
        raise ModelCallError(f"refused: {refusal}", kind="refused")
    usage = response.usage
    return ModelReply(
        text=message.content or "",
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        latency_ms=latency_ms,
    )
