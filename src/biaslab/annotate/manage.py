"""The project-management commands of ``biaslab annotate`` as functions: each opens the project
database, does one thing and closes it again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from biaslab.annotate.db import Database

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


def export(project: Path, out: Path, *, include_flagged: bool = True) -> int:
    """Write the study's annotations (gold tuples left out) as a CSV; returns how many."""
    from biaslab.annotate.export import export_csv

    return _with_db(project, lambda db: export_csv(db, out, include_flagged=include_flagged))
