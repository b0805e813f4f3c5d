"""Plumbing shared by the JSON API and the pages: server state, security headers, bodies, cookies."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fastapi import Request
from fastapi.responses import JSONResponse
from jinja2 import Environment
from starlette.datastructures import MutableHeaders

from biaslab.annotate.assignment import Refused
from biaslab.annotate.auth import SESSION_COOKIE, SESSION_SECONDS, LoginThrottle, Session, lookup
from biaslab.annotate.db import Database
from biaslab.annotate.project import Settings

MAX_BODY = 64 * 1024
CSRF_HEADER = "X-CSRF-Token"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "same-origin"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
]


@dataclass
class ServerState:
    db: Database
    settings: Settings
    templates: Environment
    lease: float
    secure_cookies: bool = False
    throttle: LoginThrottle = field(default_factory=LoginThrottle)
    status_cache: dict = field(default_factory=dict)


def state(request: Request) -> ServerState:
    return request.app.state.server


class SecurityHeaders:
    """ASGI middleware: CSP and friends on every response; no caching except for static files."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        static = scope["path"].startswith("/static/")

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in SECURITY_HEADERS:
                    headers[key] = value
                headers["Cache-Control"] = "public, max-age=300" if static else "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def read_body(request: Request) -> bytes:
    """The request body, refused with 413 past ``MAX_BODY`` bytes (read incrementally)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY:
        raise Refused(413, f"request body over {MAX_BODY} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise Refused(413, f"request body over {MAX_BODY} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request) -> Any:
    body = await read_body(request)
    try:
        return json.loads(body.decode("utf-8")) if body else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise Refused(400, "the body is not valid JSON") from None


async def read_form(request: Request) -> dict[str, str]:
    body = await read_body(request)
    try:
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, "the form could not be read") from None
    return {key: values[0] for key, values in parsed.items()}


def check_origin(request: Request) -> None:
    """A POST that says where it comes from must come from this site (login CSRF, defence in depth)."""
    origin = request.headers.get("origin")
    if origin is None:
        return
    host = request.headers.get("host", "")
    if origin == "null" or urlsplit(origin).netloc.lower() != host.lower():
        raise Refused(403, "cross-site request refused")


def current_session(request: Request) -> Session | None:
    return lookup(state(request).db, request.cookies.get(SESSION_COOKIE))


def require_session(request: Request, *, csrf: str | None = None, post: bool = False) -> Session:
    session = current_session(request)
    if session is None:
        raise Refused(401, "not logged in (or the session ended); POST /api/login first")
    if post:
        check_origin(request)
        sent = csrf if csrf is not None else request.headers.get(CSRF_HEADER)
        if not session.csrf_ok(sent):
            raise Refused(403, f"missing or wrong CSRF token (send the {CSRF_HEADER} header from login)")
    return session


def require_admin(request: Request) -> Session:
    session = require_session(request)
    if not session.is_admin:
        raise Refused(403, "admins only")
    return session


def set_session_cookie(response, token: str, secure: bool) -> None:
    response.set_cookie(SESSION_COOKIE, token, max_age=SESSION_SECONDS, path="/", httponly=True,
                        samesite="strict", secure=secure)


def clear_session_cookie(response, secure: bool) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict", secure=secure)


def refused_response(exc: Refused) -> JSONResponse:
    return JSONResponse({"detail": exc.detail}, status_code=exc.status)


def busy_response(exc: sqlite3.OperationalError) -> JSONResponse:
    return JSONResponse({"detail": f"the database is busy ({exc}); nothing was stored, retry the same request"},
                        status_code=503, headers={"Retry-After": "1"})
