"""uvicorn's HTTP/1.1 protocol with a header read timeout (slowloris).

uvicorn closes a kept-alive connection that stays idle for ``timeout_keep_alive`` seconds, but
has no limit on how long a client may take to send a request's headers: one byte every few
seconds would hold a connection forever. Here every request's headers (from the connection's
start, or from the first byte after the previous response) must arrive within ``HEADER_TIMEOUT``
seconds, else the server answers 408 and closes the connection. Request bodies have their own
limit (:data:`biaslab.annotate.web.BODY_TIMEOUT`). Requests that cannot be parsed get their 400
with the security headers too.
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from biaslab.annotate.middleware import MAX_HEADER_BYTES, SECURITY_HEADERS

HEADER_TIMEOUT = 10.0
KEEP_ALIVE_TIMEOUT = 5  # seconds an idle kept-alive connection stays open
__all__ = ["HEADER_TIMEOUT", "KEEP_ALIVE_TIMEOUT", "MAX_HEADER_BYTES", "GuardedH11Protocol"]
_408 = b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class GuardedH11Protocol(H11Protocol):
    header_timeout = HEADER_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm()

    def _waiting_for_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def data_received(self, data: bytes) -> None:
        if self._waiting_for_headers():
            self._arm()  # a new request begins: its headers are on the clock
        super().data_received(data)
        if not self._waiting_for_headers():
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._disarm()  # idle until the next request: uvicorn's keep-alive timeout applies

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot parse (bad request line, headers over the size limit): 400 with the
        same security headers as every other answer."""
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"connection", b"close"),
            (b"cache-control", b"no-store"),
        ] + [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=msg.encode("ascii")),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event))
        self.transport.close()

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self._waiting_for_headers() and not self.transport.is_closing():
            self.transport.write(_408)
            self.transport.close()
