"""Guess throttling for logins and password changes, and device cookies (in memory, bounded).

A guess is *reserved* before the password is checked and the reservation is released once the
answer is known, all under one lock: a burst of parallel guesses is counted as it arrives, so at
most ``free`` of them are ever checked, however many are sent at once.

Each guess is charged to several buckets (the name, the client address; or, for a browser with a
device cookie, that name on that device). A bucket lets ``free`` failures (``client_free`` for a
client address, which several people behind one router may share) through within
``window`` seconds; after that it lets one guess through at a time, each after an exponentially
growing wait (``base`` seconds, doubled with every further failure, at most ``window``). There is no
hard lock: a refused guess does not lengthen the wait.

Device cookies (the OWASP pattern): a successful login gives the browser a signed cookie naming the
account. A login that presents a valid one for the name is charged only to that device's bucket,
so failures made elsewhere (an outsider guessing without the cookie) never lock that browser out.

Memory is bounded: at most ``max_keys`` buckets; when full, expired buckets go first, then the
least recently used ones.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

DEVICE_COOKIE = "biaslab_device"
DEVICE_SECONDS = 180 * 24 * 3600


@dataclass
class _Bucket:
    failures: int = 0
    pending: int = 0
    last_failure: float = 0.0


@dataclass(frozen=True)
class Refusal:
    wait: float  # seconds until the next guess can be checked


class GuessThrottle:
    def __init__(
        self,
        *,
        free: int = 10,
        client_free: int = 30,
        base: float = 30.0,
        window: float = 15 * 60,
        max_keys: int = 50_000,
        clock=time.monotonic,
    ):
        self.free, self.client_free, self.base, self.window = free, client_free, base, window
        self.max_keys = max_keys
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()
        self._clock = clock

    def __len__(self) -> int:
        return len(self._buckets)

    def _bucket(self, key: str, now: float) -> _Bucket:
        b = self._buckets.get(key)
        if b is not None:
            self._buckets.move_to_end(key)
            if b.pending == 0 and b.failures and now - b.last_failure > self.window:
                b.failures = 0
            return b
        if len(self._buckets) >= self.max_keys:
            self._evict(now)
        b = self._buckets[key] = _Bucket()
        return b

    def _evict(self, now: float) -> None:
        stale = [k for k, b in self._buckets.items() if b.pending == 0 and now - b.last_failure > self.window]
        for k in stale:
            del self._buckets[k]
        while len(self._buckets) >= self.max_keys:
            self._buckets.popitem(last=False)

    def _wait(self, key: str, b: _Bucket, now: float) -> float:
        free = self.client_free if key.startswith("client:") else self.free
        if b.failures + b.pending < free:
            return 0.0
        if b.pending:  # past the free guesses: one at a time
            return self.base
        delay = min(self.base * 2 ** min(b.failures - free, 30), self.window)
        return max(b.last_failure + delay - now, 0.0)

    def reserve(self, keys: list[str]) -> Refusal | None:
        """Count a guess against every key, or refuse it (counting nothing) if any key must wait."""
        with self._lock:
            now = self._clock()
            buckets = [self._bucket(k, now) for k in keys]
            wait = max((self._wait(k, b, now) for k, b in zip(keys, buckets)), default=0.0)
            if wait > 0:
                return Refusal(wait)
            for b in buckets:
                b.pending += 1
            return None

    def settle(self, keys: list[str], ok: bool) -> None:
        """The reserved guess was checked: a failure counts; a success clears the account's buckets
        (not the client address's: one valid account must not reset a guesser's count)."""
        with self._lock:
            now = self._clock()
            for k in keys:
                b = self._bucket(k, now)
                b.pending = max(b.pending - 1, 0)
                if ok and not k.startswith("client:"):
                    b.failures = 0
                elif not ok:
                    b.failures += 1
                    b.last_failure = now


class DeviceCookies:
    """Signed cookies ``name.nonce.mac`` (HMAC-SHA256 with the project's secret)."""

    def __init__(self, secret: bytes):
        self._secret = secret

    def _mac(self, name: str, nonce: str) -> str:
        digest = hmac.new(self._secret, f"{name}\0{nonce}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def issue(self, name: str) -> str:
        nonce = secrets.token_urlsafe(12)
        return f"{name}.{nonce}.{self._mac(name, nonce)}"

    def device_for(self, cookie: str | None, name: str) -> str | None:
        """The device's id when ``cookie`` is a valid device cookie for ``name``, else None."""
        if not cookie or len(cookie) > 300:
            return None
        head, _, mac = cookie.rpartition(".")
        owner, _, nonce = head.rpartition(".")
        if owner != name or not nonce:
            return None
        return nonce if hmac.compare_digest(mac.encode(), self._mac(owner, nonce).encode()) else None


def login_keys(name: str, client: str, device: str | None) -> list[str]:
    """The buckets a login guess is charged to."""
    if device is not None:
        return [f"device:{name}:{device}"]
    return [f"name:{name}", f"client:{client}"]
