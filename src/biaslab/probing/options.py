"""Probe options: ``biaslab run PROBE -P key=value`` turned into the probe's constructor arguments.

Each probe declares the options it takes (:attr:`~biaslab.probing.core.Probe.options`): a name,
a help text, a type, and optionally the constructor argument and a dedicated flag kept as an
alias (``--items``, ``--pairs``, ``--scoring``). The functions here take the probe's class; the application layer
(:mod:`biaslab.app.resolve`) looks it up by name once and passes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from biaslab.errors import ConfigError
from biaslab.probing.core import ProbeOption

_EXPECTED: dict[Any, str] = {int: "expected a whole number", float: "expected a number"}
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def parse_bool(text: str) -> bool:
    value = str(text).strip().lower()
    if value in _TRUE | _FALSE:
        return value in _TRUE
    raise ValueError(f"expected true or false, got {text!r}")


def split_assignments(raw: Sequence[str]) -> dict[str, str]:
    """``["a=1", "b-c=x"]`` -> ``{"a": "1", "b_c": "x"}`` (a one-line error for anything else)."""
    out: dict[str, str] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ConfigError(f"-P {item!r} is not KEY=VALUE; write e.g. -P scoring=full-sentence")
        out[key] = value
    return out


def probe_kwargs(
    cls: Any,
    options: dict[str, Any],
    *,
    name: str | None = None,
    via: dict[str, str] | None = None,
    takers: Callable[[str], list[str]] | None = None,
) -> dict[str, Any]:
    """Constructor arguments of the probe class ``cls`` (named ``name``: default its ``name``) from option values
    (strings are converted).

    ``via`` names the flag each option came from (``{"pairs": "--pairs"}``), for the error message; ``takers(key)``
    the probes that take an option ``cls`` does not (the message names them).
    """
    probe_name = name or cls.name
    declared: dict[str, ProbeOption] = cls.options
    kwargs: dict[str, Any] = {}
    for key, value in options.items():
        flag = (via or {}).get(key, f"-P {key}")
        if key not in declared:
            others = takers(key) if takers is not None else []
            takes = ", ".join(sorted(declared)) or "no options"
            raise ConfigError(
                f"{flag} does not apply to the {probe_name} probe; "
                + (f"it works with: {', '.join(others)}" if others else f"{probe_name} takes: {takes}")
                + " (see `biaslab probes`)"
            )
        option = declared[key]
        if isinstance(value, str) and option.type is not str:
            try:
                value = option.type(value)
            except (TypeError, ValueError) as exc:
                expected = _EXPECTED.get(option.type, str(exc))
                raise ConfigError(f"{flag}={value}: {expected}") from None
        option.check(flag, value)
        kwargs[option.param or key] = value
    return kwargs


def split_model_options(cls: Any, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``-P`` options as (the probe's, the model's), for the probe class ``cls``: a key the probe does not declare
    but a model backend takes (``precision=bf16``, ``threads``, ``tensor_parallel_size``, ``tokenizer``, the hosted
    APIs' ``batch=true`` ...; :mod:`biaslab.models.model_options`) is a model option. Anything else stays with the
    probe (and fails there, with the probe's message)."""
    from biaslab.models.model_options import all_option_names

    declared = cls.options
    model_keys = all_option_names()
    model = {k: v for k, v in options.items() if k not in declared and k in model_keys}
    return {k: v for k, v in options.items() if k not in model}, model
