"""``init`` on an existing project: change the settings of a study that has not started.

* The study's content -- items, tuples, gold tuples -- is fixed when it is made (tuple ids,
  assignments, the cap's count and the export refer to it). The files given again (``--items``,
  ``--tuples`` or a design, ``--gold``) must give the same content, else ``init`` refuses: a study of
  other texts is a new study, in a new folder.
* The settings -- cap, annotations per tuple, gold rate, threshold and minimum, construct,
  instructions -- can change until the first tuple is shown to anyone; then they are the rules
  that work was done under, and changing them would mix two rules (two caps, two wordings of the
  question) in one study. A setting not given keeps its value.
* The settings live in the database's ``meta`` table: the change is one SQLite transaction, all
  or nothing. It is made holding the project lock that ``serve`` holds as long as it runs
  (:func:`biaslab.annotate.db.try_lock`): a server reads the settings once, when it starts, so
  ``init`` refuses while one runs, and a server started meanwhile refuses to start.
* Accounts that accepted the content warning see it again when something it or the instructions
  page shows changed (the cap, the construct, the instructions).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

from biaslab.annotate.db import Database, try_lock
from biaslab.annotate.loaders import read_gold, read_instructions, read_items, read_tuples
from biaslab.annotate.project import (
    Settings,
    cap_limit,
    check_construct,
    check_numbers,
    default_instructions,
    designed_tuples,
    now_iso,
    plural,
)
from biaslab.errors import ConfigError

# (Settings field, command-line flag), in the order changes are reported.
SETTINGS = (
    ("cap", "--cap"),
    ("per_tuple", "--per-tuple"),
    ("gold_rate", "--gold-rate"),
    ("gold_threshold", "--gold-threshold"),
    ("gold_min", "--gold-min"),
    ("construct", "--construct"),
    ("instructions", "--instructions"),
)
SHOWN_ON_CONSENT = ("cap", "construct", "instructions")  # what an annotator accepted (consent, then instructions)


def _content_differences(
    db: Database,
    items_file: Path | None,
    tuples_file: Path | None,
    design: tuple[int | None, int | None, int | None],
    gold_file: Path | None,
    columns: tuple[str | None, str | None],
) -> list[str]:
    """What the files given describe differently from the study's content (nothing given: nothing)."""
    conn = db.conn()
    stored = [(r["id"], r["text"]) for r in conn.execute("SELECT id, text FROM items ORDER BY position")]
    known = {item_id for item_id, _ in stored}
    rows = conn.execute("SELECT items, is_gold, gold_best, gold_worst FROM tuples ORDER BY id").fetchall()
    study = [tuple(json.loads(r["items"])) for r in rows if not r["is_gold"]]
    gold = [(tuple(json.loads(r["items"])), r["gold_best"], r["gold_worst"]) for r in rows if r["is_gold"]]
    out = []

    def compare(what: str, given: list, have: list) -> None:
        if given != have:
            counts = f"{len(given)}, the study {len(have)}" if len(given) != len(have) else "not the study's"
            out.append(f"{what} ({counts})")

    if items_file is not None:
        compare(f"the items of {Path(items_file).name}", read_items(items_file, *columns), stored)
    seed, appearances, attempts = design
    if tuples_file is not None:
        compare(f"the tuples of {Path(tuples_file).name}", read_tuples(tuples_file, known), study)
    elif design != (None, None, None):
        tuples = designed_tuples(
            [item_id for item_id, _ in stored],
            0 if seed is None else seed,
            8 if appearances is None else appearances,
            100 if attempts is None else attempts,
        )
        compare("the designed tuples", tuples, study)
    if gold_file is not None:
        given_gold = [(g.items, g.best, g.worst) for g in read_gold(gold_file, known)]
        compare(f"the gold tuples of {Path(gold_file).name}", given_gold, gold)
    return out


def _new_settings(
    old: Settings,
    *,
    per_tuple: int | None,
    cap: float | None,
    gold_rate: float | None,
    gold_threshold: float | None,
    gold_min: int | None,
    construct: str | None,
    instructions_file: Path | None,
) -> tuple[Settings, bool]:
    """The settings after the change (those not given kept), and whether the study's own
    instructions were kept under a new construct (the CLI says to check them)."""
    per_tuple = old.per_tuple if per_tuple is None else per_tuple
    gold_threshold = old.gold_threshold if gold_threshold is None else gold_threshold
    gold_min = old.gold_min if gold_min is None else gold_min
    check_numbers(per_tuple, cap, old.gold_rate if gold_rate is None else gold_rate, gold_threshold, gold_min)
    if gold_rate is None or not old.n_gold:  # without gold tuples the rate stays 0, as at creation
        gold_rate = old.gold_rate
    cap = old.cap if cap is None else cap
    construct = old.construct if construct is None else check_construct(construct)
    kept_own = False
    if instructions_file is not None:
        instructions = read_instructions(instructions_file)
    elif construct != old.construct:
        gold = bool(old.n_gold)
        if old.instructions == default_instructions(gold=gold, construct=old.construct):
            instructions = default_instructions(gold=gold, construct=construct)
        else:
            instructions, kept_own = old.instructions, True
    else:
        instructions = old.instructions
    new = replace(
        old,
        per_tuple=per_tuple,
        cap=cap,
        cap_count=cap_limit(cap, old.n_tuples),
        gold_rate=gold_rate,
        gold_threshold=gold_threshold,
        gold_min=gold_min,
        construct=construct,
        instructions=instructions,
    )
    return new, kept_own


