"""A small OpenAI-compatible HTTP server for the openai backend's tests.

It listens on 127.0.0.1 on a free port (stdlib ``ThreadingHTTPServer`` in a daemon thread)
and implements just enough of the API:

* ``POST /v1/chat/completions`` -- deterministic answer derived from the request: ``"echo:"``
  followed by the words of the last user message and the decoding parameters received.
* ``POST /v1/completions`` -- the same for a raw prompt; with ``echo`` + ``logprobs`` it returns
  the prompt split into fake whitespace tokens (``\\s*\\S+``: each token carries its leading
  whitespace) with deterministic log-probabilities (:func:`fake_logprob`) and ``text_offset``.
* ``POST /tokenize`` (beside ``/v1``, like vLLM): a text (``prompt``) or a conversation
  (``messages``: ``<|role|>`` + content + ``<|end|>`` per turn) as token ids of the fake
  tokenizer (one id per fake token, :func:`token_id`; ``<s>`` is id 1); ``GET /tokenizer_info``.
* ``POST /v1/completions`` with a token-id prompt (a list of ints) and ``prompt_logprobs`` (vLLM's
  extra parameter): the log-probability of each prompt token after the first, as vLLM answers.
* ``GET /v1/models``.

Faults are configured per test through :class:`ServerConfig` (mutable while the server
runs): an HTTP status (429 with ``Retry-After``, 500, 503...), ``"hang"`` (stall past the
client's timeout), a broken 200 answer (:data:`BAD_REPLIES`: truncated JSON, a body that is not
JSON, a proxy's HTML page, no choices) or one whose connection drops half-way (:data:`CUT_OFF`),
injected for the first N attempts of each distinct request and/or for a deterministic fraction of
attempts, of every request or of those whose prompt holds ``fault_match``; a chat-only mode that
rejects echo/logprobs; a mode that requires an API key (401 otherwise). :class:`ServerStats` counts
what was received so tests can assert that retries happened and that concurrency stayed bounded.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN_RE = re.compile(r"\s*\S+|\s+$")


def fake_tokenize(text: str) -> list[tuple[str, int]]:
    """Split ``text`` into ``(token, char_offset)`` pairs; tokens keep their leading space."""
    return [(m.group(0), m.start()) for m in TOKEN_RE.finditer(text)]


SPECIAL_IDS = {"<s>": 1, "</s>": 2, "<|user|>": 3, "<|assistant|>": 4, "<|end|>": 5}
_VOCAB: dict[str, int] = dict(SPECIAL_IDS)
_TOKENS: dict[int, str] = {v: k for k, v in SPECIAL_IDS.items()}
_VOCAB_LOCK = threading.Lock()


def token_id(token: str) -> int:
    """The fake tokenizer's id of ``token`` (assigned on first sight, the same for the whole process)."""
    with _VOCAB_LOCK:
        if token not in _VOCAB:
            _VOCAB[token] = len(_VOCAB) + 10
            _TOKENS[_VOCAB[token]] = token
        return _VOCAB[token]


def token_text(tid: int) -> str:
    return _TOKENS[tid]


def fake_ids(text: str) -> list[int]:
    return [token_id(t) for t, _ in fake_tokenize(text)]


def fake_logprob(token: str) -> float:
    """Deterministic log-probability of a (non-first) token: -0.25 per visible character."""
    return -0.25 * len(token.strip())


def fake_top_logprobs(token: str) -> dict[str, float]:
    """Top-1 alternative: the token itself when short (<= 3 chars, so "greedy"), else " the"."""
    if len(token.strip()) <= 3:
        return {token: fake_logprob(token)}
    return {" the": -0.75}


BAD_REPLIES = ("truncated-json", "not-json", "html-page", "no-choices")  # broken answers with status 200
CUT_OFF = "cut-off"  # a 200 whose connection closes half-way through the body its Content-Length announced


