"""How a probe's headline metric is planned (``biaslab plan``): the form of its power calculation, declared
by the probe beside the headline (:class:`biaslab.probing.headline.Headline`).

* :class:`ProportionPlan` -- the metric is a share of independent units decided one way or the other
  (a bias score: the percentage of pairs whose stereotypical sentence wins), unbiased at the middle of its
  range: the exact two-sided binomial test of "half the units each way" (:func:`.power.binomial_n`).
* :class:`CorrelationPlan` -- a correlation against 0: Fisher's z (:func:`.power.fisher_n`).
* :class:`MeanPlan` -- a mean-like metric: the normal approximation with a stated standard deviation of one
  unit's contribution (a conservative default, the largest a unit of that metric can have, unless the probe
  knows better); ``--pilot RUN`` replaces the assumption with the pilot's own spread.

Every form gives an answer without a pilot. With ``--pilot`` the plan uses the pilot's measured spread
(and, for probes whose units cluster, its design effect): :mod:`biaslab.planning.plan`.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import Any

from biaslab.errors import ConfigError
from biaslab.planning.power import binomial_n, fisher_n, normal_n


@dataclass(frozen=True)
class PlanForm(abc.ABC):
    noun: str  # what the planned number counts: "pairs", "occupations"
    count: str = ""  # the metric field that counts those units in a run (default: the metric's n, else its items)
    # how many such units the probe has: the distinct values of this field of its items' metadata (default: each
    # item one unit), over the items whose metadata match ``where`` ((field, value) pairs)
    unit_key: str = ""
    where: tuple[tuple[str, Any], ...] = ()

    def available(self, items: list[Any]) -> int:
        """How many of these units ``items`` (the probe's :class:`~biaslab.probing.core.ProbeItem`) hold."""
        chosen = [it for it in items if all(it.metadata.get(k) == v for k, v in self.where)]
        if not self.unit_key:
            return len(chosen)
        return len({str(it.metadata.get(self.unit_key)) for it in chosen})

    @abc.abstractmethod
    def closed(self, metric: str, unbiased: float, effect: float, power: float, alpha: float) -> dict[str, Any]:
        """``{"n", "method", "assumptions", ...}`` without a pilot (a one-line error for an effect out of range)."""

    def describe(self) -> str:
        """One line for ``biaslab probes``: the form and its assumption."""
        return type(self).__name__


@dataclass(frozen=True)
class ProportionPlan(PlanForm):
    low: float = 0.0  # the metric's range: the share of units decided "the biased way" is (x - low) / (high - low)
    high: float = 1.0
    independent: str = ""  # why the units are independent, e.g. "no predicate clustering"
    detected: str = "every unit decided"  # the assumption about undecided units (ties, undetected answers)

    def share(self, x: float) -> float:
        return (x - self.low) / (self.high - self.low)

    def closed(self, metric: str, unbiased: float, effect: float, power: float, alpha: float) -> dict[str, Any]:
        p1 = self.share(unbiased + effect)
        if not 0 < p1 < 1:
            top = (self.high - self.low) / 2
            raise ConfigError(
                f"--effect {effect:g} is out of range for {metric}: give it in the metric's units, "
                f"less than {top:g} in size"
            )
        res = binomial_n(p1, alpha, power)
        independent = f" ({self.independent})" if self.independent else ""
        return {
            "n": res["n"],
            "method": "exact binomial power (two-sided exact binomial test of p = 0.5)",
            "n_all_larger": res["n_all_larger"],
            "n_normal_approximation": res["n_normal"],
            "assumptions": [
                f"{self.noun} independent{independent}",
                self.detected,
                f"true rate {p1:g} under the alternative",
                f"rule: the smallest n whose exact power reaches {power:g}; exact power is a sawtooth "
                f"in n, every n from {res['n_all_larger']} on reaches it",
            ],
        }

    def describe(self) -> str:
        return f"exact binomial test of a share of {self.noun} against one half"


@dataclass(frozen=True)
class CorrelationPlan(PlanForm):
    def closed(self, metric: str, unbiased: float, effect: float, power: float, alpha: float) -> dict[str, Any]:
        if not 0 < abs(effect) < 1:
            raise ConfigError(f"--effect for {metric} is a correlation between -1 and 1 (got {effect:g})")
        return {
            "n": fisher_n(effect, alpha, power),
            "method": "Fisher's z for a correlation against 0",
            "assumptions": [f"{self.noun} independent", "bivariate normal scores (Fisher's z approximation)"],
        }

    def describe(self) -> str:
        return f"Fisher's z for a correlation over {self.noun}"


@dataclass(frozen=True)
class MeanPlan(PlanForm):
    sd: float = 1.0  # assumed standard deviation of one unit's contribution to the metric
    sd_note: str = ""  # why that value (shown with the plan)

    def closed(self, metric: str, unbiased: float, effect: float, power: float, alpha: float) -> dict[str, Any]:
        if not math.isfinite(effect) or effect == 0:
            raise ConfigError("--effect must be a non-zero number in the headline metric's units")
        n = normal_n(effect, self.sd, alpha, power)
        note = f" ({self.sd_note})" if self.sd_note else ""
        return {
            "n": n,
            "method": "normal approximation with an assumed standard deviation per unit "
            "(give --pilot RUN to use a finished run's own spread)",
            "sd_assumed": self.sd,
            "assumptions": [
                f"{self.noun} independent",
                f"standard deviation of one unit's contribution to {metric}: {self.sd:g}{note}",
                "standard error proportional to 1/sqrt(n)",
            ],
        }

    def describe(self) -> str:
        return f"normal approximation over {self.noun}, assumed SD {self.sd:g} per unit (--pilot replaces it)"
