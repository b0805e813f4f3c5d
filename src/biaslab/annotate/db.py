"""The annotation project's SQLite database: schema, connections and transactions.

Durability rules (the server's promise that nothing acknowledged is lost):

* WAL journal and ``synchronous=FULL``: a COMMIT returns only once the WAL is fsynced;
* every write runs inside a ``BEGIN IMMEDIATE`` transaction (the write lock is taken up front, so
  two racing requests are serialised before either reads what it will decide on);
* the caller gets its result only after COMMIT returned, and the HTTP reply is built from it.

Group commit: one writer thread per :class:`Database` runs the writes. Whatever writes are waiting
when it starts a transaction go into that one transaction, each inside its own SAVEPOINT (so a
refused request rolls back alone and the others see exactly the state a one-by-one execution
would give them); one COMMIT, one fsync, then every waiting caller is answered. A failed COMMIT
fails every write of the batch: none of them is acknowledged. Other processes (a second server,
the CLI) are kept out by SQLite's lock and wait up to ``BUSY_TIMEOUT_MS``.
"""

from __future__ import annotations

import fcntl
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar, cast

from biaslab.errors import DataError

DB_NAME = "annotate.sqlite"
LOCK_NAME = ".serve.lock"
SCHEMA_VERSION = 2
BUSY_TIMEOUT_MS = 30_000
MAX_BATCH = 64
T = TypeVar("T")

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE items (id TEXT PRIMARY KEY, text TEXT NOT NULL, position INTEGER NOT NULL);
CREATE TABLE tuples (
    id INTEGER PRIMARY KEY,
    items TEXT NOT NULL,                 -- JSON list of item ids, in display order
    is_gold INTEGER NOT NULL DEFAULT 0,
    gold_best TEXT, gold_worst TEXT,
    taken INTEGER NOT NULL DEFAULT 0     -- assignments in state open or done
);
CREATE INDEX tuples_pick ON tuples (is_gold, taken, id);
CREATE TABLE annotators (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    pw_hash TEXT NOT NULL,
    is_admin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    consented_at TEXT,
    flagged INTEGER NOT NULL DEFAULT 0,
    flag_reason TEXT, flagged_at TEXT,
    seed INTEGER                         -- orders this annotator's tuples and shuffles their items
);
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    annotator_id INTEGER NOT NULL REFERENCES annotators (id),
    csrf TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    last_seen REAL                       -- for the idle timeout (updated at most every minute)
);
CREATE INDEX sessions_annotator ON sessions (annotator_id);
CREATE TABLE assignments (
    tuple_id INTEGER NOT NULL REFERENCES tuples (id),
    annotator_id INTEGER NOT NULL REFERENCES annotators (id),
    state TEXT NOT NULL CHECK (state IN ('open', 'done', 'skipped', 'expired')),
    handed_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    positions TEXT,                      -- JSON list of item ids in the order shown to this annotator
    skipped_at REAL,
    answered_at REAL,
    PRIMARY KEY (tuple_id, annotator_id)
);
CREATE INDEX assignments_annotator ON assignments (annotator_id, state);
CREATE INDEX assignments_open ON assignments (state, expires_at);
CREATE TABLE annotations (
    id INTEGER PRIMARY KEY,
    tuple_id INTEGER NOT NULL REFERENCES tuples (id),
    annotator_id INTEGER NOT NULL REFERENCES annotators (id),
    best TEXT NOT NULL,
    worst TEXT NOT NULL,
    feedback TEXT NOT NULL DEFAULT '',
    submission_id TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    gold_correct INTEGER,                -- NULL for study tuples, 0/1 for gold tuples
    response TEXT NOT NULL,              -- the JSON answer sent, replayed for a repeated submission_id
    UNIQUE (tuple_id, annotator_id),
    UNIQUE (annotator_id, submission_id),
    CHECK (best <> worst)
);
"""


def db_path(project_dir: Path) -> Path:
    return Path(project_dir) / DB_NAME


def try_lock(project_dir: Path) -> IO[str] | None:
    """The project's exclusive lock, or None while another process holds it. ``serve`` holds it as
    long as it runs (it reads the settings once, at start) and ``init`` while it changes them, so
    settings never change under a running server. The kernel releases it when the holder dies."""
    fh = open(Path(project_dir) / LOCK_NAME, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    return fh


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with the durability pragmas."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise DataError(
            f"{path}: SQLite could not switch to WAL mode (got {mode!r}); "
            "keep the project folder on a local file system"
        )
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


# Version 1 -> 2: per-annotator seeds, shown positions, skip/answer times, idle sessions.
MIGRATIONS = {
    1: [
        "ALTER TABLE annotators ADD COLUMN seed INTEGER",
        "ALTER TABLE sessions ADD COLUMN last_seen REAL",
        "ALTER TABLE assignments ADD COLUMN positions TEXT",
        "ALTER TABLE assignments ADD COLUMN skipped_at REAL",
        "ALTER TABLE assignments ADD COLUMN answered_at REAL",
    ],
}


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a project made by an earlier biaslab up to ``SCHEMA_VERSION`` (in one transaction)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for step in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[step]:
                conn.execute(statement)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def create_schema(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    conn.execute("COMMIT")


class _Write:
    __slots__ = ("fn", "result", "error", "done")

    def __init__(self, fn):
        self.fn, self.result, self.error, self.done = fn, None, None, threading.Event()


class WriteFailed(sqlite3.OperationalError):
    """The transaction a write was batched in failed as a whole: nothing of it was stored."""


def _fail_batch(conn: sqlite3.Connection, batch: list[_Write], exc: BaseException) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass
    for job in batch:
        job.result = None
        job.error = WriteFailed(f"the write could not be stored ({type(exc).__name__}: {exc})")
        job.done.set()


class Database:
    """One project database: per-thread read connections and a group-committing writer thread."""

    def __init__(self, project_dir: Path):
        self.path = db_path(project_dir)
        if not self.path.is_file():
            raise DataError(
                f"{project_dir} is not an annotation project (no {DB_NAME}); "
                "create one with `biaslab annotate init DIR --items FILE`"
            )
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._writer_lock = threading.Lock()
        version = self.read_meta().get("schema_version")
        if version and version.isdigit() and int(version) in MIGRATIONS:
            migrate(self.conn(), int(version))
            version = self.read_meta().get("schema_version")
        if version != str(SCHEMA_VERSION):
            raise DataError(
                f"{self.path}: schema version {version!r}, this biaslab reads {SCHEMA_VERSION}; "
                "use the biaslab version that created the project"
            )

    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = connect(self.path)
            except sqlite3.DatabaseError as exc:
                raise DataError(f"{self.path}: cannot open the database ({exc})") from exc
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    def transact(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` in a write transaction; return its result once that transaction is
        committed (or raise what ``fn`` raised, with its changes rolled back)."""
        if threading.current_thread() is self._writer:
            raise RuntimeError("transact() called from inside a write")
        self._start_writer()
        job = _Write(fn)
        self._queue.put(job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        return cast(T, job.result)  # set to fn's result by the writer

    def _start_writer(self) -> None:
        with self._writer_lock:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(target=self._write_loop, name="biaslab-db-writer", daemon=True)
                self._writer.start()

    def submit_nowait(self, fn: Callable[[sqlite3.Connection], object]) -> None:
        """Queue a write and return at once (for bookkeeping nobody waits for, such as last-seen times)."""
        self._start_writer()
        self._queue.put(_Write(fn))

    def _write_loop(self) -> None:
        conn = self.conn()
        while True:
            job = self._queue.get()
            if job is None:
                return
            batch, stop = [job], False
            while len(batch) < MAX_BATCH:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            try:
                self._commit_batch(conn, batch)
            except BaseException as exc:  # the writer must never die: fail the batch, carry on
                _fail_batch(conn, batch, exc)
            if stop:
                return

    @staticmethod
    def _commit_batch(conn: sqlite3.Connection, batch: list[_Write]) -> None:
        """One transaction for the batch. Anything that breaks the transaction itself (SQLite rolls
        the whole of it back on a full disk or an I/O error) fails every write of the batch."""
        conn.execute("BEGIN IMMEDIATE")
        for job in batch:
            conn.execute("SAVEPOINT write")
            try:
                job.result = job.fn(conn)
            except Exception as exc:  # handed to that caller; the rest of the batch goes on
                job.error = exc
                conn.execute("ROLLBACK TO write")
            conn.execute("RELEASE write")
        conn.execute("COMMIT")
        for job in batch:
            job.done.set()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several SELECTs (WAL readers never block the writer)."""
        conn = self.conn()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def read_meta(self) -> dict[str, str]:
        with self.read() as conn:
            return {row["key"]: row["value"] for row in conn.execute("SELECT key, value FROM meta")}

    def integrity_check(self) -> str:
        row = self.conn().execute("PRAGMA integrity_check").fetchone()
        return str(row[0])

    def close(self) -> None:
        with self._writer_lock:
            writer, self._writer = self._writer, None
        if writer is not None and writer.is_alive():
            self._queue.put(None)
            writer.join(30)
        with self._all_lock:
            for conn in self._all:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()
