"""The annotation project's SQLite database: schema, connections and transactions.

Durability rules (the server's promise that nothing acknowledged is lost):

* WAL journal and ``synchronous=FULL``: a COMMIT returns only once the WAL is fsynced;
* every write is one ``BEGIN IMMEDIATE`` transaction (the write lock is taken up front, so two
  racing requests are serialised before either reads what it will decide on);
* the HTTP reply is built from what was committed, after COMMIT returned.

Within one server process a Python lock also serialises writers, so they queue in order instead
of polling SQLite's busy handler; other processes (a second server, the CLI) are kept out by
SQLite's own lock and wait up to ``BUSY_TIMEOUT_MS``.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ...errors import DataError

DB_NAME = "annotate.sqlite"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000

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
    flag_reason TEXT, flagged_at TEXT
);
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    annotator_id INTEGER NOT NULL REFERENCES annotators (id),
    csrf TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX sessions_annotator ON sessions (annotator_id);
CREATE TABLE assignments (
    tuple_id INTEGER NOT NULL REFERENCES tuples (id),
    annotator_id INTEGER NOT NULL REFERENCES annotators (id),
    state TEXT NOT NULL CHECK (state IN ('open', 'done', 'skipped', 'expired')),
    handed_at REAL NOT NULL,
    expires_at REAL NOT NULL,
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


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with the durability pragmas."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise DataError(f"{path}: SQLite could not switch to WAL mode (got {mode!r}); "
                        "keep the project folder on a local file system")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def create_schema(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    conn.execute("COMMIT")


class Database:
    """Per-thread connections to one project database, with write and read transactions."""

    def __init__(self, project_dir: Path):
        self.path = db_path(project_dir)
        if not self.path.is_file():
            raise DataError(f"{project_dir} is not an annotation project (no {DB_NAME}); "
                            "create one with `biaslab annotate init DIR --items FILE`")
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        version = self.read_meta().get("schema_version")
        if version != str(SCHEMA_VERSION):
            raise DataError(f"{self.path}: schema version {version!r}, this biaslab reads {SCHEMA_VERSION}; "
                            "use the biaslab version that created the project")

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

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any exception)."""
        with self._write_lock:
            conn = self.conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

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
        with self._all_lock:
            for conn in self._all:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()
