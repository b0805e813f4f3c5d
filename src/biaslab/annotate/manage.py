"""The project-management commands of ``biaslab annotate`` as functions: each opens the project
database, does one thing and closes it again."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from biaslab.annotate.db import Database
from biaslab.errors import ConfigError

T = TypeVar("T")


@contextmanager
def open_project(project: Path) -> Iterator[Database]:
    """The project's database, closed on leaving (a one-line error when ``project`` is not one)."""
    db = Database(project)
    try:
        yield db
    finally:
        db.close()


def _with_db(project: Path, fn: Callable[[Database], T]) -> T:
    with open_project(project) as db:
        return fn(db)


def add_account(project: Path, name: str, *, admin: bool = False) -> str:
    """Create an annotator (or admin) account; returns its initial password."""
    from biaslab.annotate.auth import add_annotator

    return _with_db(project, lambda db: add_annotator(db, name, admin=admin))


def read_accounts(path: Path) -> list[tuple[str, bool]]:
    """Accounts to create from a CSV/TSV/.xlsx: a ``name`` column and an optional ``admin`` column
    (yes/no, true/false, 1/0; empty = no)."""
    from biaslab.io import read_table

    table = read_table(path, what="accounts")
    name_col, admin_col = table.index("name"), table.index("admin")
    if name_col is None:
        raise ConfigError(
            f"{table.name}: no 'name' column (header is {', '.join(table.header)}); "
            "give one account name per row under a 'name' header"
        )
    accounts = []
    for n, row in zip(table.row_numbers, table.rows):
        flag = row[admin_col].strip().lower() if admin_col is not None else ""
        if flag not in ("", "0", "no", "false", "1", "yes", "true"):
            raise ConfigError(f"{table.name} row {n} column admin: {flag!r}; write yes or no")
        accounts.append((row[name_col].strip(), flag in ("1", "yes", "true")))
    if not accounts:
        raise ConfigError(f"{table.name}: no accounts (only a header row)")
    return accounts


def add_accounts(project: Path, accounts_file: Path, passwords_out: Path) -> int:
    """Create every account listed in ``accounts_file`` (all or none) and write their initial
    passwords to ``passwords_out`` (CSV name,password; mode 0600; never overwritten)."""
    from biaslab.annotate.auth import add_annotators

    passwords_out = Path(passwords_out)
    if passwords_out.exists():
        raise ConfigError(f"{passwords_out} already exists; choose a new file for the passwords (--passwords-out)")
    accounts = read_accounts(accounts_file)
    with open_project(project) as db:
        if not passwords_out.parent.is_dir():
            raise ConfigError(f"{passwords_out.parent} is not a folder; choose where to write the passwords")
        passwords = add_annotators(db, accounts)
    lines = ["name,password"] + [f"{name},{passwords[name]}" for name, _ in accounts]
    write_private(passwords_out, "\n".join(lines) + "\n")
    return len(accounts)


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (mode 0600 from creation), atomically."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def reset_password(project: Path, name: str) -> str:
    """Give an account a new random password (returned) and end its sessions."""
    from biaslab.annotate.auth import set_password

    return _with_db(project, lambda db: set_password(db, name))


def status(project: Path) -> dict[str, Any]:
    """Progress, per-annotator counts, gold accuracy and flags, split-half reliability so far
    (the admin status API's answer)."""
    from biaslab.annotate.project import Settings
    from biaslab.annotate.status import project_status

    return _with_db(project, lambda db: project_status(db, Settings.load(db)))


def export(project: Path, out: Path, *, include_flagged: bool = True) -> tuple[int, int]:
    """Write the study's annotations (gold tuples left out) as a CSV and the skips beside it
    (:func:`biaslab.annotate.export.skips_path`); returns how many of each."""
    from biaslab.annotate.export import export_csv

    return _with_db(project, lambda db: export_csv(db, out, include_flagged=include_flagged))
