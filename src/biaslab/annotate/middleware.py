"""The outermost ASGI layer: security headers on every response (error pages included), the Host
allow-list, a limit on the size of request headers (431), and a last-resort handler that turns
any unexpected error into a plain 500 (one log line, no traceback, headers still set) instead of
a dropped connection."""

from __future__ import annotations

import json
import logging

from starlette.datastructures import MutableHeaders

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "same-origin"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
]
MAX_HEADER_BYTES = 16 * 1024  # request target + headers
log = logging.getLogger("biaslab.annotate")


def _host_of(scope) -> str:
    for key, value in scope.get("headers") or []:
        if key == b"host":
            return value.decode("latin-1").strip().lower()
    return ""


class SecurityHeaders:
    """ASGI middleware: CSP and friends on every response; no caching except for static files.

    ``allowed_hosts`` (``host:port`` strings, lower case): a request whose Host header is not one of
    them is refused with 421 (a DNS-rebinding page reaches the server under its own host name)."""

    def __init__(self, app, allowed_hosts=None):
        self.app = app
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        static = scope["path"].startswith("/static/")
        started = False

        async def send_with_headers(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = MutableHeaders(scope=message)
                for key, value in SECURITY_HEADERS:
                    headers[key] = value
                headers["Cache-Control"] = "public, max-age=300" if static else "no-store"
            await send(message)

        size = (
            len(scope.get("raw_path") or b"")
            + len(scope.get("query_string") or b"")
            + sum(len(k) + len(v) + 4 for k, v in scope.get("headers") or [])
        )
        if size > MAX_HEADER_BYTES:
            return await _plain(send_with_headers, 431, f"request headers over {MAX_HEADER_BYTES} bytes")
        if self.allowed_hosts is not None and _host_of(scope) not in self.allowed_hosts:
            return await _plain(
                send_with_headers, 421, "this server does not answer for that host name (see `serve --allowed-host`)"
            )
        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:  # a bug, never input: one line in the log, a 500 with the headers
            log.error("internal error on %s %s: %s", scope.get("method"), scope.get("path"), type(exc).__name__)
            if not started:
                await _plain(send_with_headers, 500, "internal error; nothing was stored")


async def _plain(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