def _describe(name: str, old: object, new: object) -> str:
    flag = dict(SETTINGS)[name].removeprefix("--")
    if name == "instructions":
        return "instructions (new text)"
    if name == "construct":
        return f"construct {old!r} -> {new!r}"
    return f"{flag} {old:g} -> {new:g}" if isinstance(old, float) else f"{flag} {old} -> {new}"


def _apply(conn: sqlite3.Connection, project_dir: Path, new: Settings, changed: list[str]) -> int:
    """Store ``new`` unless the study has started; returns how many consents were withdrawn."""
    shown = conn.execute("SELECT COUNT(*) FROM assignments").fetchone()[0]
    if shown:
        answered = conn.execute("SELECT COUNT(*) FROM annotations").fetchone()[0]
        flags = " and ".join(dict(SETTINGS)[name] for name in changed)
        raise ConfigError(
            f"{project_dir}: {flags} cannot change: {plural(shown, 'tuple')} "
            f"{'has' if shown == 1 else 'have'} been shown to annotators ({answered} answered) under the "
            "current settings, and changing them now would mix two sets of rules in one study; keep them, or "
            "make a new study in a new folder"
        )
    values = {
        "per_tuple": new.per_tuple,
        "cap": new.cap,
        "cap_count": new.cap_count,
        "gold_rate": new.gold_rate,
        "gold_threshold": new.gold_threshold,
        "gold_min": new.gold_min,
        "construct": new.construct,
        "instructions": new.instructions,
        "settings_changed_at": now_iso(),
    }
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [(k, str(v)) for k, v in values.items()])
    if not any(name in SHOWN_ON_CONSENT for name in changed):
        return 0
    return conn.execute("UPDATE annotators SET consented_at = NULL WHERE consented_at IS NOT NULL").rowcount


def change_settings(
    project_dir: Path,
    items_file: Path | None = None,
    *,
    tuples_file: Path | None = None,
    seed: int | None = None,
    appearances: int | None = None,
    attempts: int | None = None,
    gold_file: Path | None = None,
    id_column: str | None = None,
    text_column: str | None = None,
    per_tuple: int | None = None,
    cap: float | None = None,
    gold_rate: float | None = None,
    gold_threshold: float | None = None,
    gold_min: int | None = None,
    construct: str | None = None,
    instructions_file: Path | None = None,
) -> dict:
    """Change the settings given (None: keep) of the project in ``project_dir``, before any tuple is
    shown; the content files given must describe the study's own content. Returns a summary for the CLI."""
    project_dir = Path(project_dir)
    if tuples_file is not None and seed is not None:
        raise ConfigError("give either --tuples FILE (your own tuples) or --seed S (design them), not both")
    if tuples_file is not None and (appearances is not None or attempts is not None):
        raise ConfigError("--appearances and --attempts shape designed tuples; with --tuples FILE leave them out")
    db = Database(project_dir)
    try:
        lock = try_lock(project_dir)
        if lock is None:
            raise ConfigError(
                f"{project_dir}: `biaslab annotate serve` is serving this study and reads its settings only when "
                "it starts; stop it, run init again, then start it again"
            )
        try:
            differ = _content_differences(
                db, items_file, tuples_file, (seed, appearances, attempts), gold_file, (id_column, text_column)
            )
            if differ:
                raise ConfigError(
                    f"{project_dir}: {'; '.join(differ)}: a study's items, tuples and gold tuples are fixed when "
                    "it is made (its tuple ids, cap and export refer to them); make a new study in a new folder"
                )
            old = Settings.load(db)
            new, kept_own = _new_settings(
                old,
                per_tuple=per_tuple,
                cap=cap,
                gold_rate=gold_rate,
                gold_threshold=gold_threshold,
                gold_min=gold_min,
                construct=construct,
                instructions_file=instructions_file,
            )
            changed = [name for name, _ in SETTINGS if getattr(old, name) != getattr(new, name)]
            withdrawn = db.transact(lambda conn: _apply(conn, project_dir, new, changed)) if changed else 0
        finally:
            lock.close()
    finally:
        db.close()
    return {
        "changes": [_describe(name, getattr(old, name), getattr(new, name)) for name in changed],
        "consents_withdrawn": withdrawn,
        "kept_own_instructions": kept_own,
        "settings": new,
    }
