"""What a probe shows beside its numbers: the meaning of each metric (:class:`MetricDoc`, looked up
through :class:`MetricDocs`) and the figures of its report (:class:`Figure`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class MetricDoc:
    """What a metric means, for the report, ``biaslab probes`` and the probe card test."""

    description: str
    unbiased: str | None = None
    extremes: str | None = None


class MetricDocs(dict[str, MetricDoc]):
    """A probe's metric docs by name. Per-group metrics are documented once under a placeholder part:
    ``bias_score:<group>`` documents ``bias_score:Jews`` and every other group (any ``<...>``
    placeholder: ``<group>``, ``<axis>``, ``<domain>``)."""

    def get(self, key: str, default: Any = None) -> Any:
        if key in self:
            return self[key]
        base, sep, _ = key.partition(":")
        if not sep:
            return default
        return next((doc for name, doc in self.items() if name.startswith(f"{base}:<") and name.endswith(">")), default)


@dataclass
class Figure:
    """A report figure: a PNG (base64) or an inline SVG element (:mod:`biaslab.report.svg_chart`)."""

    title: str
    png_base64: str = ""
    caption: str = ""
    svg: str = ""
