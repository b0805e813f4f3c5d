"""A probe named once: its class looked up in the registry (:func:`resolve_probe`) and passed down, to split the
``-P`` options between probe and model, to convert them, to build the probe and to render its report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from biaslab.probes import PROBES, get_probe_class
from biaslab.probing import options as _options
from biaslab.probing.core import Probe
from biaslab.probing.file_probe.registry import recorded_name


@dataclass(frozen=True)
class ResolvedProbe:
    name: str  # the name a run records (file:PATH -> file:<name>@<hash>)
    cls: type[Probe]

    def kwargs(self, options: dict[str, Any], *, via: dict[str, str] | None = None) -> dict[str, Any]:
        """Constructor arguments from option values (:func:`biaslab.probing.options.probe_kwargs`)."""
        return _options.probe_kwargs(self.cls, options, name=self.name, via=via, takers=takers)

    def split(self, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``-P`` options as (the probe's, the model's)."""
        return _options.split_model_options(self.cls, options)

    def build(self, options: dict[str, Any] | None = None, *, via: dict[str, str] | None = None) -> Any:
        """The probe with ``options`` (the probe's own: checked and converted like ``-P`` values)."""
        return self.cls(**self.kwargs(dict(options or {}), via=via))


def resolve_probe(name: str | ResolvedProbe) -> ResolvedProbe:
    """The probe ``name`` (a ``file:PATH`` read and checked now) with its class, looked up once."""
    if isinstance(name, ResolvedProbe):
        return name
    recorded = recorded_name(name)
    return ResolvedProbe(recorded, get_probe_class(recorded))


def takers(key: str) -> list[str]:
    """The registered probes that take the option ``key``."""
    return sorted(n for n in PROBES if key in get_probe_class(n).options)


def probe_kwargs(
    probe: str | ResolvedProbe, options: dict[str, Any], *, via: dict[str, str] | None = None
) -> dict[str, Any]:
    """Constructor arguments of ``probe`` from option values (strings are converted)."""
    return resolve_probe(probe).kwargs(options, via=via)


def split_model_options(probe: str | ResolvedProbe, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``-P`` options as (the probe's, the model's) (:func:`biaslab.probing.options.split_model_options`)."""
    return resolve_probe(probe).split(options)


def build_probe(probe: str | ResolvedProbe, options: dict[str, Any] | None = None) -> Any:
    """The probe with ``options`` (as ``-P`` gives them: checked and converted like them)."""
    return resolve_probe(probe).build(options)
