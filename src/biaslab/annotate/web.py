"""Plumbing shared by the JSON API and the pages: server state, security headers, bodies, cookies."""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fastapi import Request
from fastapi.responses import JSONResponse
from jinja2 import Environment

from biaslab.annotate.assignment import Refused
from biaslab.annotate.auth import IDLE_SECONDS, SESSION_COOKIE, SESSION_SECONDS, Session, lookup
from biaslab.annotate.db import Database
from biaslab.annotate.project import Settings
from biaslab.annotate.throttle import DEVICE_COOKIE, DEVICE_SECONDS, DeviceCookies, GuessThrottle

MAX_BODY = 64 * 1024
BODY_TIMEOUT = 20.0  # seconds to send a whole request body
MAX_ID = 2**62  # ids above this are refused before they reach SQLite (64-bit integers)
CSRF_HEADER = "X-CSRF-Token"


@dataclass
class ServerState:
    db: Database
    settings: Settings
    templates: Environment
    lease: float
    secure_cookies: bool = False
    idle: float = IDLE_SECONDS
    allowed_hosts: frozenset[str] | None = None  # None: the Host header's own value (app without serve)
    throttle: GuessThrottle = field(default_factory=GuessThrottle)
    devices: DeviceCookies = field(default_factory=lambda: DeviceCookies(b""))
    status_cache: dict = field(default_factory=dict)


def state(request: Request) -> ServerState:
    return request.app.state.server


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def read_body(request: Request) -> bytes:
    """The request body, refused with 413 past ``MAX_BODY`` bytes (read incrementally) and with 408
    when it takes more than ``BODY_TIMEOUT`` seconds to arrive."""
    declared = request.headers.get("content-length", "")
    if declared and (not declared.isdigit() or len(declared) > 12):
        raise Refused(400, "bad Content-Length")
    if declared and int(declared) > MAX_BODY:
        raise Refused(413, f"request body over {MAX_BODY} bytes")
    chunks, size = [], 0
    try:
        async with asyncio.timeout(BODY_TIMEOUT):
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY:
                    raise Refused(413, f"request body over {MAX_BODY} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise Refused(408, f"the request body did not arrive within {BODY_TIMEOUT:g} seconds") from None
    return b"".join(chunks)


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("number out of range")
    return value


async def read_json(request: Request, *, require_type: bool = False) -> Any:
    """The JSON body; 400 for anything that is not plain JSON (NaN, Infinity, numbers too large for a
    float or with more than 4300 digits, nesting too deep to parse), 415 when ``require_type`` and
    the body is not declared as application/json."""
    if require_type:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise Refused(415, "send the body as JSON (Content-Type: application/json)")
    body = await read_body(request)
    try:
        return (
            json.loads(body.decode("utf-8"), parse_constant=_refuse_constant, parse_float=_finite_float) if body else {}
        )
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Refused(400, "the body is not valid JSON (plain numbers, at most 4300 digits, shallow nesting)") from None


async def read_form(request: Request) -> dict[str, str]:
    body = await read_body(request)
    try:
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, "the form could not be read") from None
    return {key: values[0] for key, values in parsed.items()}


def check_origin(request: Request) -> None:
    """A POST that says where it comes from must come from this site: the scheme and host of its
    Origin must be ours (an allowed host, not merely the Host header, which DNS rebinding controls)."""
    origin = request.headers.get("origin")
    if origin is None:
        return
    st = state(request)
    try:
        parts = urlsplit(origin)
        netloc = parts.netloc.lower()
    except ValueError:
        raise Refused(403, "cross-site request refused") from None
    scheme = "https" if st.secure_cookies else "http"
    allowed = st.allowed_hosts if st.allowed_hosts is not None else {request.headers.get("host", "").lower()}
    if origin == "null" or parts.scheme != scheme or netloc not in allowed:
        raise Refused(403, "cross-site request refused")


def current_session(request: Request) -> Session | None:
    st = state(request)
    return lookup(st.db, request.cookies.get(SESSION_COOKIE), st.idle)


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
    response.set_cookie(
        SESSION_COOKIE, token, max_age=SESSION_SECONDS, path="/", httponly=True, samesite="strict", secure=secure
    )


def set_device_cookie(response, value: str, secure: bool) -> None:
    response.set_cookie(
        DEVICE_COOKIE, value, max_age=DEVICE_SECONDS, path="/", httponly=True, samesite="strict", secure=secure
    )


def clear_session_cookie(response, secure: bool) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict", secure=secure)


def refused_response(exc: Refused) -> JSONResponse:
    return JSONResponse({"detail": exc.detail}, status_code=exc.status)


def busy_response(exc: sqlite3.Error) -> JSONResponse:
    return JSONResponse(
        {"detail": f"the database could not store this ({exc}); nothing was stored, retry the same request"},
        status_code=503,
        headers={"Retry-After": "1"},
    )
