"""A loopback server speaking Anthropic's Messages and Message Batches APIs, for the anthropic backend's tests.

Shapes as Anthropic documents them:

* ``POST /v1/messages``: ``{"model", "max_tokens", "messages": [{"role": "user"|"assistant",
  "content"}], "system"?, "temperature"?, "top_p"?}`` -> ``{"id", "type": "message", "role":
  "assistant", "model", "content": [{"type": "text", "text"}], "stop_reason": "end_turn" |
  "max_tokens", "stop_sequence", "usage": {"input_tokens", "output_tokens"}}``. The text is
  ``"claude:"`` and the words of the last user turn, then ``system=<first word>`` and the sampling
  parameters received, cut at ``max_tokens`` words. Errors are ``{"type": "error", "error":
  {"type", "message"}}`` (``authentication_error`` 401 without the right ``x-api-key``, or the
  ``Authorization: Bearer`` header that newer SDKs send,
  ``invalid_request_error`` 400, ``not_found_error`` 404 for an unknown model, injected 429/529).
* ``POST /v1/messages/batches`` ``{"requests": [{"custom_id", "params"}]}`` (custom ids
  ``^[a-zA-Z0-9_-]{1,64}$``, unique, at most 100,000), ``GET /v1/messages/batches/{id}``
  (``processing_status`` in_progress -> ended after ``steps`` looks, or ``canceling`` -> ended),
  ``GET /v1/messages/batches/{id}/results`` (JSONL: ``{"custom_id", "result": {"type": "succeeded",
  "message"} | {"type": "errored", "error": {"type": "error", "error": {...}}} | {"type":
  "expired"} | {"type": "canceled"}}``), ``POST /v1/messages/batches/{id}/cancel``, ``GET
  /v1/messages/batches?limit=&after_id=`` (newest first).

:class:`AnthropicConfig` makes chosen batches (1-based, by creation) expire half-way, fail every
third line with ``api_error``, stay in progress while ``hold`` is set, or delay the answer to their
creation (``create_delay``: registered first, so a client killed then never learns the id); the
results of ``malformed`` batches have their second line cut short (not JSON).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass
class AnthropicConfig:
    api_key: str | None = None
    models: tuple[str, ...] | None = None
    fault: int | str | None = None  # answer this status, or one of BAD_REPLIES, to the first fail_first attempts
    fail_first: int = 0
    retry_after: str | None = None
    expire: set[int] = field(default_factory=set)
    fail_lines: set[int] = field(default_factory=set)
    hold: threading.Event = field(default_factory=threading.Event)
    create_delay: float = 0.0
    malformed: set[int] = field(default_factory=set)
    steps: int = 2  # looks at an in-progress batch before it ends


BAD_REPLIES = ("truncated-json", "not-json", "html-page", "no-content")  # broken message answers with status 200


def bad_reply(fault: str, answer: dict[str, Any]) -> tuple[bytes, str]:
    """(body, content type) of a broken 200 answer in place of ``answer``."""
    if fault == "html-page":
        return b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"
    if fault == "not-json":
        return b"upstream connect error or disconnect/reset before headers", "application/json"
    if fault == "no-content":
        answer = {k: v for k, v in answer.items() if k != "content"}
    data = json.dumps(answer).encode()
    return (data[: len(data) // 2] if fault == "truncated-json" else data), "application/json"


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def message_answer(cfg: AnthropicConfig, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    model, max_tokens, messages = body.get("model"), body.get("max_tokens"), body.get("messages")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return 400, _error("invalid_request_error", "max_tokens: Field required")
    if (
        not isinstance(messages, list)
        or not messages
        or any(m.get("role") not in ("user", "assistant") for m in messages)
    ):
        return 400, _error("invalid_request_error", "messages: roles must be user or assistant")
    if cfg.models is not None and model not in cfg.models:
        return 404, _error("not_found_error", f"model: {model}")
    last_user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    if isinstance(last_user, list):
        last_user = " ".join(b.get("text", "") for b in last_user)
    words = ["claude:", *str(last_user).split()]
    system = body.get("system")
    if system:
        words.append(f"system={str(system).split()[0]}")
    words += [f"{k}={body[k]}" for k in ("temperature", "top_p") if k in body]
    reason = "end_turn"
    if len(words) > max_tokens:
        words, reason = words[:max_tokens], "max_tokens"
    n_in = sum(len(str(m["content"]).split()) for m in messages)
    return 200, {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": " ".join(words)}],
        "stop_reason": reason,
        "stop_sequence": None,
        "usage": {"input_tokens": n_in, "output_tokens": len(words)},
    }


class AnthropicTestServer:
    def __init__(self, **config: Any) -> None:
        self.config = AnthropicConfig(**config)
        self.lock = threading.Lock()
        self.by_path: Counter = Counter()
        self.attempts: Counter = Counter()
        self.headers: list[dict[str, str]] = []
        self.bodies: list[dict[str, Any]] = []
        self.batches: dict[str, dict[str, Any]] = {}
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.looks: Counter = Counter()
        self.created = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def online_calls(self) -> int:
        return self.by_path["/v1/messages"]

    def __enter__(self) -> AnthropicTestServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    # -- batches ---------------------------------------------------------------------------
    def new_batch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        reqs = body.get("requests")
        if not isinstance(reqs, list) or not 1 <= len(reqs) <= 100_000:
            return 400, _error("invalid_request_error", "requests: 1 to 100,000 items")
        ids = [r.get("custom_id") for r in reqs]
        if any(not isinstance(c, str) or not CUSTOM_ID.match(c) for c in ids) or len(set(ids)) != len(ids):
            return 400, _error("invalid_request_error", "custom_id: unique, ^[a-zA-Z0-9_-]{1,64}$")
        with self.lock:
            n = len(self.batches) + 1
            bid = f"msgbatch_{n:04d}"
            now = time.time()
            self.batches[bid] = {
                "id": bid,
                "type": "message_batch",
                "processing_status": "in_progress",
                "request_counts": {"processing": len(reqs), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
                "ended_at": None,
                "created_at": _iso(now),
                "expires_at": _iso(now + 86400),
                "archived_at": None,
                "cancel_initiated_at": None,
                "results_url": None,
                "ordinal": n,
            }
            self.requests[bid] = reqs
        self.created.set()
        return 200, self.batches[bid]

    def look(self, bid: str) -> dict[str, Any]:
        b = self.batches[bid]
        if b["processing_status"] == "ended" or (self.config.hold.is_set() and b["cancel_initiated_at"] is None):
            return b
        self.looks[bid] += 1
        if b["processing_status"] == "canceling" or self.looks[bid] > self.config.steps:
            self._end(b)
        return b

    def _end(self, b: dict[str, Any]) -> None:
        rows, counts = [], Counter()
        reqs = self.requests[b["id"]]
        for k, r in enumerate(reqs, 1):
            late = k > len(reqs) // 2
            if late and b["cancel_initiated_at"] is not None:
                result = {"type": "canceled"}
            elif late and b["ordinal"] in self.config.expire:
                result = {"type": "expired"}
            elif b["ordinal"] in self.config.fail_lines and k % 3 == 0:
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
                }
            else:
                status, payload = message_answer(self.config, r.get("params") or {})
                result = (
                    {"type": "succeeded", "message": payload}
                    if status == 200
                    else {"type": "errored", "error": payload}
                )
            counts[result["type"]] += 1
            rows.append({"custom_id": r["custom_id"], "result": result})
        b["request_counts"] = {
            "processing": 0,
            "succeeded": counts["succeeded"],
            "errored": counts["errored"],
            "canceled": counts["canceled"],
            "expired": counts["expired"],
        }
        lines = [json.dumps(x) for x in reversed(rows)]  # any order, as documented
        if b["ordinal"] in self.config.malformed:
            bad = min(1, len(lines) - 1)
            lines[bad] = lines[bad][: len(lines[bad]) // 2]
        b["results"] = "".join(x + "\n" for x in lines)
        b.update(
            processing_status="ended",
            ended_at=_iso(time.time()),
            results_url=f"{self.base_url}/v1/messages/batches/{b['id']}/results",
        )

    def public(self, b: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in b.items() if k not in ("ordinal", "results")}


def _handler(server: AnthropicTestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(
            self,
            status: int,
            payload: Any,
            content_type: str = "application/json",
            headers: dict[str, str] | None = None,
        ) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client went away (killed)
                self.close_connection = True

        def _checked(self) -> bool:
            with server.lock:
                server.by_path[urlsplit(self.path).path] += 1
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
            if not self.headers.get("anthropic-version"):
                self._send(400, _error("invalid_request_error", "anthropic-version: header is required"))
                return False
            key = server.config.api_key
            if key is not None and key not in (
                self.headers.get("x-api-key"),
                self.headers.get("Authorization", "").removeprefix("Bearer "),
            ):
                self._send(401, _error("authentication_error", "invalid x-api-key"))
                return False
            return True

        def do_GET(self) -> None:
            if not self._checked():
                return
            url = urlsplit(self.path)
            parts = url.path.strip("/").split("/")
            if parts == ["v1", "messages", "batches"]:
                q = parse_qs(url.query)
                limit, after = int(q.get("limit", ["20"])[0]), q.get("after_id", [None])[0]
                ordered = list(reversed(server.batches.values()))
                if after:
                    ids = [b["id"] for b in ordered]
                    ordered = ordered[ids.index(after) + 1 :] if after in ids else []
                page = ordered[:limit]
                self._send(
                    200,
                    {
                        "data": [server.public(b) for b in page],
                        "has_more": len(ordered) > limit,
                        "first_id": page[0]["id"] if page else None,
                        "last_id": page[-1]["id"] if page else None,
                    },
                )
            elif len(parts) == 4 and parts[3] in server.batches:
                self._send(200, server.public(server.look(parts[3])))
            elif len(parts) == 5 and parts[3] in server.batches and parts[4] == "results":
                b = server.batches[parts[3]]
                if b["processing_status"] != "ended":
                    self._send(400, _error("invalid_request_error", "the batch has not ended"))
                else:
                    self._send(200, b["results"].encode(), "application/binary")
            else:
                self._send(404, _error("not_found_error", f"no route {url.path}"))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not self._checked():
                return
            path = urlsplit(self.path).path
            body = json.loads(raw or b"{}")
            with server.lock:
                server.bodies.append(body)
            cfg = server.config
            if path == "/v1/messages":
                with server.lock:
                    server.attempts[raw] += 1
                    attempt = server.attempts[raw]
                if cfg.fault in BAD_REPLIES and attempt <= cfg.fail_first:
                    self._send(200, *bad_reply(str(cfg.fault), message_answer(cfg, body)[1]))
                    return
                if cfg.fault is not None and attempt <= cfg.fail_first:
                    kind = "rate_limit_error" if cfg.fault == 429 else "overloaded_error"
                    headers = {"retry-after": cfg.retry_after} if cfg.retry_after else None
                    self._send(int(cfg.fault), _error(kind, "injected fault"), headers=headers)
                    return
                self._send(*message_answer(cfg, body))
            elif path == "/v1/messages/batches":
                status, payload = server.new_batch(body)
                if status == 200 and cfg.create_delay:
                    time.sleep(cfg.create_delay)
                self._send(status, server.public(payload) if status == 200 else payload)
            elif path.endswith("/cancel") and path.split("/")[4] in server.batches:
                b = server.batches[path.split("/")[4]]
                if b["processing_status"] == "in_progress":
                    b.update(processing_status="canceling", cancel_initiated_at=_iso(time.time()))
                self._send(200, server.public(b))
            else:
                self._send(404, _error("not_found_error", f"no route {path}"))

    return Handler
