"""A small client for the annotation server's JSON API (standard library only).

    client = ApiClient("http://127.0.0.1:8000")
    client.login("ann1", "password")
    while (tup := client.next()) is not None:
        items = [item["id"] for item in tup["items"]]
        client.submit(tup["tuple_id"], best=items[0], worst=items[1])

It keeps the session and device cookies and the CSRF token, and reuses one keep-alive connection. It never
retries by itself: ``submit`` takes a ``submission_id`` so that the caller can repeat a submission
whose answer was lost without storing it twice.
"""

from __future__ import annotations

import http.client
import json
import time
import uuid
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from biaslab.annotate.auth import SESSION_COOKIE
from biaslab.annotate.throttle import DEVICE_COOKIE
from biaslab.annotate.web import CSRF_HEADER

IDLE_RECONNECT = 4.0  # below the server's keep-alive timeout (5 s): a fresh connection after a pause


class ApiError(Exception):
    def __init__(self, status: int, body: Any):
        super().__init__(f"HTTP {status}: {body}")
        self.status, self.body = status, body


class ApiClient:
    def __init__(self, base_url: str, timeout: float = 30.0):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.timeout = timeout
        self.session: str | None = None
        self.device: str | None = None  # the device cookie a successful login gives this client
        self.csrf: str | None = None
        self._conn: http.client.HTTPConnection | None = None
        self._last_used = 0.0

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(
        self, method: str, path: str, body: Any = None, *, headers: dict | None = None, raw: bytes | None = None
    ) -> tuple[int, Any, http.client.HTTPMessage]:
        """One request; returns (status, parsed JSON or text or None, headers). Network errors propagate."""
        send = {"Accept": "application/json", **(headers or {})}
        cookies = [f"{k}={v}" for k, v in ((SESSION_COOKIE, self.session), (DEVICE_COOKIE, self.device)) if v]
        if cookies and "Cookie" not in send:
            send["Cookie"] = "; ".join(cookies)
        if method == "POST" and self.csrf and "X-CSRF-Token" not in send:
            send[CSRF_HEADER] = self.csrf
        data = raw
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            send["Content-Type"] = "application/json"
        if self._conn is not None and time.monotonic() - self._last_used > IDLE_RECONNECT:
            self.close()  # the server has closed (or is about to close) an idle kept-alive connection
        reused = self._conn is not None
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            self._conn.request(method, path, body=data, headers=send)
            response = self._conn.getresponse()
            payload = response.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.close()
            if reused and method == "GET":  # a kept-alive connection the server had closed: safe to redo
                return self.request(method, path, headers=headers)
            raise
        except BaseException:
            self.close()
            raise
        self._last_used = time.monotonic()
        for header in response.headers.get_all("Set-Cookie") or []:
            cookie = SimpleCookie(header)
            if SESSION_COOKIE in cookie:
                self.session = cookie[SESSION_COOKIE].value or None
            if DEVICE_COOKIE in cookie:
                self.device = cookie[DEVICE_COOKIE].value or None
        if response.headers.get("Connection", "").lower() == "close":
            self.close()
        parsed: Any = None
        if payload:
            text = payload.decode("utf-8", "replace")
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                parsed = text
        return response.status, parsed, response.headers

    def _ok(self, method: str, path: str, body: Any = None) -> Any:
        status, data, _ = self.request(method, path, body)
        if status != 200:
            raise ApiError(status, data)
        return data

    def login(self, name: str, password: str) -> dict:
        data = self._ok("POST", "/api/login", {"name": name, "password": password})
        self.csrf = data["csrf_token"]
        return data

    def next(self) -> dict | None:
        status, data, _ = self.request("GET", "/api/next")
        if status == 204:
            return None
        if status != 200:
            raise ApiError(status, data)
        return data

    def submit(
        self, tuple_id: int, best: str, worst: str, feedback: str = "", submission_id: str | None = None
    ) -> dict:
        return self._ok(
            "POST",
            "/api/annotations",
            {
                "tuple_id": tuple_id,
                "best": best,
                "worst": worst,
                "feedback": feedback,
                "submission_id": submission_id or uuid.uuid4().hex,
            },
        )

    def skip(self, tuple_id: int) -> dict:
        return self._ok("POST", "/api/skip", {"tuple_id": tuple_id})

    def undo_skip(self) -> dict:
        return self._ok("POST", "/api/skip/undo", {})

    def consent(self) -> dict:
        return self._ok("POST", "/api/consent", {})

    def progress(self) -> dict:
        return self._ok("GET", "/api/progress")

    def admin_status(self) -> dict:
        return self._ok("GET", "/api/admin/status")

    def logout(self) -> dict:
        data = self._ok("POST", "/api/logout", {})
        self.session = self.csrf = None
        return data
