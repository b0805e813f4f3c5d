"""Shared helpers for the annotation server tests: projects, accounts, a server subprocess."""

from __future__ import annotations

import csv
from pathlib import Path

from biaslab.annotate.auth import add_annotator
from biaslab.annotate.db import Database
from biaslab.annotate.project import init_project
from tests.annotate.loadgen import ServerProcess, free_port  # noqa: F401 (re-exported for the tests)

REPO = Path(__file__).resolve().parents[2]


def write_csv(path: Path, header: list[str], rows) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def ring_tuples(ids: list[str], n_tuples: int, size: int = 4, step: int = 3) -> list[list[str]]:
    """Distinct tuples: windows of ``size`` consecutive ids starting every ``step`` positions; once
    the starts wrap around, every 2nd, then every 3rd... id (arithmetic progressions are distinct sets)."""
    n = len(ids)
    out = []
    for t in range(n_tuples):
        base, spread = (t * step) % n, 1 + (t * step) // n
        out.append([ids[(base + k * spread) % n] for k in range(size)])
    return out


def make_project(
    tmp_path: Path,
    *,
    n_items: int = 40,
    n_tuples: int = 12,
    per_tuple: int = 3,
    cap: float = 0.5,
    texts: dict[str, str] | None = None,
    gold: list[list[str]] | None = None,
    name: str = "proj",
    **options,
) -> Path:
    ids = [str(i) for i in range(1, n_items + 1)]
    texts = texts or {}
    items = write_csv(
        tmp_path / f"{name}_items.csv",
        ["id", "text"],
        [[i, texts.get(i, f"Statement {i}: a person did something on day {i}.")] for i in ids],
    )
    tuples = write_csv(
        tmp_path / f"{name}_tuples.csv", ["Item1", "Item2", "Item3", "Item4"], ring_tuples(ids, n_tuples)
    )
    gold_file = None
    if gold:
        gold_file = write_csv(
            tmp_path / f"{name}_gold.csv", ["Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"], gold
        )
    project = tmp_path / name
    summary = init_project(
        project, items, tuples_file=tuples, per_tuple=per_tuple, cap=cap, gold_file=gold_file, **options
    )
    if summary["tuples"] != n_tuples:
        raise ValueError(f"test project has {summary['tuples']} distinct tuples, wanted {n_tuples}")
    return project


def make_accounts(project: Path, names: list[str], admin: bool = False) -> dict[str, str]:
    from concurrent.futures import ThreadPoolExecutor

    db = Database(project)
    try:
        with ThreadPoolExecutor(4) as pool:  # argon2 hashing dominates; do a few at once
            passwords = list(pool.map(lambda name: add_annotator(db, name, admin=admin), names))
        return dict(zip(names, passwords))
    finally:
        db.close()
