"""Registry of the research data files biaslab uses.

No data file is shipped with biaslab. Each file is obtained the way a user would:

1. from the directory named by ``BIASLAB_DATA_DIR`` (the layout of the table :data:`FILES`, read from the packaged
   ``files.toml`` by :mod:`biaslab.data.table`), or
2. downloaded from its upstream repository, pinned to a commit, into a per-user cache
   (``BIASLAB_CACHE_DIR`` or the platform cache dir) with pooch.

Either way the file's sha256 is checked before it is used.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from biaslab.data.availability import cache_dir, fetch_command, how_to_supply, looked_in, put_it_at
from biaslab.data.table import FILES, DataFile
from biaslab.errors import DataError


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _supply_hint(df: DataFile) -> str:
    return (
        f"set BIASLAB_DATA_DIR to a directory holding {df.local}, or go online so biaslab can download it from {df.url}"
    )


def data_path(local: str) -> Path:
    """Path of a verified copy of the registered data file ``local`` (e.g. "jobs/kennison_jobs.csv")."""
    if local not in FILES:
        raise DataError(f"{local!r} is not a registered data file; known: {', '.join(sorted(FILES))}")
    df = FILES[local]
    data_dir = os.environ.get("BIASLAB_DATA_DIR")
    if data_dir:
        path = Path(data_dir).expanduser() / df.local
        if path.is_file():
            _verify(path, df)
            return path
    if df.sha256 is None:
        raise DataError(f"data file {df.local} is missing ({looked_in()}): {how_to_supply([df.local])}")
    cached = cache_dir() / "data" / df.local
    if cached.is_file():
        _verify(cached, df)
        return cached
    return _download(df, cached)


def _verify(path: Path, df: DataFile) -> None:
    if df.sha256 is None:  # not pinned: whatever the user put there (results.json records its sha256)
        return
    got = sha256_of(path)
    if got != df.sha256:
        raise DataError(
            f"data file {path} is corrupt or a different version (sha256 {got[:12]}..., expected "
            f"{df.sha256[:12]}...); delete it and {_supply_hint(df)}"
        )


def _not_downloaded(df: DataFile, why: str) -> str:
    """One line: the file is missing (where biaslab looked), the download failed, and how to supply it."""
    return (
        f"data file {df.local} is missing ({looked_in()}) and could not be downloaded ({why}); once online run "
        f"`{fetch_command([df.local])}`, or put the file at {put_it_at(df.local)} (from {df.url})"
    )


def _download(df: DataFile, target: Path) -> Path:
    import pooch

    target.parent.mkdir(parents=True, exist_ok=True)
    if df.archive is not None:
        return _from_archive(df, target)
    try:
        got = pooch.retrieve(
            df.url, known_hash=f"sha256:{df.sha256}", fname=target.name, path=target.parent, progressbar=False
        )
    except ValueError as exc:  # checksum mismatch
        raise DataError(f"downloaded {df.local} does not match its pinned sha256 ({exc}); {_supply_hint(df)}") from None
    except Exception as exc:  # offline, DNS, HTTP error
        raise DataError(_not_downloaded(df, type(exc).__name__)) from None
    return Path(got)


def _from_archive(df: DataFile, target: Path) -> Path:
    """The member ``df.upstream`` of ``df.archive`` (downloaded once into the cache, its sha256 checked), extracted
    to ``target`` atomically and checked against ``df.sha256``."""
    import zipfile

    import pooch

    from biaslab.io import atomic_write_bytes

    archive = df.archive
    assert archive is not None
    try:
        got = pooch.retrieve(
            archive.url, known_hash=f"sha256:{archive.sha256}", path=cache_dir() / "archives", progressbar=False
        )
    except ValueError as exc:
        raise DataError(
            f"downloaded {archive.name} does not match its pinned sha256 ({exc}); {_supply_hint(df)}"
        ) from None
    except Exception as exc:  # offline, DNS, HTTP error
        raise DataError(_not_downloaded(df, f"{archive.name}: {type(exc).__name__}")) from None
    try:
        with zipfile.ZipFile(got) as zf:
            data = zf.read(df.upstream)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise DataError(f"{archive.name} holds no {df.upstream} ({exc}); {_supply_hint(df)}") from None
    if hashlib.sha256(data).hexdigest() != df.sha256:
        raise DataError(f"{df.upstream} in {archive.name} does not match its pinned sha256; {_supply_hint(df)}")
    atomic_write_bytes(target, data)
    return target


def checksums(locals_: list[str]) -> dict[str, str]:
    """``{file: sha256}`` for results.json (an unpinned file: the sha256 of the copy used)."""
    return {name: FILES[name].sha256 or sha256_of(data_path(name)) for name in locals_}


def local_status(local: str) -> tuple[str, Path | None]:
    """Where the registered file ``local`` is on this machine, without downloading: ``(status, path)``.

    status: "ok (data dir)" (BIASLAB_DATA_DIR), "ok (cache)", "sha256 mismatch" (the copy found is another
    version) or "not here" (downloaded when first needed).
    """
    df = FILES[local]
    data_dir = os.environ.get("BIASLAB_DATA_DIR")
    places = [(Path(data_dir).expanduser() / df.local, "data dir")] if data_dir else []
    places.append((cache_dir() / "data" / df.local, "cache"))
    for path, where in places:
        if path.is_file():
            if df.sha256 is None:
                return f"ok ({where}, not pinned)", path
            return (f"ok ({where})", path) if sha256_of(path) == df.sha256 else ("sha256 mismatch", path)
    return ("not here (put it under BIASLAB_DATA_DIR)" if df.sha256 is None else "not here"), None
