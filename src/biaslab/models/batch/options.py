"""The batch options of the hosted-API backends (``openai/``, ``anthropic/``): ``-P batch=true`` and its settings.

==================== ========= ==============================================================
``batch``            false     send generation requests through the provider's batch API
``batch_poll_seconds`` 60      longest wait between two looks at the batches (the first looks come
                               sooner: 1, 2, 4 ... seconds)
``batch_retry``      batch     where failed or expired lines go again: ``batch`` (a new batch) or
                               ``online`` (ordinary requests, full price)
``batch_max_requests`` 0       requests per batch (0: the provider's limit, 50,000 for OpenAI,
                               100,000 for Anthropic); files are split at the size limit too
==================== ========= ==============================================================

``batch_dir`` (set by :func:`biaslab.models.open.open_cached_model`, not a user option) is the
journal's folder, ``<cache dir>/batches``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biaslab.errors import ConfigError

BATCH_OPTIONS = ("batch", "batch_poll_seconds", "batch_retry", "batch_max_requests")
RETRY_MODES = ("batch", "online")
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


@dataclass(frozen=True)
class BatchSettings:
    enabled: bool = False
    poll_seconds: float = 60.0
    retry: str = "batch"
    max_requests: int = 0  # 0: the provider's limit
    journal_dir: Path | None = None  # None: the user cache's batches/
    max_rounds: int = 3  # submissions of one request before the run gives up on it


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE | _FALSE:
        return text in _TRUE
    raise ConfigError(f"-P {key} must be true or false, got {value!r}")


def split_batch_options(options: dict[str, Any]) -> tuple[BatchSettings, dict[str, Any]]:
    """(the batch settings, the other options) of a hosted-API backend's options."""
    rest = {k: v for k, v in options.items() if k not in BATCH_OPTIONS and k != "batch_dir"}
    raw = {k: v for k, v in options.items() if (k in BATCH_OPTIONS or k == "batch_dir") and v is not None}
    enabled = _bool("batch", raw.get("batch", False))
    try:
        poll = float(raw.get("batch_poll_seconds", 60.0))
    except (TypeError, ValueError):
        raise ConfigError(
            f"-P batch_poll_seconds must be a number of seconds, got {raw['batch_poll_seconds']!r}"
        ) from None
    if not poll >= 0:
        raise ConfigError(f"-P batch_poll_seconds must be 0 or more seconds, got {poll:g}")
    retry = str(raw.get("batch_retry", "batch")).strip().lower()
    if retry not in RETRY_MODES:
        raise ConfigError(f"-P batch_retry must be batch (a new batch) or online, got {raw['batch_retry']!r}")
    try:
        max_requests = int(raw.get("batch_max_requests", 0))
    except (TypeError, ValueError):
        raise ConfigError(f"-P batch_max_requests must be a whole number, got {raw['batch_max_requests']!r}") from None
    if max_requests < 0:
        raise ConfigError("-P batch_max_requests must be 0 (the provider's limit) or more")
    if not enabled and any(k in raw for k in BATCH_OPTIONS if k != "batch"):
        given = ", ".join(k for k in BATCH_OPTIONS if k in raw and k != "batch")
        raise ConfigError(f"-P {given} only apply with -P batch=true")
    journal = Path(raw["batch_dir"]) if raw.get("batch_dir") else None
    return BatchSettings(enabled, poll, retry, max_requests, journal), rest


def note_likelihood_online(kind: str) -> None:
    """Say (once per process) that log-likelihood requests do not go through the batch API."""
    if kind in _NOTED:
        return
    _NOTED.add(kind)
    from biaslab import progress

    progress.note(
        "-P batch=true: log-likelihood requests go online (the batch APIs return no prompt log-probabilities)"
    )


_NOTED: set[str] = set()
