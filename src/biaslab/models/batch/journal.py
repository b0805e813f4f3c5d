"""The batch journal: one JSON file per submitted batch in ``<cache dir>/batches/``.

A record is written (atomically, fsynced, the folder too) *before* the batch is submitted, again
as soon as the provider has given the input file's id and the batch's id, and whenever the batch's
state is looked at. A run killed at any point therefore finds, on its next start, every batch it
submitted: a record without a batch id is looked up at the provider by its token (OpenAI keeps it
in the batch's metadata) before anything is submitted again. Records hold request hashes, ids and
states, never a prompt, an answer or a key.

Runs that share a cache share its journal. :meth:`Journal.lock` is a lock per provider, server and
model (``flock`` on a file beside the records; the kernel drops it when its process dies) that a run
holds while it reads the journal and submits: the first run to take it submits and journals the
batch before it lets go, and the next one then finds that batch in the journal and waits for it,
so two runs started together on one cache submit one batch, not two. A record still ``submitting``
seen under the lock is therefore a submission whose process died.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from biaslab.errors import CacheError
from biaslab.io import atomic_write_text

FORMAT = 1
DROPPED = ("abandoned", "forgotten")  # states of records no run waits for: never submitted, or forgotten by hand


@dataclass
class BatchRecord:
    token: str  # ours, unique; also in the OpenAI batch's metadata
    provider: str  # "openai" | "anthropic"
    base_url: str
    model: str
    endpoint: str  # e.g. "/v1/chat/completions"
    ids: list[str]  # the custom_id of every request in the batch
    created: float
    command: str = ""
    run: str | None = None  # the run that submitted it ("jobs-lum on openai/gpt-4o-mini")
    input_file_id: str | None = None
    batch_id: str | None = None
    state: str = "submitting"  # then the provider's status; "abandoned" when it never reached the provider,
    # "forgotten" when `biaslab batches forget` dropped it
    counts: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # custom_id -> why (known once collected)
    collected: bool = False  # its results were read once it ended
    updated: float = 0.0
    round: int = 1  # 2, 3 ...: a retry of lines that failed in earlier batches
    format: int = FORMAT

    @classmethod
    def new(
        cls,
        *,
        provider: str,
        base_url: str,
        model: str,
        endpoint: str,
        ids: list[str],
        command: str = "",
        run: str | None = None,
        round: int = 1,
    ) -> BatchRecord:
        now = time.time()
        return cls(
            token=uuid.uuid4().hex,
            provider=provider,
            base_url=base_url,
            model=model,
            endpoint=endpoint,
            ids=list(ids),
            created=now,
            command=command,
            run=run,
            updated=now,
            round=round,
        )

    @property
    def spec(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def label(self) -> str:
        """The batch's id at the provider, or ``(not submitted <token>)``."""
        return self.batch_id or f"(not submitted {self.token[:12]})"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BatchRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


class Journal:
    """The records of one cache directory's batches (``directory`` is ``<cache dir>/batches``)."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)

    def path(self, record: BatchRecord) -> Path:
        return self.directory / f"{record.token}.json"

    def save(self, record: BatchRecord) -> None:
        """Write ``record`` atomically and make the write durable (file and folder fsynced)."""
        record.updated = time.time()
        try:
            atomic_write_text(self.path(record), json.dumps(record.to_json(), ensure_ascii=False) + "\n")
            fd = os.open(self.directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise CacheError(
                f"cannot write the batch journal in {self.directory} ({exc.strerror}); "
                "choose a writable place with --cache-dir or BIASLAB_CACHE_DIR"
            ) from None

    def records(
        self, *, provider: str | None = None, base_url: str | None = None, model: str | None = None
    ) -> list[BatchRecord]:
        """Every record (oldest first), or those of one provider, server and model."""
        out: list[BatchRecord] = []
        if not self.directory.is_dir():
            return out
        for path in self.directory.glob("*.json"):
            try:
                record = BatchRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError) as exc:
                raise CacheError(
                    f"the batch journal entry {path} is unreadable ({exc}); "
                    "move it away (its batch can still be seen at the provider)"
                ) from None
            if provider not in (None, record.provider) or base_url not in (None, record.base_url):
                continue
            if model not in (None, record.model):
                continue
            out.append(record)
        return sorted(out, key=lambda r: (r.created, r.token))

    def lock(self, provider: str, base_url: str, model: str) -> JournalLock:
        """The lock of one provider's, server's and model's records (see the module)."""
        key = hashlib.sha256(json.dumps([provider, base_url, model]).encode("utf-8")).hexdigest()[:20]
        return JournalLock(self.directory / f".{provider}-{key}.lock")

    def find(self, ref: str) -> BatchRecord:
        """The record whose batch id or token is (or starts with) ``ref``."""
        from biaslab.errors import ConfigError

        matches = [
            r
            for r in self.records()
            if ref in (r.batch_id, r.token)
            or (len(ref) >= 6 and (r.token.startswith(ref) or (r.batch_id or "").startswith(ref)))
        ]
        if len(matches) != 1:
            what = "no batch" if not matches else f"{len(matches)} batches"
            raise ConfigError(f"{what} in {self.directory} match {ref!r}; `biaslab batches list` shows them")
        return matches[0]


class JournalLock:
    """An exclusive ``flock`` on the file ``path``, between processes. Without ``fcntl`` (not POSIX) nothing is
    locked: runs then go on alone, as they did before locks."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, *, blocking: bool = True) -> bool:
        """Take the lock (wait for it when ``blocking``); False when another process holds it."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise CacheError(
                f"cannot lock the batch journal in {self.path.parent} ({exc.strerror}); "
                "choose a writable place with --cache-dir or BIASLAB_CACHE_DIR"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the file drops the lock
            self._fd = None

    def __enter__(self) -> JournalLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
