"""A transformers sequence-classification checkpoint as a scorer: ``hf/<dir>``.

Options: ``label`` (a label name from the checkpoint's ``id2label``, case-insensitive, or its
index; default: the only output of a one-output regression head, else index 1 of a two-label
head, else required) and ``output`` (``prob``: softmax probability, or sigmoid for multi-label
heads; ``logit``: the raw logit), ``batch_size``, ``max_length``. The checkpoint must be a local
folder: nothing is downloaded. Its identity hashes the config and weight files, so a changed
checkpoint gets fresh cached scores.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError

OUTPUTS = ("prob", "logit")
_HASHED = ("config.json", "*.safetensors", "*.bin")


def checkpoint_digest(path: Path) -> str:
    h = hashlib.sha256()
    for pattern in _HASHED:
        for f in sorted(path.glob(pattern)):
            h.update(f.name.encode())
            with open(f, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()[:16]


def _int(value: Any, name: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}={value!r} must be a whole number") from None
    if number < 1:
        raise ConfigError(f"{name} must be at least 1 (got {number})")
    return number


class HfClassifierScorer:
    def __init__(
        self,
        path: str,
        *,
        label: str | None = None,
        output: str = "prob",
        batch_size: Any = 32,
        max_length: Any = 512,
        device: str | None = None,
    ):
        folder = Path(path).expanduser()
        if not str(path).strip():
            raise ConfigError("the hf scorer needs a checkpoint folder: hf/<dir>, e.g. hf/models/corgi-pm")
        if not folder.is_dir():
            raise ConfigError(
                f"hf scorer: checkpoint folder {folder} not found; give a local folder with "
                "config.json and the model weights (hf/<dir>)"
            )
        if not (folder / "config.json").is_file():
            raise ConfigError(f"hf scorer: {folder} has no config.json; it must be a saved transformers checkpoint")
        output = (output or "prob").strip().lower()
        if output not in OUTPUTS:
            raise ConfigError(f"hf scorer output={output!r}; choose output=prob or output=logit")
        self.batch_size, self.max_length = _int(batch_size, "batch_size"), _int(max_length, "max_length")
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            self._tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
            self._model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True)
        except (OSError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(f"hf scorer: cannot load a sequence classifier from {folder} ({first[:200]})") from None
        self._torch = torch
        self._device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self._model.to(self._device).eval()
        config = self._model.config
        self.index, self.label = self._pick_label(label, config)
        self.output = "logit" if config.num_labels == 1 else output
        self._multi_label = getattr(config, "problem_type", None) == "multi_label_classification"
        self.name = f"hf/{folder.name}"
        self.identity = (
            f"hf:{folder.resolve()}:{checkpoint_digest(folder)}:label={self.label}:output={self.output}:"
            f"max_length={self.max_length}"
        )

    @staticmethod
    def _pick_label(label: str | None, config) -> tuple[int, str]:
        names = {int(k): str(v) for k, v in (config.id2label or {}).items()}
        n = int(config.num_labels)
        listing = ", ".join(f"{i}={names.get(i, i)}" for i in range(n))
        if label is None or str(label).strip() == "":
            if n <= 2:
                index = n - 1
                return index, names.get(index, str(index))
            raise ConfigError(f"hf scorer: the checkpoint has {n} labels ({listing}); choose one with label=NAME")
        text = str(label).strip()
        for i, name in names.items():
            if name.lower() == text.lower():
                return i, name
        if text.isdigit() and int(text) < n:
            return int(text), names.get(int(text), text)
        raise ConfigError(f"hf scorer: no label {text!r} in the checkpoint; its labels: {listing}")

    def score(self, texts: Sequence[str]) -> list[float]:
        torch = self._torch
        out: list[float] = []
        texts = list(texts)
        with torch.no_grad():
            for start in range(0, len(texts), self.batch_size):
                batch = self._tok(
                    texts[start : start + self.batch_size],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self._device)
                logits = self._model(**batch).logits.float()
                if self.output == "logit":
                    values = logits[:, self.index]
                elif self._multi_label:
                    values = torch.sigmoid(logits[:, self.index])
                else:
                    values = torch.softmax(logits, dim=-1)[:, self.index]
                out += [float(v) for v in values.cpu()]
        return out


def make_hf(rest: str = "", **options) -> HfClassifierScorer:
    known = {"label", "output", "batch_size", "max_length", "device"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(f"the hf scorer takes the options {', '.join(sorted(known))}, not {', '.join(unknown)}")
    return HfClassifierScorer(rest, **options)
