"""SQLite response cache: a wrapper around any backend.

Every model call goes through :class:`CachedModel`. A response is stored under a key made
of the model identity, the base URL, the request (messages or prompt), the parameters
that change output and the repetition index (the way inspect_ai keys its cache; unlike
lm-eval, sampled requests are cached too, per repetition). Each response is committed as
soon as the backend reports it, so a killed run resumes where it stopped and a finished run
re-runs with zero model calls. A log-likelihood call hands the backend every distinct request, those
answered from the cache marked (:meth:`~biaslab.models.base.ModelBackend.loglikelihood_rest`): a local
model then scores the rest in the batches of an uninterrupted call, so a resumed run gives its bits.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from biaslab.errors import CacheError
from biaslab.models.base import (
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ModelBackend,
    stable_json,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    model TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL
);
"""


def default_cache_path() -> Path:
    from biaslab.data.registry import cache_dir

    return cache_dir() / "responses.sqlite"


def describe_cache(path: Path) -> str:
    """One line about the response cache file ``path``: where it is, its answers and size (never creates it)."""
    if not path.is_file():
        return f"{path} (none yet: the first run creates it)"
    size = sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*") if p.is_file())  # with its WAL files
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)) as db:
            answers = int(db.execute("SELECT count(*) FROM responses").fetchone()[0])
    except sqlite3.Error as exc:
        return f"{path} ({size / 1e6:.1f} MB, unreadable: {exc})"
    return f"{path}: {answers} answers, {size / 1e6:.1f} MB (delete the file to start afresh)"


class ResponseCache:
    """A tiny key/value store in SQLite (WAL mode, one commit per response)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._db.execute("SELECT count(*) FROM responses LIMIT 1").fetchone()
        except sqlite3.DatabaseError as exc:
            raise _unwritable(self.path, exc) or CacheError(
                f"the response cache {self.path} is not a usable SQLite database ({exc}); "
                "move or delete it (cached answers will be recomputed) or choose another with --cache-dir"
            ) from None
        except OSError as exc:
            raise CacheError(
                f"cannot create the response cache at {self.path} ({exc.strerror}); "
                "choose a writable place with --cache-dir or BIASLAB_CACHE_DIR"
            ) from None

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        try:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(f"SELECT key, value FROM responses WHERE key IN ({marks})", chunk)
                for key, value in rows:
                    found[key] = value
        except sqlite3.DatabaseError as exc:
            raise CacheError(
                f"the response cache {self.path} is corrupt ({exc}); move or delete it and run again"
            ) from None
        return found

    def put(self, key: str, kind: str, model: str, value: str) -> None:
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses(key, kind, model, value, created) VALUES (?,?,?,?,?)",
                (key, kind, model, value, time.time()),
            )
        except sqlite3.DatabaseError as exc:
            raise _unwritable(self.path, exc) or CacheError(
                f"cannot write to the response cache {self.path} ({exc}); check its disk and run again "
                "(the answers cached so far are kept)"
            ) from None

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._db.close()


def _unwritable(path: Path, exc: sqlite3.DatabaseError) -> CacheError | None:
    """The error of a cache that cannot be written for a cause outside it (a full disk, the file size limit, no
    permission), which never advises deleting it: its answers were paid for. None for other errors."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # the primary result code
    kept = "the answers cached so far are kept, and the same command again resumes from them"
    if code == sqlite3.SQLITE_FULL:
        return CacheError(
            f"cannot write to the response cache {path}: its disk is full (or the file size limit, ulimit -f, is "
            f"reached); free space on it (or raise the limit) and run again; {kept}"
        )
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN):
        return CacheError(
            f"cannot write to the response cache {path} ({exc}); make it and its folder writable and run again, "
            f"or choose another place with --cache-dir; {kept}"
        )
    return None


@dataclass
class CallStats:
    """What a :class:`CachedModel` was asked and did; its ``stats`` count from the moment it was opened, and
    ``model.counts().since(earlier)`` is what happened after ``earlier = model.counts()`` (one run's share
    when several runs share the model: a suite's probes)."""

    requested: int = 0
    cache_hits: int = 0
    model_calls: int = 0
    new_tokens: int = 0
    retries: dict[str, int] | None = None  # the backend's retries by cause; None: a backend that never retries

    def since(self, earlier: CallStats) -> CallStats:
        retries = None
        if self.retries is not None:
            before = earlier.retries or {}
            retries = {k: n - before.get(k, 0) for k, n in sorted(self.retries.items()) if n > before.get(k, 0)}
        return CallStats(
            requested=self.requested - earlier.requested,
            cache_hits=self.cache_hits - earlier.cache_hits,
            model_calls=self.model_calls - earlier.model_calls,
            new_tokens=self.new_tokens - earlier.new_tokens,
            retries=retries,
        )

    def retry_fields(self) -> dict[str, Any]:
        """``{"retries": 3, "retry_causes": {"HTTP 429": 2, "timeout": 1}}`` for a run's record; ``{}`` for a
        backend that never retries."""
        if self.retries is None:
            return {}
        return {"retries": sum(self.retries.values()), "retry_causes": dict(self.retries)}


