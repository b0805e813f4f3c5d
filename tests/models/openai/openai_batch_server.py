"""The loopback OpenAI test server with OpenAI's Batch API, for ``-P batch=true``.

Beside the online endpoints of :class:`~tests.models.openai.openai_test_server.OpenAITestServer`
(whose chat answers a batch line gets too, so batch and online runs must agree), it serves the
documented Files and Batch endpoints:

* ``POST /v1/files`` (multipart: ``purpose`` and ``file``), ``GET /v1/files/{id}/content``;
* ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window: "24h"``, ``metadata``),
  ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``, ``GET /v1/batches?limit=&after=``
  (newest first, ``has_more``).

Input lines are checked as OpenAI checks them (``custom_id`` unique, ``method`` POST, ``url`` equal to
the batch's endpoint, a JSON ``body``, one model, at most 50,000 lines and 200 MB); a batch that
breaks a rule ends ``failed`` with ``errors``. Each ``GET`` of a batch moves it one step along
``validating -> in_progress -> finalizing -> completed`` (unless held); output lines are ``{"id",
"custom_id", "response": {"status_code", "request_id", "body"}, "error": null}``, failures go to the
error file. :class:`BatchBehaviour` makes chosen batches (by order of creation, 1-based) expire
half-way (``batch_expired`` lines), fail some lines with HTTP 500, fail validation, or stay in
progress while ``hold`` is set; ``create_delay`` registers a batch and waits before answering (a
client killed then never learns the id), ``upload_delay`` keeps an upload waiting (a wide window
between a run's first journal record and its batch id). Faults of the output: ``malformed`` batches
have their second output line cut short (not JSON), ``no_output`` batches complete without an
output file (the error file, if any, still comes), ``duplicate`` batches repeat their first output
line with another answer. :meth:`OpenAIBatchServer.vanish` makes a batch unknown (its ``GET``
answers 404, as for a deleted batch or another project's).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.models.openai.openai_test_server import OpenAITestServer, _error_body, _make_handler, chat_answer

ENDPOINTS = ("/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses")
MAX_LINES, MAX_BYTES = 50_000, 200 * 1000 * 1000


@dataclass
class BatchBehaviour:
    expire: set[int] = field(default_factory=set)  # these batches expire with half their lines done
    fail_lines: set[int] = field(default_factory=set)  # every third line of these batches fails with HTTP 500
    fail_validation: set[int] = field(default_factory=set)
    hold: threading.Event = field(default_factory=threading.Event)  # set: batches stay in_progress
    create_delay: float = 0.0
    upload_delay: float = 0.0
    malformed: set[int] = field(default_factory=set)
    no_output: set[int] = field(default_factory=set)
    duplicate: set[int] = field(default_factory=set)
    list_batches: bool = True  # False: GET /v1/batches answers 404
    steps: tuple[str, ...] = ("validating", "in_progress", "finalizing")


class OpenAIBatchServer(OpenAITestServer):
    def __init__(self, behaviour: BatchBehaviour | None = None, **config: Any) -> None:
        super().__init__(**config)
        self.behaviour = behaviour or BatchBehaviour()
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}  # in order of creation
        self.batch_lines: dict[str, list[dict[str, Any]]] = {}
        self.steps: dict[str, int] = {}
        self.gone: set[str] = set()  # batches answered 404 for (vanish)
        self.created = threading.Event()  # set once a batch exists
        self.httpd.RequestHandlerClass = _batch_handler(self, _make_handler(self))

    @property
    def online_calls(self) -> int:
        return self.stats.by_path["/v1/chat/completions"] + self.stats.by_path["/v1/completions"]

    # -- state ---------------------------------------------------------------------------
    def new_file(self, data: bytes, purpose: str, filename: str) -> dict[str, Any]:
        with self.lock:
            fid = f"file-{len(self.files) + 1:04d}"
            self.files[fid] = {
                "id": fid,
                "object": "file",
                "bytes": len(data),
                "created_at": int(time.time()),
                "filename": filename,
                "purpose": purpose,
                "status": "processed",
                "data": data,
            }
            return self.files[fid]

    def new_batch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        fid, endpoint = body.get("input_file_id"), body.get("endpoint")
        if fid not in self.files:
            return 404, _error_body(f"No such File object: {fid}", "invalid_request_error")
        if endpoint not in ENDPOINTS or body.get("completion_window") != "24h":
            return 400, _error_body("endpoint or completion_window is not supported", "invalid_request_error")
        with self.lock:
            n = len(self.batches) + 1
            bid = f"batch_{n:04d}"
            now = int(time.time())
            batch = {
                "id": bid,
                "object": "batch",
                "endpoint": endpoint,
                "errors": None,
                "input_file_id": fid,
                "completion_window": "24h",
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": now,
                "in_progress_at": None,
                "expires_at": now + 86400,
                "finalizing_at": None,
                "completed_at": None,
                "failed_at": None,
                "expired_at": None,
                "cancelling_at": None,
                "cancelled_at": None,
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
                "metadata": body.get("metadata") or None,
                "ordinal": n,
            }
            self.batches[bid] = batch
            self.steps[bid] = 0
        problem = self._validate(batch)
        if problem or n in self.behaviour.fail_validation:
            batch.update(
                status="failed",
                failed_at=now,
                errors={
                    "object": "list",
                    "data": [
                        {"code": "invalid_request", "message": problem or "injected validation failure", "line": None}
                    ],
                },
            )
        self.created.set()
        return 200, batch

    def _validate(self, batch: dict[str, Any]) -> str | None:
        data = self.files[batch["input_file_id"]]["data"]
        if len(data) > MAX_BYTES:
            return "The input file is larger than 200 MB."
        lines, seen, models = [], set(), set()
        for raw in data.decode("utf-8").splitlines():
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                return "Invalid JSON line."
            if set(line) != {"custom_id", "method", "url", "body"} or line["method"] != "POST":
                return "Each line needs custom_id, method POST, url and body."
            if line["url"] != batch["endpoint"]:
                return f"The url {line['url']} does not match the batch's endpoint."
            if line["custom_id"] in seen:
                return f"Duplicate custom_id {line['custom_id']}."
            seen.add(line["custom_id"])
            models.add(line["body"].get("model"))
            lines.append(line)
        if not lines or len(lines) > MAX_LINES or len(models) != 1:
            return "A batch holds 1 to 50,000 requests for one model."
        self.batch_lines[batch["id"]] = lines
        batch["request_counts"]["total"] = len(lines)
        return None

    def advance(self, bid: str) -> dict[str, Any]:
        b = self.batches[bid]
        if b["status"] in ("completed", "expired", "cancelled", "failed"):
            return b
        if b["status"] == "cancelling":
            self._finish(b, "cancelled")
            return b
        if self.behaviour.hold.is_set():
            b.update(status="in_progress", in_progress_at=b["in_progress_at"] or int(time.time()))
            return b
        self.steps[bid] += 1
        steps = self.behaviour.steps
        if self.steps[bid] < len(steps):
            b["status"] = steps[self.steps[bid]]
            b["in_progress_at"] = b["in_progress_at"] or int(time.time())
            return b
        self._finish(b, "expired" if b["ordinal"] in self.behaviour.expire else "completed")
        return b

    def _finish(self, b: dict[str, Any], status: str) -> None:
        out, err = [], []
        lines = self.batch_lines.get(b["id"], [])
        for k, line in enumerate(lines, 1):
            rid = f"batch_req_{b['id']}_{k}"
            if status in ("expired", "cancelled") and k > len(lines) // 2:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                err.append(
                    {
                        "id": rid,
                        "custom_id": line["custom_id"],
                        "response": None,
                        "error": {"code": code, "message": f"This request was not executed ({code})."},
                    }
                )
            elif b["ordinal"] in self.behaviour.fail_lines and k % 3 == 0:
                err.append(
                    {
                        "id": rid,
                        "custom_id": line["custom_id"],
                        "error": None,
                        "response": {
                            "status_code": 500,
                            "request_id": f"req_{k}",
                            "body": _error_body("The server had an error processing your request.", "server_error"),
                        },
                    }
                )
            else:
                code, payload = chat_answer(self.config, line["body"])
                row = {
                    "id": rid,
                    "custom_id": line["custom_id"],
                    "error": None,
                    "response": {"status_code": code, "request_id": f"req_{k}", "body": payload},
                }
                (out if code == 200 else err).append(row)
        now = int(time.time())
        b["request_counts"].update(completed=len(out), failed=len(err))
        ordinal = b["ordinal"]
        if ordinal in self.behaviour.duplicate and out:
            twin = json.loads(json.dumps(out[0]))
            twin["response"]["body"]["choices"][0]["message"]["content"] += " (a different answer)"
            out.insert(0, twin)  # before the right one: a reader that keeps the first keeps the wrong one
        for rows, key in ((out, "output_file_id"), (err, "error_file_id")):
            if rows and not (key == "output_file_id" and ordinal in self.behaviour.no_output):
                lines = [json.dumps(r) for r in rows]
                if key == "output_file_id" and ordinal in self.behaviour.malformed:
                    bad = min(1, len(lines) - 1)
                    lines[bad] = lines[bad][: len(lines[bad]) // 2]
                data = "".join(x + "\n" for x in lines).encode()
                b[key] = self.new_file(data, "batch_output", f"{b['id']}_{key}.jsonl")["id"]
        b.update(status=status, **{f"{status}_at": now, "finalizing_at": now})

    def public(self, b: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in b.items() if k != "ordinal"}

    def vanish(self, bid: str) -> None:
        """The batch is no longer known here (deleted, or another project's): its GET and cancel answer 404, and
        the list leaves it out (it still counts in ``batches``, which holds every batch ever made)."""
        with self.lock:
            self.gone.add(bid)

    def known(self, bid: str) -> bool:
        return bid in self.batches and bid not in self.gone


def _batch_handler(server: OpenAIBatchServer, base: type) -> type:
    class Handler(base):  # type: ignore[misc, valid-type]
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            parts = url.path.strip("/").split("/")
            if parts[:2] == ["v1", "batches"] or parts[:2] == ["v1", "files"]:
                with server.lock:
                    server.stats.requests += 1
                    server.stats.by_path[url.path] += 1
                self._batch_get(parts, parse_qs(url.query))
            else:
                super().do_GET()

        def _batch_get(self, parts: list[str], query: dict[str, list[str]]) -> None:
            if parts == ["v1", "batches"]:
                if not server.behaviour.list_batches:
                    self._send(404, _error_body("Not found", "invalid_request_error"))
                    return
                limit = int(query.get("limit", ["20"])[0])
                after = query.get("after", [None])[0]
                ordered = [b for b in reversed(server.batches.values()) if server.known(b["id"])]
                if after:
                    ids = [b["id"] for b in ordered]
                    ordered = ordered[ids.index(after) + 1 :] if after in ids else []
                page = ordered[:limit]
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [server.public(b) for b in page],
                        "first_id": page[0]["id"] if page else None,
                        "last_id": page[-1]["id"] if page else None,
                        "has_more": len(ordered) > limit,
                    },
                )
            elif len(parts) == 3 and parts[1] == "batches" and server.known(parts[2]):
                self._send(200, server.public(server.advance(parts[2])))
            elif len(parts) == 3 and parts[1] == "batches":
                self._send(404, _error_body(f"No batch found with id '{parts[2]}'.", "invalid_request_error"))
            elif len(parts) == 4 and parts[1] == "files" and parts[3] == "content" and parts[2] in server.files:
                data = server.files[parts[2]]["data"]
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            else:
                self._send(404, _error_body(f"no route {self.path}", "invalid_request_error"))

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            if not (path.startswith("/v1/files") or path.startswith("/v1/batches")):
                super().do_POST()
                return
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with server.lock:
                server.stats.requests += 1
                server.stats.by_path[path] += 1
                server.stats.auth_headers.append(self.headers.get("Authorization", ""))
            if (
                server.config.api_key is not None
                and self.headers.get("Authorization", "") != f"Bearer {server.config.api_key}"
            ):
                self._send(401, _error_body("Incorrect API key provided", "invalid_request_error", "invalid_api_key"))
                return
            if path == "/v1/files":
                self._upload(raw)
            elif path == "/v1/batches":
                status, payload = server.new_batch(json.loads(raw or b"{}"))
                if status == 200 and server.behaviour.create_delay:
                    time.sleep(server.behaviour.create_delay)
                self._send(status, server.public(payload) if status == 200 else payload)
            elif path.endswith("/cancel") and not server.known(path.split("/")[3]):
                bid = path.split("/")[3]
                self._send(404, _error_body(f"No batch found with id '{bid}'.", "invalid_request_error"))
            elif path.endswith("/cancel") and path.split("/")[3] in server.batches:
                b = server.batches[path.split("/")[3]]
                if b["status"] in ("validating", "in_progress", "finalizing"):
                    b.update(status="cancelling", cancelling_at=int(time.time()))
                self._send(200, server.public(b))
            else:
                self._send(404, _error_body(f"no route {path}", "invalid_request_error"))

        def _upload(self, raw: bytes) -> None:
            ctype = self.headers.get("Content-Type", "")
            if not ctype.startswith("multipart/form-data"):
                self._send(400, _error_body("files are uploaded as multipart/form-data", "invalid_request_error"))
                return
            msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw)
            fields: dict[str, Any] = {}
            for part in msg.iter_parts():
                name = part.get_param("name", header="content-disposition")
                fields[name] = (part.get_filename(), part.get_payload(decode=True))
            if "file" not in fields or fields.get("purpose", (None, b""))[1] != b"batch":
                self._send(400, _error_body("purpose must be batch and a file given", "invalid_request_error"))
                return
            filename, data = fields["file"]
            if server.behaviour.upload_delay:
                time.sleep(server.behaviour.upload_delay)
            entry = server.new_file(data, "batch", filename or "upload.jsonl")
            self._send(200, {k: v for k, v in entry.items() if k != "data"})

    return Handler
