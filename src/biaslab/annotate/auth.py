"""Accounts, passwords (argon2id) and server-side sessions.

A session is a random token in an HttpOnly, SameSite=Strict cookie; the database keeps only its
SHA-256, the annotator it belongs to and its CSRF token. Identity always comes from the session,
never from a request body. Logging in always creates a new session (and drops the one the browser
had), so a token planted before login is worthless after it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from biaslab.annotate.db import Database
from biaslab.annotate.project import check_name, now_iso
from biaslab.errors import ConfigError

SESSION_COOKIE = "biaslab_session"
SESSION_SECONDS = 24 * 3600  # a session ends 24 hours after login at the latest ...
IDLE_SECONDS = 2 * 3600  # ... or after this long without a request (``serve --idle-timeout``)
SEEN_EVERY = 60  # last-seen times are written at most this often
MIN_PASSWORD = 10
MAX_PASSWORD = 1024

_hasher = PasswordHasher()  # argon2id, RFC 9106 low-memory profile
_hash_slots = threading.BoundedSemaphore(4)  # at most 4 hashes at once (64 MiB each)
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))


def hash_password(password: str) -> str:
    with _hash_slots:
        return _hasher.hash(password)


def verify_password(pw_hash: str | None, password: str) -> bool:
    """Constant work whether or not the account exists (an unknown name checks a dummy hash)."""
    with _hash_slots:
        try:
            return _hasher.verify(pw_hash or _DUMMY_HASH, password) and pw_hash is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False


def new_password() -> str:
    return secrets.token_urlsafe(12)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Session:
    annotator_id: int
    name: str
    is_admin: bool
    csrf: str
    consented: bool
    token_hash: str

    def csrf_ok(self, sent: str | None) -> bool:
        return bool(sent and hmac.compare_digest(sent.encode("utf-8"), self.csrf.encode("utf-8")))


def new_seed() -> int:
    """An annotator's presentation seed (tuple order and item positions), recorded with the account."""
    return secrets.randbits(62)


def add_annotators(db: Database, accounts: list[tuple[str, bool]]) -> dict[str, str]:
    """Create several accounts in one transaction (all or none); returns name -> initial password."""
    seen = set()
    for name, _ in accounts:
        check_name(name)
        if name in seen:
            raise ConfigError(f"annotator {name!r} is listed twice")
        seen.add(name)
    passwords = {name: new_password() for name, _ in accounts}
    hashes = {name: hash_password(pw) for name, pw in passwords.items()}

    def tx(conn):
        for name, admin in accounts:
            if conn.execute("SELECT 1 FROM annotators WHERE name = ?", (name,)).fetchone():
                raise ConfigError(
                    f"annotator {name!r} already exists; choose another name "
                    "(or `biaslab annotate reset-password DIR NAME`)"
                )
            conn.execute(
                "INSERT INTO annotators (name, pw_hash, is_admin, created_at, seed) VALUES (?, ?, ?, ?, ?)",
                (name, hashes[name], int(admin), now_iso(), new_seed()),
            )

    db.transact(tx)
    return passwords


def add_annotator(db: Database, name: str, *, admin: bool = False) -> str:
    """Create an account; returns its initial password (shown once, stored only as a hash)."""
    return add_annotators(db, [(name, admin)])[name]


def set_password(db: Database, name: str, password: str | None = None) -> str:
    """Replace an account's password (a new random one when none given) and end its sessions."""
    password = password or new_password()
    check_password(password)
    pw_hash = hash_password(password)

    def tx(conn):
        row = conn.execute("SELECT id FROM annotators WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise ConfigError(f"no annotator named {name!r}; list them with `biaslab annotate status DIR`")
        conn.execute("UPDATE annotators SET pw_hash = ? WHERE id = ?", (pw_hash, row["id"]))
        conn.execute("DELETE FROM sessions WHERE annotator_id = ?", (row["id"],))

    db.transact(tx)
    return password


def check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise ConfigError(f"a password needs {MIN_PASSWORD} to {MAX_PASSWORD} characters")


def login(db: Database, name: str, password: str, old_token: str | None) -> tuple[str, Session] | None:
    """Check the password; on success drop ``old_token``'s session and open a new one."""
    with db.read() as conn:
        row = conn.execute(
            "SELECT id, pw_hash, is_admin, consented_at FROM annotators WHERE name = ?", (name,)
        ).fetchone()
    if not verify_password(row["pw_hash"] if row else None, password):
        return None
    token, csrf, now = secrets.token_urlsafe(32), secrets.token_urlsafe(32), time.time()

    def tx(conn):
        if old_token:
            conn.execute("DELETE FROM sessions WHERE token_hash = ?", (_token_hash(old_token),))
        conn.execute("DELETE FROM sessions WHERE expires_at < ?", (now,))
        conn.execute(
            "INSERT INTO sessions (token_hash, annotator_id, csrf, created_at, expires_at, last_seen) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (_token_hash(token), row["id"], csrf, now, now + SESSION_SECONDS, now),
        )

    db.transact(tx)
    return token, Session(
        row["id"], name, bool(row["is_admin"]), csrf, row["consented_at"] is not None, _token_hash(token)
    )


def lookup(db: Database, token: str | None, idle: float = IDLE_SECONDS) -> Session | None:
    """The session of ``token``; None when unknown, past its 24 hours or idle for more than ``idle`` s."""
    if not token or len(token) > 200:
        return None
    th = _token_hash(token)
    row = (
        db.conn()
        .execute(
            "SELECT s.annotator_id, s.csrf, s.expires_at, s.created_at, s.last_seen, a.name, a.is_admin, "
            "a.consented_at FROM sessions s JOIN annotators a ON a.id = s.annotator_id WHERE s.token_hash = ?",
            (th,),
        )
        .fetchone()
    )
    if row is None:
        return None
    now = time.time()
    last = row["last_seen"] if row["last_seen"] is not None else row["created_at"]
    if row["expires_at"] < now or now - last > idle:
        return None
    if now - last > min(SEEN_EVERY, idle / 4):
        db.submit_nowait(
            lambda conn: conn.execute(
                "UPDATE sessions SET last_seen = MAX(COALESCE(last_seen, 0), ?) WHERE token_hash = ?", (now, th)
            )
        )
    return Session(
        row["annotator_id"], row["name"], bool(row["is_admin"]), row["csrf"], row["consented_at"] is not None, th
    )


def logout(db: Database, session: Session) -> None:
    db.transact(lambda conn: conn.execute("DELETE FROM sessions WHERE token_hash = ?", (session.token_hash,)))


def record_consent(db: Database, session: Session) -> None:
    db.transact(
        lambda conn: conn.execute(
            "UPDATE annotators SET consented_at = COALESCE(consented_at, ?) WHERE id = ?",
            (now_iso(), session.annotator_id),
        )
    )


def change_password(db: Database, session: Session, old: str, new: str) -> bool:
    with db.read() as conn:
        row = conn.execute("SELECT pw_hash FROM annotators WHERE id = ?", (session.annotator_id,)).fetchone()
    if row is None or not verify_password(row["pw_hash"], old):
        return False
    check_password(new)
    pw_hash = hash_password(new)

    def tx(conn):
        conn.execute("UPDATE annotators SET pw_hash = ? WHERE id = ?", (pw_hash, session.annotator_id))
        conn.execute(
            "DELETE FROM sessions WHERE annotator_id = ? AND token_hash <> ?",
            (session.annotator_id, session.token_hash),
        )

    db.transact(tx)
    return True