Progress = Callable[[int, Any, bool], None]  # (index, result, from_cache)


def model_cache_key(identity: dict[str, Any], base_url: str | None) -> str:
    """The model part of every cache key: the backend's identity and its base URL."""
    return stable_json({"identity": identity, "base_url": base_url})


def request_cache_key(model_key: str, kind: str, request_key: dict[str, Any], rule: str | None = None) -> str:
    """The cache key of one request (``kind``: ``generate`` or ``loglikelihood``); ``rule``: the backend's
    log-likelihood rule, for servers that score by a named one (entries of another rule are not reused)."""
    if rule is not None and kind == "loglikelihood":
        request_key = {**request_key, "rule": rule}
    raw = stable_json({"model": model_key, "kind": kind, "request": request_key})
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class CachedModel:
    """Wraps a backend; answers from the cache and stores every new response at once."""

    def __init__(self, backend: ModelBackend, cache: ResponseCache):
        self.backend = backend
        self.cache = cache
        self.stats = CallStats()
        self._identity = backend.identity()
        self._model_key = model_cache_key(self._identity, backend.base_url)
        self._reference: CachedModel | None = None

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    def record(self) -> dict[str, Any]:
        """results.json's model section: the identity, and what the backend's engine chose when it started (under
        ``engine``; not part of the identity, see :meth:`~biaslab.models.base.ModelBackend.engine_info`)."""
        info = getattr(self.backend, "engine_info", None)  # test doubles may lack it
        engine = info() if info is not None else None
        return {**self._identity, "engine": engine} if engine else dict(self._identity)

    def counts(self) -> CallStats:
        """A copy of :attr:`stats` with the backend's retries so far (see :meth:`CallStats.since`)."""
        retry_counts = getattr(self.backend, "retry_counts", None)  # test doubles may lack it
        retries = retry_counts() if retry_counts is not None else None
        return replace(self.stats, retries=dict(retries) if retries is not None else None)

    def reference(self) -> CachedModel | None:
        """The backend's reference-precision twin behind the same cache (its answers keyed by its own
        identity), or None when the backend computes at its reference precision already."""
        if self._reference is None:
            make = getattr(self.backend, "reference", None)  # test doubles may lack it
            twin = make() if make is not None else None
            if twin is not None:
                self._reference = CachedModel(twin, self.cache)
        return self._reference

    def _key(self, kind: str, request_key: dict[str, Any]) -> str:
        rule = getattr(self.backend, "loglikelihood_rule", None) if kind == "loglikelihood" else None
        return request_cache_key(self._model_key, kind, request_key, rule)

    def generate(self, requests: Sequence[GenerateRequest], progress: Progress | None = None) -> list[GenerateResult]:
        return self._run("generate", requests, GenerateResult, progress)

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], progress: Progress | None = None
    ) -> list[LoglikelihoodResult]:
        return self._run("loglikelihood", requests, LoglikelihoodResult, progress)

    def _run(self, kind, requests, result_cls, progress):
        keys = [self._key(kind, r.as_key()) for r in requests]
        distinct = list(dict.fromkeys(keys))
        cached = self.cache.get_many(distinct)
        results: list[Any] = [None] * len(requests)
        todo: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            self.stats.requested += 1
            if key in cached:
                results[i] = result_cls.from_json(json.loads(cached[key]))
                self.stats.cache_hits += 1
                if progress:
                    progress(i, results[i], True)
            else:
                todo.setdefault(key, []).append(i)
        if not todo:
            return results
        first: dict[str, Any] = {}
        for key, request in zip(keys, requests):
            first.setdefault(key, request)

        def on_result(j: int, result: Any) -> None:
            key = asked[j]
            if key not in todo or results[todo[key][0]] is not None:  # an answered request (the cache's stands)
                return
            self.cache.put(key, kind, self._model_key, json.dumps(result.to_json(), ensure_ascii=False))
            self.stats.model_calls += 1
            self.stats.new_tokens += getattr(result, "n_new_tokens", None) or 0
            for i in todo[key]:
                results[i] = result
                if progress:
                    progress(i, result, False)

        got: Sequence[Any]
        if kind == "loglikelihood":  # every distinct request, the answered ones marked: the batches of a whole call
            asked = distinct
            answered = {j for j, key in enumerate(distinct) if key in cached}
            got = self.backend.loglikelihood_rest([first[key] for key in asked], answered, on_result)
        else:
            asked = list(todo)
            got = self.backend.generate([first[key] for key in asked], on_result)
        for j, result in enumerate(got):  # backends that did not report every result: counted as if reported
            if result is not None:
                on_result(j, result)
        return results

    def close(self) -> None:
        self.backend.close()
        self.cache.close()
