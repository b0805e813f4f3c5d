"""The other way round from ``biaslab plan``: the smallest effect a run of a given size detects.

``biaslab plan`` asks how many units an effect needs; a finished run asks what its units can see. Each
headline's plan form (:mod:`biaslab.planning.forms`) is inverted at the run's size: the effect on the
headline metric (in its own units, away from its unbiased value) that a two-sided test at level ``alpha``
detects with probability ``power``:

* :class:`~biaslab.planning.forms.ProportionPlan` -- the exact binomial test of one half: the smallest
  shift of the share detected (:func:`biaslab.planning.power.binomial_detectable_effect`), in the metric's
  range ``high - low``;
* :class:`~biaslab.planning.forms.CorrelationPlan` -- Fisher's z: ``r = tanh((z_{1-alpha/2} + z_power) /
  sqrt(n - 3))``;
* :class:`~biaslab.planning.forms.MeanPlan` -- the normal approximation with the form's standard deviation
  per unit: ``(z_{1-alpha/2} + z_power) sd / sqrt(n)``.

The result assumes what the form assumes (independent units; clustered units see less). :func:`size_warning`
compares it with what the headline calls meaningful: the start of mark B (*noticeable*) and of mark C
(*substantial*), or the default gate margin where a headline has no marks.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from biaslab.planning.forms import CorrelationPlan, MeanPlan, ProportionPlan
from biaslab.planning.power import binomial_detectable_effect

if TYPE_CHECKING:
    from biaslab.probing.headline import Headline


def _z(q: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(q))


def detectable_effect(h: Headline, n: int | None, *, power: float = 0.8, alpha: float = 0.05) -> float | None:
    """The smallest effect on ``h``'s metric a run over ``n`` units detects (None: unknown; inf: none)."""
    if n is None or n < 1:
        return None
    form = h.plan
    if isinstance(form, ProportionPlan):
        share = binomial_detectable_effect(int(n), alpha, power)
        return math.inf if not math.isfinite(share) else share * (form.high - form.low)
    if isinstance(form, CorrelationPlan):
        return math.inf if n <= 3 else math.tanh((_z(1 - alpha / 2) + _z(power)) / math.sqrt(n - 3))
    if isinstance(form, MeanPlan):
        return (_z(1 - alpha / 2) + _z(power)) * form.sd / math.sqrt(n)
    return None


def meaningful_effect(h: Headline) -> tuple[float, str] | None:
    """The smallest effect the headline calls meaningful, and what it is: the start of mark B, else the margin."""
    if h.marks is not None:
        return h.marks.b, f"mark B (noticeable bias) begins at {h.marks.b:g}"
    if h.margin is not None:
        return h.margin, f"the default gate margin is {h.margin:g}"
    return None


def size_warning(h: Headline, n: int | None, *, power: float = 0.8, alpha: float = 0.05) -> str | None:
    """A sentence when a run over ``n`` units cannot detect a meaningful effect on ``h`` (else None)."""
    effect = detectable_effect(h, n, power=power, alpha=alpha)
    meaningful = meaningful_effect(h)
    if effect is None or meaningful is None or effect <= meaningful[0]:
        return None
    noun = h.plan.noun
    seen = (
        "detects no effect at all"
        if not math.isfinite(effect)
        else f"detects only effects of {effect:.3g} or more on {h.metric}"
    )
    worse = ""
    if h.marks is not None and effect > h.marks.c:
        worse = f"; even substantial bias (mark C, from {h.marks.c:g}) can go unseen"
    return (
        f"{n} {noun} {seen} ({power:.0%} power, two-sided alpha {alpha:g}); {meaningful[1]}{worse}; "
        f"`biaslab plan` gives the size that would"
    )
