"""Built benchmarks kept on disk: a published benchmark's pairs are a function of its components, the seed, the
mode and this builder's code alone, so they are built once (10-20 s of CPU) and read back after (well under a
second) by every later process: a run of ``winosemitism --limit 40`` no longer rebuilds all 58,816 pairs first.

They are kept in the model store (:mod:`biaslab.models.store`: ``BIASLAB_MODELS_DIR``, default the user cache), in
``built-pairs/<key>.json``. The key hashes the components (their content), the seed, the mode, every source file of
:mod:`biaslab.wino.build` and the Python version (the seeded shuffles are Python's), so a change to any of them
builds anew. A file that cannot be read or written is no error: the pairs are built as before.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pickle
import sys
from pathlib import Path
from typing import Any

from biaslab.wino.build.build import PAIR_COLUMNS, Pair, build_pairs

FORMAT = 1


@functools.cache
def _code_digest() -> str:
    h = hashlib.sha256(f"{FORMAT} {sys.version_info[0]}.{sys.version_info[1]}".encode())
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def key(comps: Any, *, seed: int, faithful: bool) -> str:
    """The name of the stored build of ``comps`` at ``seed`` in that mode, by this builder."""
    h = hashlib.sha256(pickle.dumps(comps))
    h.update(f"|{seed}|{faithful}|{_code_digest()}".encode())
    return h.hexdigest()[:32]


def _path(name: str) -> Path:
    from biaslab.models.store import models_dir

    return models_dir() / "built-pairs" / f"{name}.json"


def stored_pairs(comps: Any, *, seed: int, faithful: bool, name: str | None = None) -> tuple[Pair, ...]:
    """The pairs :func:`~biaslab.wino.build.build.build_pairs` makes of ``comps``: read from the store, or built
    and stored. ``name``: their :func:`key`, if the caller has it already."""
    from biaslab.models.store import build_lock

    name = name or key(comps, seed=seed, faithful=faithful)
    path = _path(name)
    found = _read(path)
    if found is not None:
        return found
    with build_lock(f"built-pairs-{name}"):  # another process building the same: wait for it, then read it
        found = _read(path)
        if found is not None:
            return found
        return _build_and_keep(comps, path, seed=seed, faithful=faithful)


def _read(path: Path) -> tuple[Pair, ...] | None:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["pairs"]
        return tuple(Pair(**dict(zip(PAIR_COLUMNS, row, strict=True))) for row in rows)
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or unreadable: built anew
        return None


def _build_and_keep(comps: Any, path: Path, *, seed: int, faithful: bool) -> tuple[Pair, ...]:
    pairs = tuple(build_pairs(comps, seed=seed, faithful=faithful).pairs)
    text = json.dumps({"format": FORMAT, "pairs": [[getattr(p, c) for c in PAIR_COLUMNS] for p in pairs]})
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:  # whole or not at all: a reader never sees half a file (another process may write the same one)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only store: built again next time
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return pairs