@dataclass
class ServerConfig:
    # --- fault injection (on the POST endpoints) ---
    fault: int | str | None = None  # HTTP status to answer (429, 500, 503...), "hang" or one of BAD_REPLIES
    fault_match: str | None = None  # inject faults only into requests whose prompt (or a message) holds this text
    fail_first: int = 0  # inject the fault on the first N attempts of each distinct request
    fail_fraction: float = 0.0  # ... and/or on this fraction of attempts (deterministic hash)
    fail_seed: int = 0
    retry_after: str | None = None  # Retry-After header sent with injected faults
    retry_after_ms: str | None = None  # retry-after-ms header (OpenAI's own) sent with faults
    hang_seconds: float = 10.0  # how long a "hang" stalls (cut short when the server stops)
    # --- behaviour ---
    delay: float = 0.0  # every normal answer waits this long (to observe concurrency)
    api_key: str | None = None  # require "Authorization: Bearer <api_key>", 401 otherwise
    models: tuple[str, ...] | None = None  # known models; others get 404 model_not_found
    chat_only: bool = False  # /v1/completions rejects echo/logprobs with 400
    no_completions: bool = False  # /v1/completions answers 404 (endpoint missing)
    drop_logprobs: bool = False  # completions silently ignore echo/logprobs
    reject_zero_max_tokens: bool = False  # 400 when max_tokens=0 (like vLLM)
    add_bos: bool = False  # echo starts with a zero-width "<s>" token (like vLLM + Llama)
    reject_max_tokens_chat: bool = False  # chat wants max_completion_tokens (new OpenAI models)
    max_prompt_chars: int | None = None  # longer completions prompts get 400 "maximum context length"
    html: bool = False  # POSTs answer 200 with an HTML page (a --base-url that is no API)
    tokenize: bool = True  # serve /tokenize (vLLM's); False: 404 there
    tokenizer_info: bool = True  # serve /tokenizer_info (bos_token "<s>")
    ignore_prompt_logprobs: bool = False  # completions ignore prompt_logprobs (echo+logprobs still work)
    reply: Any = None  # a function(chat body) -> the answer's words, instead of the echo
    model_root: str | None = None  # the "root" /v1/models gives (vLLM: the path or hub id it loaded)


@dataclass
class ServerStats:
    requests: int = 0  # every HTTP request received
    by_path: Counter = field(default_factory=Counter)
    faults: int = 0  # injected faults answered
    in_flight: int = 0
    max_in_flight: int = 0
    bodies: list[dict[str, Any]] = field(default_factory=list)  # JSON bodies of POSTs
    auth_headers: list[str] = field(default_factory=list)
    attempts: Counter = field(default_factory=Counter)  # per distinct request body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 drops bursts of connects (1 s SYN retry)


class OpenAITestServer:
    """``with OpenAITestServer(fault=429, fail_first=2) as srv: ... srv.base_url ...``"""

    def __init__(self, **config: Any) -> None:
        self.config = ServerConfig(**config)
        self.stats = ServerStats()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.httpd = _Server(("127.0.0.1", 0), _make_handler(self))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> OpenAITestServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # releases hanging handlers
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers used by the handler ------------------------------------------------------
    def should_fail(self, key: str) -> bool:
        cfg = self.config
        with self.lock:
            self.stats.attempts[key] += 1
            attempt = self.stats.attempts[key]
        if cfg.fault is None:
            return False
        if attempt <= cfg.fail_first:
            return True
        if cfg.fail_fraction > 0:
            h = hashlib.sha256(f"{cfg.fail_seed}:{key}:{attempt}".encode()).digest()
            return int.from_bytes(h[:8], "big") / 2**64 < cfg.fail_fraction
        return False


