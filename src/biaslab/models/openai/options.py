"""Settings of the openai backend: defaults and checks of its options, the API key, the SDK import.

The options themselves are documented with the backend, in :mod:`.backend`.
"""

from __future__ import annotations

import math
import os
from typing import Any

from biaslab.errors import ConfigError

OPENAI_BASE_URL = "https://api.openai.com/v1"
API_KEY_ENV = ("OPENAI_API_KEY", "BIASLAB_API_KEY")
PLACEHOLDER_KEY = "EMPTY"

DEFAULTS: dict[str, Any] = {
    "max_concurrency": 8,
    "max_retries": 6,
    "timeout": 60.0,
    "retry_base_delay": 0.5,
    "retry_max_delay": 30.0,
    "max_retry_after": 60.0,
    "likelihood": "token-ids",
    "tokenizer": None,  # hf/<hub id or dir>: the model's tokenizer, read here (tokenizer_source.py)
}
LIKELIHOOD_MODES = ("token-ids", "text-echo")
CALL_OPTIONS = ("max_concurrency", "max_retries", "timeout", "retry_base_delay", "retry_max_delay", "max_retry_after")
# what each must be: (the smallest value, whether the smallest itself is allowed, the words for it)
_RANGES: dict[str, tuple[float, bool, str]] = {
    "max_concurrency": (1, True, "at least 1, a whole number (--max-concurrency)"),
    "max_retries": (0, True, "0 or more, a whole number"),
    "timeout": (0, False, "a positive number of seconds"),
    "retry_base_delay": (0, True, "0 or more seconds"),
    "retry_max_delay": (0, True, "0 or more seconds"),
    "max_retry_after": (0, True, "0 or more seconds"),
}


def import_openai() -> Any:
    try:
        import openai
    except ImportError:
        raise ConfigError(
            "the openai backend needs the 'openai' package, which is not installed; "
            "install it with: pip install 'biaslab[openai]'"
        ) from None
    return openai


class Secret:
    """Holds the API key; prints as ``'***'`` so it cannot leak through repr/vars()."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


def api_key_from_env() -> str | None:
    for var in API_KEY_ENV:
        value = os.environ.get(var, "").strip()
        if value:
            return value
    return None


def parse_options(options: dict[str, Any]) -> dict[str, Any]:
    opts = dict(DEFAULTS)
    for key, value in options.items():
        if value is None:  # unset CLI flag: keep the default
            continue
        if key in ("api_key", "key"):
            raise ConfigError("do not pass the API key as an option; set OPENAI_API_KEY (or BIASLAB_API_KEY)")
        if key not in DEFAULTS:
            raise ConfigError(f"unknown option {key!r} for the openai backend; known: {', '.join(sorted(DEFAULTS))}")
        if key == "tokenizer":
            opts[key] = parse_tokenizer_option(value)
            continue
        opts[key] = call_option(key, value) if key in CALL_OPTIONS else str(value)
    if opts["likelihood"] not in LIKELIHOOD_MODES:
        raise ConfigError(
            f"option likelihood of the openai backend must be one of {', '.join(LIKELIHOOD_MODES)}, "
            f"got {opts['likelihood']!r}"
        )
    return opts


def call_option(key: str, value: Any) -> int | float:
    """The value of the request option ``key`` (one of :data:`CALL_OPTIONS`, a ``-P`` option but for
    ``max_concurrency``) as a number of its type and range; a one-line ConfigError otherwise."""
    lowest, inclusive, what = _RANGES[key]
    whole = isinstance(DEFAULTS[key], int)
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError):
        number = math.nan
    fits = math.isfinite(number) and (number >= lowest if inclusive else number > lowest)
    if not fits or (whole and not number.is_integer()):
        flag = "" if key == "max_concurrency" else "-P "
        raise ConfigError(f"{flag}{key} must be {what}, got {value!r}")
    return int(number) if whole else number


def parse_tokenizer_option(value: Any) -> str | None:
    """``-P tokenizer=hf/<hub id or dir>`` -> the hub id or directory; a ConfigError for anything else."""
    if value is None:
        return None
    text = str(value).strip()
    if not text.startswith("hf/") or len(text) == 3:
        raise ConfigError(
            f"-P tokenizer must name a Hugging Face tokenizer: tokenizer=hf/<hub id or dir>, got {text!r}"
        )
    return text[3:]
