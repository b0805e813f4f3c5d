"""An annotation project: a folder holding ``annotate.sqlite`` (items, tuples, accounts, work).

``init_project`` builds the database in a temporary file and renames it into place, so a failed
``init`` leaves no half-made project behind.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from biaslab.annotate.db import DB_NAME, Database, connect, create_schema, db_path
from biaslab.annotate.loaders import GoldTuple, read_gold, read_instructions, read_items, read_tuples
from biaslab.errors import ConfigError, DataError

BREAK_EVERY = 25
PAPER_CAP = 0.08  # the default share of the tuples one annotator may be shown, in a large study
PAPER_LOAD = 160  # that share of the Fifty Shades of Bias study's 2,000 tuples: one person's allowance
NAME_CHARS = "letters, digits, _ . -"
DEFAULT_CONSTRUCT = "gender bias"  # the Fifty Shades of Bias study; projects made before --construct read as this
MAX_CONSTRUCT = 80


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_gender(construct: str) -> bool:
    return construct.strip().casefold() == DEFAULT_CONSTRUCT


def check_construct(construct: str) -> str:
    """The construct as stored: one line of 1-80 visible characters, e.g. "anti-Muslim bias"."""
    text = " ".join(str(construct).split())
    if not text or len(text) > MAX_CONSTRUCT or any(not ch.isprintable() for ch in text):
        raise ConfigError(
            f"--construct {str(construct)[:40]!r}: name the bias being rated in 1-{MAX_CONSTRUCT} "
            'printable characters, as a noun phrase, e.g. --construct "anti-Muslim bias"'
        )
    return text


def default_instructions(*, gold: bool = False, construct: str = DEFAULT_CONSTRUCT) -> str:
    """The default guidelines, fitted to the study: the paper's gender-bias guidelines for gender
    bias, otherwise the same rules for the named construct (``instructions_any.md`` with
    ``{construct}`` filled in); lines marked ``[gold]`` (about known-answer questions) only when
    the study has gold tuples."""
    name = "instructions.md" if is_gender(construct) else "instructions_any.md"
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    text = text.replace("{construct}", construct)
    lines = []
    for line in text.splitlines():
        if line.startswith("[gold] "):
            if not gold:
                continue
            line = line[len("[gold] ") :]
        lines.append(line)
    return "\n".join(lines) + "\n"


def cap_count(cap: float, n_tuples: int) -> int:
    """Most tuples one annotator may do: floor(cap x study tuples) (tolerant of float noise)."""
    return int(math.floor(cap * n_tuples + 1e-9))


def cap_limit(cap: float, n_tuples: int) -> int:
    """:func:`cap_count`, refused in one line when it lets nobody do a tuple."""
    limit = cap_count(cap, n_tuples)
    if limit < 1:
        raise ConfigError(
            f"--cap {cap} of {n_tuples} tuples lets each annotator do no tuple at all; "
            f"raise --cap to at least {1 / n_tuples:.4g}"
        )
    return limit


def default_cap(n_tuples: int) -> float:
    """The cap when ``--cap`` is not given: each annotator may be shown 8% of the tuples, but at least
    160 of them (8% of the paper's 2,000) and never more than half of them (at least one).

    The cap is there so that no single annotator's judgements weigh much in the scores and nobody
    reads more of the (often offensive) texts than needed. From 2,000 tuples up, 8% keeps each
    annotator under 3% of the annotations at 3 per tuple (38 annotators needed). Below that, a fixed
    8% would ask a small study for as many people as a large one (12 items, 24 tuples: 72); 160 tuples
    is what the default asks of one person at the paper's size, so a smaller study keeps that
    allowance and needs proportionally fewer people, and the half keeps a cap in the smallest
    studies: nobody sees the whole study, and a team of twice the annotations per tuple (6 at 3 per
    tuple) can finish it.
    """
    if PAPER_CAP * n_tuples >= PAPER_LOAD:
        return PAPER_CAP
    return min(PAPER_LOAD, max(1, n_tuples // 2)) / max(n_tuples, 1)


def needed_annotators(per_tuple: int, n_tuples: int, limit: int) -> int:
    """Fewest annotators that can give every study tuple ``per_tuple`` annotations under the cap."""
    return max(per_tuple, math.ceil(per_tuple * n_tuples / max(limit, 1)))


def plural(n: int, word: str) -> str:
    """``1 tuple``, ``2 tuples``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def cap_line(per_tuple: int, n_tuples: int, cap: float, limit: int, *, default: bool = False) -> str:
    """What the cap means for the study, in one line (``init`` prints it)."""
    needed = needed_annotators(per_tuple, n_tuples, limit)
    why = f"the default for {plural(n_tuples, 'tuple')}" if default else "--cap"
    return (
        f"{plural(per_tuple, 'annotation')} per tuple; each annotator may be shown {limit} of the "
        f"{plural(n_tuples, 'tuple')} (cap {cap:.3g}: {why}; answered and skipped alike); at least "
        f"{plural(needed, 'annotator')} {'is' if needed == 1 else 'are'} needed"
    )


@dataclass(frozen=True)
class Settings:
    """A project's parameters, read from the ``meta`` table (changeable only before the study starts:
    :mod:`biaslab.annotate.amend`)."""

    per_tuple: int
    cap: float
    cap_count: int
    tuple_size: int
    n_tuples: int
    n_gold: int
    gold_rate: float
    gold_threshold: float
    gold_min: int
    instructions: str
    construct: str = DEFAULT_CONSTRUCT
    break_every: int = BREAK_EVERY

    @classmethod
    def load(cls, db: Database) -> Settings:
        m = db.read_meta()
        return cls(
            per_tuple=int(m["per_tuple"]),
            cap=float(m["cap"]),
            cap_count=int(m["cap_count"]),
            tuple_size=int(m["tuple_size"]),
            n_tuples=int(m["n_tuples"]),
            n_gold=int(m["n_gold"]),
            gold_rate=float(m["gold_rate"]),
            gold_threshold=float(m["gold_threshold"]),
            gold_min=int(m["gold_min"]),
            instructions=m["instructions"],
            construct=m.get("construct") or DEFAULT_CONSTRUCT,
        )

    def needed_annotators(self) -> int:
        """Fewest annotators that can give every study tuple ``per_tuple`` annotations under the cap."""
        return needed_annotators(self.per_tuple, self.n_tuples, self.cap_count)


def designed_tuples(item_ids: list[str], seed: int, appearances: int, attempts: int) -> list[tuple[str, ...]]:
    from biaslab.bws.design import design_tuples

    return [tuple(t) for t in design_tuples(item_ids, seed=seed, appearances=appearances, attempts=attempts)]


def check_numbers(per_tuple: int, cap: float | None, gold_rate: float, gold_threshold: float, gold_min: int) -> None:
    """One-line errors for settings out of range (``cap`` None: the default, always in range)."""
    if per_tuple < 1:
        raise ConfigError(f"--per-tuple {per_tuple}: each tuple needs at least 1 annotation")
    if cap is not None and not 0 < cap <= 1:
        raise ConfigError(f"--cap {cap}: the cap is a share of the tuples, in (0, 1] (the paper used 0.08)")
    if not 0 <= gold_rate < 1:
        raise ConfigError(f"--gold-rate {gold_rate}: a share of the tuples handed out, in [0, 1)")
    if not 0 <= gold_threshold <= 1:
        raise ConfigError(f"--gold-threshold {gold_threshold}: an accuracy, in [0, 1]")
    if gold_min < 1:
        raise ConfigError(f"--gold-min {gold_min}: at least 1 gold answer before flagging")


def init_project(
    project_dir: Path,
    items_file: Path,
    *,
    tuples_file: Path | None = None,
    seed: int | None = None,
    per_tuple: int | None = None,
    cap: float | None = None,
    gold_file: Path | None = None,
    instructions_file: Path | None = None,
    gold_rate: float | None = None,
    gold_threshold: float | None = None,
    gold_min: int | None = None,
    id_column: str | None = None,
    text_column: str | None = None,
    construct: str = DEFAULT_CONSTRUCT,
    appearances: int | None = None,
    attempts: int | None = None,
) -> dict:
    """Create the project; returns a summary (counts and settings) for the CLI to print. A setting
    None takes its default: 3 annotations per tuple, :func:`default_cap` for the study's number of
    tuples, gold rate 0.1, threshold 0.7, minimum 5."""
    per_tuple = 3 if per_tuple is None else per_tuple
    gold_rate = 0.1 if gold_rate is None else gold_rate
    gold_threshold = 0.7 if gold_threshold is None else gold_threshold
    gold_min = 5 if gold_min is None else gold_min
    project_dir = Path(project_dir)
    if db_path(project_dir).exists():
        raise ConfigError(f"{project_dir} already holds an annotation project ({DB_NAME}); choose a new folder")
    if project_dir.exists() and not project_dir.is_dir():
        raise ConfigError(f"{project_dir} exists and is not a folder; choose a new folder for the project")
    if tuples_file is not None and seed is not None:
        raise ConfigError("give either --tuples FILE (your own tuples) or --seed S (design them), not both")
    if tuples_file is not None and (appearances is not None or attempts is not None):
        raise ConfigError("--appearances and --attempts shape designed tuples; with --tuples FILE leave them out")
    construct = check_construct(construct)
    check_numbers(per_tuple, cap, gold_rate, gold_threshold, gold_min)
    items = read_items(items_file, id_column, text_column)
    known = {item_id for item_id, _ in items}
    if tuples_file is not None:
        tuples = read_tuples(tuples_file, known)
        design = f"from {Path(tuples_file).name}"
    else:
        seed = 0 if seed is None else seed
        appearances = 8 if appearances is None else appearances
        tuples = designed_tuples(
            [item_id for item_id, _ in items], seed, appearances, 100 if attempts is None else attempts
        )
        design = f"designed with seed {seed}, each item in {appearances} tuples"
    sizes = {len(t) for t in tuples}
    if len(sizes) != 1:
        raise DataError(f"{tuples_file}: tuples of different sizes {sorted(sizes)}; use one size throughout")
    gold: list[GoldTuple] = read_gold(gold_file, known) if gold_file is not None else []
    study_sets = {frozenset(t): i for i, t in enumerate(tuples)}
    for g in gold:
        if len(g.items) != len(tuples[0]):
            raise DataError(f"{gold_file}: gold tuples have {len(g.items)} items, the study tuples {len(tuples[0])}")
        if frozenset(g.items) in study_sets:
            raise DataError(
                f"{gold_file}: gold tuple {', '.join(g.items)} is also a study tuple; gold tuples must be "
                "separate from the tuples being annotated"
            )
    cap_given = cap is not None
    cap = default_cap(len(tuples)) if cap is None else cap
    limit = cap_limit(cap, len(tuples))
    instructions = (
        read_instructions(instructions_file)
        if instructions_file
        else default_instructions(gold=bool(gold), construct=construct)
    )

    project_dir.mkdir(parents=True, exist_ok=True)
    tmp = project_dir / f".{DB_NAME}.{secrets.token_hex(4)}.tmp"
    try:
        conn = connect(tmp)
        try:
            create_schema(conn)
            meta = {
                "per_tuple": per_tuple,
                "cap": cap,
                "cap_count": limit,
                "tuple_size": len(tuples[0]),
                "n_tuples": len(tuples),
                "n_gold": len(gold),
                "gold_rate": gold_rate if gold else 0.0,
                "gold_threshold": gold_threshold,
                "gold_min": gold_min,
                "instructions": instructions,
                "construct": construct,
                "design": design,
                "items_file": Path(items_file).name,
                "created_at": now_iso(),
            }
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [(k, str(v)) for k, v in meta.items()])
            conn.executemany(
                "INSERT INTO items (id, text, position) VALUES (?, ?, ?)",
                [(item_id, text, i) for i, (item_id, text) in enumerate(items)],
            )
            conn.executemany(
                "INSERT INTO tuples (id, items, is_gold) VALUES (?, ?, 0)",
                [(i + 1, json.dumps(list(t))) for i, t in enumerate(tuples)],
            )
            conn.executemany(
                "INSERT INTO tuples (id, items, is_gold, gold_best, gold_worst) VALUES (?, ?, 1, ?, ?)",
                [(len(tuples) + i + 1, json.dumps(list(g.items)), g.best, g.worst) for i, g in enumerate(gold)],
            )
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        for suffix in ("-wal", "-shm"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        os.replace(tmp, db_path(project_dir))
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    return {
        "items": len(items),
        "tuples": len(tuples),
        "gold": len(gold),
        "design": design,
        "per_tuple": per_tuple,
        "cap": cap,
        "cap_count": limit,
        "cap_default": not cap_given,
        "construct": construct,
        "custom_instructions": instructions_file is not None,
        "needed_annotators": needed_annotators(per_tuple, len(tuples), limit),
    }


def check_name(name: str) -> str:
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name or ""):
        raise ConfigError(f"annotator name {name[:40]!r}: use 1-64 {NAME_CHARS}, starting with a letter or digit")
    return name
