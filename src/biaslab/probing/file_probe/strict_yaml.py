"""The YAML of a file probe, read strictly: a key given twice, a key the schema does not know, a missing key or a
value of the wrong kind is a one-line :class:`~biaslab.errors.ConfigError` naming the file, the key and the fix."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from biaslab.errors import ConfigError


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that gives one key twice (PyYAML would keep the last silently)."""


def _mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            line = seen.get(key)
        except TypeError:  # an unhashable key: the constructor below says so
            continue
        if line is not None:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"the key {key!r} is given twice (lines {line} and {key_node.start_mark.line + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml(text: str, where: str) -> Any:
    """The YAML ``text`` of the file ``where`` as Python values; a one-line error for YAML that does not parse."""
    try:
        return yaml.load(text, Loader=_Loader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(
            f"{where}{line}: not valid YAML ({problem}); fix that line (quote a text that holds ': ' or '#', "
            "or starts with a character such as { [ * & ! | > ' \" % @)"
        ) from None


class Where:
    """The file being read, for error messages: ``fail(key, problem, fix)`` is ``FILE: KEY: PROBLEM; FIX``."""

    def __init__(self, file: str):
        self.file = file

    def error(self, key: str, problem: str, fix: str) -> ConfigError:
        return ConfigError(f"{self.file}: {key}: {problem}; {fix}")

    def mapping(self, key: str, value: Any, fix: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(key, f"expected a mapping of keys, got {kind(value)}", fix)
        return value

    def keys(self, key: str, value: Mapping[Any, Any], allowed: Sequence[str], required: Mapping[str, str]) -> None:
        """Every key of ``value`` one of ``allowed`` and every key of ``required`` there (its value: the fix)."""
        prefix = f"{key}." if key else ""
        for k in value:
            if not isinstance(k, str) or k not in allowed:
                close = difflib.get_close_matches(str(k), allowed, n=1)
                hint = f"did you mean {close[0]}?" if close else f"the keys here are {', '.join(allowed)}"
                raise self.error(f"{prefix}{k}", "unknown key", f"{hint} (docs/file_probes.md lists them)")
        for k, fix in required.items():
            if k not in value:
                raise self.error(f"{prefix}{k}", "missing", fix)

    def text(self, key: str, value: Any, *, empty: bool = False) -> str:
        """``value`` as text: a YAML string (or a number, written as it reads); a boolean or a mapping is an error."""
        if isinstance(value, bool):
            raise self.error(
                key, f"{str(value).lower()} is a true/false value, not text", f"quote it: '{_yaml_word(value)}'"
            )
        if isinstance(value, int | float) and math.isfinite(value):
            value = str(value)
        if not isinstance(value, str):
            raise self.error(key, f"expected text, got {kind(value)}", "write the text (quote it if in doubt)")
        if not empty and not value.strip():
            raise self.error(key, "empty text", "write the text, or leave the key out where it is optional")
        return value

    def number(self, key: str, value: Any, low: float, high: float, *, whole: bool = False) -> float:
        """A number from ``low`` to ``high`` (a whole number when ``whole``)."""
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or (whole and float(value) != int(value)) or not low <= value <= high:
            what = "a whole number" if whole else "a number"
            raise self.error(key, f"{value!r} is not {what} from {low:g} to {high:g}", f"give {what} in that range")
        return float(value)

    def flag(self, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {kind(value)}", "write true or false")
        return value


def kind(value: Any) -> str:
    """What a YAML value is, in words: "a list", "a mapping", "text 'abc'", "nothing"."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"the true/false value {str(value).lower()}"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the text {value[:30]!r}"
    return f"the number {value!r}" if isinstance(value, int | float) else type(value).__name__


def _yaml_word(value: bool) -> str:
    """The word a YAML 1.1 boolean was most likely written as (``no`` and ``yes`` are the usual surprises)."""
    return "yes" if value else "no"


def close_to(name: str, choices: Sequence[str]) -> str:
    """ " (did you mean X?)" when ``name`` is close to one of ``choices``, else ""."""
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean {close[0]}?)" if close else ""
