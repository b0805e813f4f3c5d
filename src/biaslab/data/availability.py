"""Whether registered data files are here, and what to say when they are not.

Every place that reports data availability (the suite's choice of probes, ``biaslab probes``, a probe that
cannot load its data) says it the same way, in one line: which files are missing, where biaslab looked
(``BIASLAB_DATA_DIR`` and the download cache) and the exact command that fetches them. Nothing here downloads
or hashes a file: presence is what is checked (the sha256 is checked when a file is read).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from pathlib import Path

from biaslab.data.table import FILES
from biaslab.errors import ConfigError


def cache_dir() -> Path:
    """The download cache: ``BIASLAB_CACHE_DIR``, or the platform's cache directory for biaslab."""
    env = os.environ.get("BIASLAB_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("biaslab"))


def data_dir() -> Path | None:
    """``BIASLAB_DATA_DIR``, or None when it is not set."""
    env = os.environ.get("BIASLAB_DATA_DIR")
    return Path(env).expanduser() if env else None


def places(local: str) -> list[Path]:
    """Where biaslab looks for the registered file ``local``, in order: BIASLAB_DATA_DIR, the download cache."""
    root = data_dir()
    return ([root / local] if root is not None else []) + [cache_dir() / "data" / local]


def is_here(local: str) -> bool:
    """``local`` is a registered file with a copy in BIASLAB_DATA_DIR or the download cache."""
    return local in FILES and any(p.is_file() for p in places(local))


def missing(files: Iterable[str]) -> list[str]:
    """The files of ``files`` that are not here (each once, in order)."""
    return [f for f in dict.fromkeys(files) if not is_here(f)]


def fetch_command(files: Iterable[str]) -> str:
    """The command that downloads ``files`` into the download cache (their sha256 checked)."""
    return " ".join(["biaslab data --fetch", *(shlex.quote(f) for f in files)])


def looked_in() -> str:
    """``"looked in BIASLAB_DATA_DIR (/data) and the download cache (/cache/data)"``."""
    root = data_dir()
    where = f"BIASLAB_DATA_DIR ({root})" if root is not None else "BIASLAB_DATA_DIR (not set)"
    return f"looked in {where} and the download cache ({cache_dir() / 'data'})"


def put_it_at(local: str) -> str:
    """Where the user puts a file biaslab does not download: under BIASLAB_DATA_DIR."""
    root = data_dir()
    return str(root / local) if root is not None else f"BIASLAB_DATA_DIR/{local}"


def how_to_supply(files: list[str]) -> str:
    """How to get ``files`` (registered): the fetch command for those biaslab downloads, and for each file whose
    sha256 is not pinned (never downloaded) where to download it from and where to put it."""
    pinned = [f for f in files if FILES[f].sha256 is not None]
    parts = [f"fetch {'it' if len(pinned) == 1 else 'them'} with: {fetch_command(pinned)}"] if pinned else []
    parts += [
        f"download {FILES[f].url} and put it at {put_it_at(f)} (biaslab does not download it: its sha256 is not pinned)"
        for f in files
        if FILES[f].sha256 is None
    ]
    return "; ".join(parts)


def missing_message(files: Iterable[str]) -> str | None:
    """One line about the files of ``files`` that are not here, or None when every one is."""
    gone = missing(files)
    if not gone:
        return None
    unknown = [f for f in gone if f not in FILES]
    known = [f for f in gone if f in FILES]
    parts = [how_to_supply(known)] if known else []
    if unknown:
        parts.append(f"not a registered data file: {', '.join(unknown)} (`biaslab data` lists them)")
    return f"data file(s) missing: {', '.join(gone)} ({looked_in()}); " + "; ".join(parts)


def select(names: Iterable[str]) -> list[str]:
    """The registered files that ``names`` name: a file's path, or a folder's (every file under it)."""
    chosen: list[str] = []
    for name in names:
        folder = name.rstrip("/") + "/"
        found = [f for f in FILES if f == name or f.startswith(folder)]
        if not found:
            from difflib import get_close_matches

            close = get_close_matches(name, list(FILES), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"no registered data file or folder {name!r}{hint}; `biaslab data` lists them")
        chosen += [f for f in found if f not in chosen]
    return chosen
