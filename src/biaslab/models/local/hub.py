"""Is an ``hf/<name>`` model reachable? One quick answer before transformers tries (and retries).

:func:`check_hf_source` runs when an ``hf/`` spec is resolved: a path that is not a directory is a
one-line "directory not found"; a hub id that is neither a directory nor in the Hugging Face cache
is looked up once on the hub (a few seconds at most, no retries) -- offline, or when the hub has no
such model, the error says so and how to get the model, instead of transformers' retries.
"""

from __future__ import annotations

import os
import threading
import urllib.error
import urllib.request
from pathlib import Path

from biaslab.errors import ConfigError

HUB_TIMEOUT_S = 3.0


def looks_like_path(source: str) -> bool:
    """A local path rather than a hub id ("org/model" or "model")."""
    return source.startswith(("/", ".", "~")) or source.count("/") > 1 or "\\" in source


def check_hf_source(source: str, prefix: str = "hf") -> None:
    """A ConfigError when ``source`` (a directory or a hub id) cannot be a loadable model (``prefix``: the spec's,
    for the messages)."""
    path = Path(source).expanduser()
    if path.is_dir():
        return
    if looks_like_path(source):
        what = "is a file, not a directory" if path.exists() else "directory not found"
        raise ConfigError(
            f"{prefix}/{source}: {what}; {prefix}/<dir> needs a checkpoint folder (config.json and "
            f"weights), {prefix}/<org>/<model> a Hugging Face hub id"
        )
    if _in_hub_cache(source):
        return
    get = f"`hf download {source}` (or huggingface-cli download) on a machine with network, then copy its cache"
    if _offline():
        raise ConfigError(
            f"{prefix}/{source}: the model is not local (no such directory, not in the Hugging Face "
            f"cache) and the hub is off (HF_HUB_OFFLINE); get it with {get}, "
            f"or give {prefix}/<local dir>"
        )
    status = _hub_status(source)
    if status is None:
        raise ConfigError(
            f"{prefix}/{source}: the model is not local (no such directory, not in the Hugging Face "
            f"cache) and the hub cannot be reached; get it with {get}, or give {prefix}/<local dir>"
        )
    if status in (401, 403, 404):
        raise ConfigError(
            f"{prefix}/{source}: no such model on the Hugging Face hub (HTTP {status}); check the id, "
            "or log in (`hf auth login`) for a gated or private model"
        )


def _offline() -> bool:
    return any(
        os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
        for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # transformers will say what is missing
        return True
    try:
        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except Exception:  # an id the hub library rejects: let the lookup answer
        return False


def _hub_status(repo_id: str) -> int | None:
    """The hub's HTTP status for the model (200 when it exists), or None when it does not answer in time."""
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    request = urllib.request.Request(f"{endpoint}/api/models/{repo_id}", method="GET")
    token = _token()
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    result: list[int | None] = [None]

    def ask() -> None:
        try:
            with urllib.request.urlopen(request, timeout=HUB_TIMEOUT_S) as response:
                result[0] = response.status
        except urllib.error.HTTPError as exc:
            result[0] = exc.code
        except (urllib.error.URLError, OSError, ValueError):
            result[0] = None

    thread = threading.Thread(target=ask, daemon=True)  # name resolution ignores the socket timeout
    thread.start()
    thread.join(HUB_TIMEOUT_S + 0.5)
    return result[0]


def _token() -> str | None:
    try:
        from huggingface_hub import get_token
    except ImportError:
        return os.environ.get("HF_TOKEN")
    try:
        return get_token()
    except Exception:
        return None
