"""A disk cache for any scorer: one JSON file per scorer identity, keyed by the text's sha256.

Scores are computed in chunks; after each chunk the file is rewritten atomically, so an
interrupted scoring run keeps what it finished and a re-run scores only the rest. A new
identity (another package version, checkpoint or option) gets its own file.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path

from biaslab.io import atomic_write_text

CHUNK = 256


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class DiskCachedScorer:
    """Wraps a scorer; ``name`` and ``identity`` are the wrapped scorer's."""

    def __init__(self, scorer, cache_dir: Path | None = None, chunk: int = CHUNK):
        from biaslab.data.availability import cache_dir as default_cache_dir

        self.inner = scorer
        self.name = scorer.name
        self.identity = scorer.identity
        digest = hashlib.sha256(self.identity.encode("utf-8")).hexdigest()[:24]
        self.path = Path(cache_dir or default_cache_dir() / "scores") / f"{digest}.json"
        self.chunk = max(1, int(chunk))
        self.hits = 0
        self.computed = 0
        self._scores: dict[str, float | None] | None = None

    def _load(self) -> dict[str, float | None]:
        if self._scores is None:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                ok = isinstance(data, dict) and data.get("identity") == self.identity
                self._scores = dict(data.get("scores", {})) if ok else {}
            except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
                self._scores = {}  # a missing or damaged cache file is recomputed
        return self._scores

    def _save(self) -> None:
        payload = {"identity": self.identity, "scores": self._load()}
        atomic_write_text(self.path, json.dumps(payload, sort_keys=True) + "\n")

    def score(self, texts: Sequence[str]) -> list[float]:
        cached = self._load()
        keys = [text_key(t) for t in texts]
        todo = list(dict.fromkeys(k for k in keys if k not in cached))
        pending = set(todo)
        self.hits += sum(1 for k in keys if k not in pending)
        by_key = dict(zip(keys, texts))
        for start in range(0, len(todo), self.chunk):
            batch = todo[start : start + self.chunk]
            values = self.inner.score([by_key[k] for k in batch])
            for k, v in zip(batch, values, strict=True):
                v = float(v) if v is not None else math.nan
                cached[k] = v if math.isfinite(v) else None
            self.computed += len(batch)
            self._save()
        return [math.nan if (v := cached[k]) is None else float(v) for k in keys]