def _error_body(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def _prompt_text(body: dict[str, Any]) -> str:
    """The prompt of a request body, or its messages' contents, as one text."""
    messages = body.get("messages") or []
    return " ".join([str(body.get("prompt") or ""), *(str(m.get("content") or "") for m in messages)])


def _params_words(body: dict[str, Any]) -> list[str]:
    return [f"{k}={body.get(k)}" for k in ("seed", "temperature", "top_p")]


def _truncate(words: list[str], max_tokens: int | None) -> tuple[list[str], str]:
    if max_tokens is not None and len(words) > max_tokens:
        return words[:max_tokens], "length"
    return words, "stop"


def chat_answer(cfg: ServerConfig, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(status, JSON answer) of ``POST /v1/chat/completions`` for ``body`` (also a batch line's answer)."""
    if cfg.reject_max_tokens_chat and "max_tokens" in body:
        return 400, _error_body(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "invalid_request_error",
            "unsupported_parameter",
        )
    if cfg.models is not None and body.get("model") not in cfg.models:
        return 404, _error_body(
            f"The model `{body.get('model')}` does not exist.", "invalid_request_error", "model_not_found"
        )
    messages = body.get("messages") or []
    last_user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    system = next((m.get("content", "") for m in messages if m.get("role") == "system"), None)
    if cfg.reply is not None:
        words = str(cfg.reply(body)).split()
    else:
        words = ["echo:", *str(last_user).split()]
        if system:
            words.append(f"system={system.split()[0]}")
        words += _params_words(body)
    max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    words, finish = _truncate(words, max_tokens)
    n_prompt = sum(len(str(m.get("content", "")).split()) for m in messages)
    return 200, {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model"),
        "choices": [
            {"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": " ".join(words)}}
        ],
        "usage": {"prompt_tokens": n_prompt, "completion_tokens": len(words), "total_tokens": n_prompt + len(words)},
    }


def _make_handler(server: OpenAITestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls between header and body

        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            pass

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # client went away (timed out)
                self.close_connection = True

        def do_GET(self) -> None:
            with server.lock:
                server.stats.requests += 1
                server.stats.by_path[self.path] += 1
            if self.path == "/tokenizer_info" and server.config.tokenizer_info:
                self._send(200, {"tokenizer_class": "Fake", "bos_token": "<s>", "eos_token": "</s>"})
            elif self.path.rstrip("/") == "/v1/models":
                names = server.config.models or ("test-model",)
                root = {"root": server.config.model_root} if server.config.model_root else {}
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": n, "object": "model", "created": 0, "owned_by": "test", **root} for n in names],
                    },
                )
            else:
                self._send(404, _error_body(f"no route {self.path}", "not_found"))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with server.lock:
                st = server.stats
                st.requests += 1
                st.by_path[self.path] += 1
                st.in_flight += 1
                st.max_in_flight = max(st.max_in_flight, st.in_flight)
                st.auth_headers.append(self.headers.get("Authorization", ""))
            try:
                self._post(raw)
            finally:
                with server.lock:
                    server.stats.in_flight -= 1

        def _post(self, raw: bytes) -> None:
            cfg = server.config
            if self.path not in ("/tokenize", "/v1/chat/completions", "/v1/completions"):
                self._send(404, _error_body(f"no route {self.path}", "not_found"))  # before the body is read as JSON
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._send(400, _error_body("body is not JSON", "invalid_request_error"))
                return
            with server.lock:
                server.stats.bodies.append(body)

            if cfg.api_key is not None:
                got = self.headers.get("Authorization", "")
                if got != f"Bearer {cfg.api_key}":
                    # Deliberately echo what was received: the client must not repeat it.
                    self._send(
                        401,
                        _error_body(
                            f"Incorrect API key provided: {got.removeprefix('Bearer ')}",
                            "invalid_request_error",
                            "invalid_api_key",
                        ),
                    )
                    return

            key = hashlib.sha256(self.path.encode() + b"\0" + raw).hexdigest()
            matched = cfg.fault_match is None or cfg.fault_match in _prompt_text(body)
            if matched and server.should_fail(key):
                with server.lock:
                    server.stats.faults += 1
                if cfg.fault == "hang":
                    server.stopping.wait(cfg.hang_seconds)
                    self.close_connection = True
                    return
                if cfg.fault in (*BAD_REPLIES, CUT_OFF):
                    self._bad_reply(str(cfg.fault), body)
                    return
                headers = {}
                if cfg.retry_after is not None:
                    headers["Retry-After"] = cfg.retry_after
                if cfg.retry_after_ms is not None:
                    headers["retry-after-ms"] = cfg.retry_after_ms
                status = int(cfg.fault)  # type: ignore[arg-type]
                kind = "rate_limit_exceeded" if status == 429 else "server_error"
                self._send(status, _error_body(f"injected fault {status}", kind), headers)
                return

            model = body.get("model")
            if cfg.models is not None and model not in cfg.models:
                self._send(
                    404, _error_body(f"The model `{model}` does not exist.", "invalid_request_error", "model_not_found")
                )
                return

            if cfg.delay:
                time.sleep(cfg.delay)

            if cfg.html:
                page = b"<html><body>It works!</body></html>"
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                except OSError:
                    self.close_connection = True
                return

            if self.path == "/tokenize" and cfg.tokenize:
                self._tokenize(body)
            elif self.path == "/v1/chat/completions":
                self._chat(body)
            elif self.path == "/v1/completions":
                self._completions(body)
            else:
                self._send(404, _error_body(f"no route {self.path}", "not_found"))

        def _bad_reply(self, fault: str, body: dict[str, Any]) -> None:
            """A 200 answer that is broken: cut half-way, not JSON, an HTML page or without choices."""
            content_type = "application/json"
            if fault == "html-page":
                data, content_type = b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"
            elif fault == "not-json":
                data = b"upstream connect error or disconnect/reset before headers"
            else:
                _, answer = chat_answer(server.config, body)
                if fault == "no-choices":
                    answer["choices"] = []
                data = json.dumps(answer).encode()
            announced = len(data)
            if fault in ("truncated-json", CUT_OFF):
                data = data[: len(data) // 2]
                announced = announced if fault == CUT_OFF else len(data)
            try:
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(announced))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass
            self.close_connection = fault == CUT_OFF or self.close_connection

        def _chat(self, body: dict[str, Any]) -> None:
            self._send(*chat_answer(server.config, body))

        def _tokenize(self, body: dict[str, Any]) -> None:
            if "messages" in body:
                ids = []
                for m in body["messages"]:
                    ids += [token_id(f"<|{m['role']}|>"), *fake_ids(str(m.get("content") or "")), token_id("<|end|>")]
            else:
                ids = fake_ids(str(body.get("prompt", "")))
                if body.get("add_special_tokens", True) and server.config.add_bos:
                    ids = [1] + ids
            self._send(200, {"count": len(ids), "max_model_len": 4096, "tokens": ids})

        def _token_prompt(self, body: dict[str, Any], ids: list[int]) -> None:
            cfg = server.config
            toks = [token_text(t) for t in ids]
            choice: dict[str, Any] = {"index": 0, "text": " gen", "finish_reason": "length", "logprobs": None}
            if body.get("prompt_logprobs") is not None and not cfg.ignore_prompt_logprobs and not cfg.drop_logprobs:
                choice["prompt_logprobs"] = [None] + [
                    {
                        str(t): {
                            "logprob": fake_logprob(tok),
                            "rank": 1 if len(tok.strip()) <= 3 else 2,
                            "decoded_token": tok,
                        }
                    }
                    for t, tok in zip(ids[1:], toks[1:])
                ]
            elif body.get("echo") and body.get("logprobs") is not None and not cfg.drop_logprobs:
                choice["logprobs"] = {
                    "tokens": toks + [" gen"],
                    "token_logprobs": [None] + [fake_logprob(t) for t in toks[1:]] + [-0.1],
                    "top_logprobs": None,
                }
            self._send(
                200,
                {
                    "id": "cmpl-test",
                    "object": "text_completion",
                    "created": 0,
                    "model": body.get("model"),
                    "choices": [choice],
                    "usage": {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1},
                },
            )

        def _completions(self, body: dict[str, Any]) -> None:
            cfg = server.config
            if cfg.no_completions:
                self._send(404, {"detail": "Not Found"})
                return
            if cfg.chat_only and body.get("prompt_logprobs") is not None:
                self._send(
                    400,
                    _error_body(
                        "prompt_logprobs are not supported for this model",
                        "invalid_request_error",
                        "unsupported_parameter",
                    ),
                )
                return
            echo, logprobs = bool(body.get("echo")), body.get("logprobs")
            if cfg.chat_only and (echo or logprobs is not None):
                self._send(
                    400,
                    _error_body(
                        "echo and logprobs are not supported for this model",
                        "invalid_request_error",
                        "unsupported_parameter",
                    ),
                )
                return
            max_tokens = body.get("max_tokens")
            if cfg.reject_zero_max_tokens and max_tokens == 0:
                self._send(400, _error_body("max_tokens must be at least 1, got 0.", "BadRequestError"))
                return
            prompt = body.get("prompt")
            if isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
                if cfg.max_prompt_chars is not None and len(prompt) > cfg.max_prompt_chars:
                    self._send(
                        400,
                        _error_body(
                            f"This model's maximum context length is {cfg.max_prompt_chars} "
                            f"tokens. However, you requested {len(prompt)} tokens.",
                            "invalid_request_error",
                            "context_length_exceeded",
                        ),
                    )
                    return
                self._token_prompt(body, prompt)
                return
            if isinstance(prompt, list):
                prompt = prompt[0]
            prompt = str(prompt or "")
            if cfg.max_prompt_chars is not None and len(prompt) > cfg.max_prompt_chars:
                self._send(
                    400,
                    _error_body(
                        f"This model's maximum context length is {cfg.max_prompt_chars} "
                        f"tokens. However, you requested {len(prompt)} tokens.",
                        "invalid_request_error",
                        "context_length_exceeded",
                    ),
                )
                return
            if cfg.drop_logprobs:
                echo, logprobs = False, None

            if echo:
                n_gen = max_tokens if max_tokens is not None else 16
                toks = fake_tokenize(prompt)
                if cfg.add_bos:
                    toks = [("<s>", 0)] + toks
                gen = [(" gen", len(prompt) + 4 * k) for k in range(n_gen)]
                all_toks = toks + gen
                text = prompt + "".join(t for t, _ in gen)
                choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": "length" if n_gen else "stop"}
                if logprobs is not None:
                    choice["logprobs"] = {
                        "tokens": [t for t, _ in all_toks],
                        "text_offset": [o for _, o in all_toks],
                        "token_logprobs": [None]
                        + [(-0.1 if i >= len(toks) else fake_logprob(t)) for i, (t, _) in enumerate(all_toks)][1:],
                        "top_logprobs": [None]
                        + [
                            ({" gen": -0.1} if i >= len(toks) else fake_top_logprobs(t))
                            for i, (t, _) in enumerate(all_toks)
                        ][1:],
                    }
                else:
                    choice["logprobs"] = None
                n_prompt, n_new = len(toks), n_gen
            else:
                words = ["echo:", *prompt.split()[-5:], *_params_words(body)]
                words, finish = _truncate(words, max_tokens)
                text = " " + " ".join(words)
                choice = {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}
                n_prompt, n_new = len(prompt.split()), len(words)
            self._send(
                200,
                {
                    "id": "cmpl-test",
                    "object": "text_completion",
                    "created": 0,
                    "model": body.get("model"),
                    "choices": [choice],
                    "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_new, "total_tokens": n_prompt + n_new},
                },
            )

    return Handler
