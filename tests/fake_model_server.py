"""An OpenAI-compatible chat-completions server on loopback, for tests and ``bench/drafting.py``.

It answers by the JSON Schema a request carries in ``response_format`` (the stage's name is the
schema's ``name``): a per-stage ``responders[stage](body)`` when set (returning a dict, sent as
JSON, or a str, sent as is), else a minimal instance generated from the schema. Without a schema,
``responders[""](body)`` answers when set, else ``replies`` are served in order (the last one
repeats), as the one-prompt ``llm`` pipeline wants.

Failures to order, consumed first (``fail_next``): ``malformed`` (text that is not JSON),
``invalid`` (JSON that breaks the schema), ``refuse`` (a ``message.refusal``), ``slow`` (sleeps
``seconds`` before answering, for client timeouts), ``429`` (Too Many Requests with a
``Retry-After`` header) and ``500``. ``delay_s`` is added to every reply (the benchmark's 500 ms).
Every request body is kept in ``requests``; ``stages`` lists the stage of each and
``authorizations`` its Authorization header.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


def instance_of(schema: dict, seed: int = 0) -> object:
    """A small value valid against ``schema`` (objects with every property, arrays at their
    ``minItems`` or 1, the first enum value, integers at their minimum)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return instance_of(schema["anyOf"][0], seed)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {k: instance_of(v, seed) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        n = max(schema.get("minItems", 1), 1)
        n = min(n, schema.get("maxItems", n))
        return [instance_of(schema.get("items", {}), seed + i) for i in range(n)]
    if kind == "string":
        text = f"text {seed + 1}"
        return text.ljust(schema.get("minLength", 0), "x")
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return True
    return None


class FakeModelServer:
    """See the module docstring. Listens on 127.0.0.1:``port`` (0: any free port); ``base_url`` ends
    in ``/v1``; ``close()`` stops it. ``keep_requests=False`` (a long-lived server) keeps no request
    bodies, headers or stages."""

    def __init__(self, *, delay_s: float = 0.0, port: int = 0, keep_requests: bool = True):
        self.replies: list[str] = []
        self.requests: list[dict] = []
        self.stages: list[str] = []
        self.authorizations: list[str] = []
        self.responders: dict[str, Callable[[dict], object]] = {}
        self.delay_s = delay_s
        self.keep_requests = keep_requests
        self.n_requests = 0
        self._failures: list[tuple[str | None, str, dict]] = []
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Replies go out as headers then body: with Nagle's algorithm on, a client reusing the
            # connection waits out its delayed ACK (about 40 ms) for the body.
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if server.keep_requests:
                    server.authorizations.append(self.headers.get("Authorization", ""))
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self._counted = True
                try:
                    server._answer(self, body)
                finally:
                    self._leave()

            def _leave(self):
                # Before the reply is written: once the client has it, it may start its next request.
                if getattr(self, "_counted", False):
                    self._counted = False
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, status: int, payload: dict, headers: dict | None = None):
                data = json.dumps(payload).encode()
                self._leave()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.request_queue_size = 256
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        # shutdown() waits for the loop to look at its flag: every 20 ms, not socketserver's 0.5 s, which
        # every test using the server paid at teardown.
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    # ------------------------------------------------------------------ scripting

    def fail_next(self, kind: str, *, stage: str | None = None, n: int = 1, **options) -> None:
        """Make the next ``n`` requests (of ``stage`` only, when given) fail as ``kind``:
        ``malformed``, ``invalid``, ``refuse``, ``slow`` (``seconds=``), ``429`` (``retry_after=``
        seconds, default 1) or ``500``."""
        with self._lock:
            self._failures.extend((stage, kind, options) for _ in range(n))

    def calls_of(self, stage: str) -> list[dict]:
        """The request bodies of one stage, in order."""
        return [b for b, s in zip(self.requests, self.stages) if s == stage]

    # ------------------------------------------------------------------ answering

    def _take_failure(self, stage: str) -> tuple[str, dict] | None:
        with self._lock:
            for i, (want, kind, options) in enumerate(self._failures):
                if want is None or want == stage:
                    del self._failures[i]
                    return kind, options
        return None

    def _answer(self, handler, body: dict) -> None:
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema")
        stage = (fmt.get("json_schema") or {}).get("name", "")
        with self._lock:
            self.n_requests += 1
            n = self.n_requests
            if self.keep_requests:
                self.requests.append(body)
                self.stages.append(stage)
        if self.delay_s:
            time.sleep(self.delay_s)
        failure = self._take_failure(stage)
        refusal = None
        if failure is not None:
            kind, options = failure
            if kind == "429":
                handler._send(
                    429,
                    {"error": {"message": "rate limited", "type": "rate_limit"}},
                    {"Retry-After": str(options.get("retry_after", 1))},
                )
                return
            if kind == "500":
                handler._send(500, {"error": {"message": "server error"}})
                return
            if kind == "slow":
                time.sleep(options.get("seconds", 5))
        if failure is not None and failure[0] == "malformed":
            text = '{"this is": not json'
        elif failure is not None and failure[0] == "invalid":
            text = json.dumps({"unexpected": True})
        elif failure is not None and failure[0] == "refuse":
            text, refusal = None, "I can't help with that."
        elif schema is not None:
            responder = self.responders.get(stage)
            value = responder(body) if responder else instance_of(schema, n)
            text = value if isinstance(value, str) else json.dumps(value)
        elif "" in self.responders:  # a free-text request with a responder for free text
            text = str(self.responders[""](body))
        else:
            index = min(n - 1, len(self.replies) - 1)
            text = self.replies[index] if self.replies else ""
        message = {"role": "assistant", "content": text}
        if refusal:
            message["refusal"] = refusal
        handler._send(
            200,
            {
                "id": f"cmpl-{n}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": {"prompt_tokens": 100 + n, "completion_tokens": 20, "total_tokens": 120 + n},
            },
        )

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def user_text(body: dict) -> str:
    """The text part of a request's user message."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p.get("type") == "text")


def n_images(body: dict) -> int:
    """How many images a request carries."""
    content = body["messages"][-1]["content"]
    return 0 if isinstance(content, str) else sum(1 for p in content if p.get("type") == "image_url")
