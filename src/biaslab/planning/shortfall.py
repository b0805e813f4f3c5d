"""When a plan needs more items than the probe has: what would do instead.

A probe's items are finite (jobs-lum has 339 occupations). When the planned number exceeds them,
asking for it is no plan; two things can be:

* **all the items, a larger effect**: the smallest effect every item together detects at the requested
  power (:func:`biaslab.planning.detectable.detectable_effect` for a headline, or any rule the caller gives);
* **all the items, several answers each** (``--repetitions``), where repeated answers add information. They
  do not where answers to one item are identical: a likelihood probe scores log-likelihoods, the same on
  every repetition; a model decoding greedily (temperature 0) repeats its answer. Sampled answers to one
  item are correlated (an *intra-item correlation* ``icc``: the share of an answer's variance that is the
  item's own), so ``m`` answers to an item count as ``m / (1 + (m - 1) icc)`` independent ones, at most
  ``1 / icc`` however many (the design effect of a cluster of ``m``, normal approximation). Items answered
  ``r`` times when the need was measured carry ``r / (1 + (r - 1) icc)`` each already. The ``icc`` is an
  assumption, stated with the result (:data:`ASSUMED_ICC` unless the caller knows better), together with
  the correlation from which no number of repetitions suffices: ``icc >= n_items / (n_needed r - n_items
  (r - 1))``, ``n_items / n_needed`` at ``r = 1``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from biaslab.probing.headline import Headline

ASSUMED_ICC = 0.1  # intra-item correlation of sampled answers assumed when none was measured


def _per_item(m: int, icc: float) -> float:
    """Independent answers' worth of ``m`` answers to one item."""
    return m / (1 + (m - 1) * icc)


def repetitions_needed(n_needed: int, n_items: int, icc: float, repetitions: int = 1) -> int | None:
    """The fewest answers per item with which ``n_items`` items do the work of ``n_needed`` items answered
    ``repetitions`` times each (None: no number does, ``icc`` too high). ``icc`` in [0, 1]."""
    if not 0 <= icc <= 1:
        raise ValueError(f"icc must lie in [0, 1] (got {icc})")
    target = n_needed * _per_item(repetitions, icc)  # independent answers' worth needed
    if n_items * _per_item(repetitions, icc) >= target:
        return repetitions
    if n_items <= target * icc * (1 + 1e-12):  # even infinitely many answers give n_items / icc
        return None
    # n m / (1 + (m - 1) icc) >= target  <=>  m (n - target icc) >= target (1 - icc)
    return max(repetitions, math.ceil(target * (1 - icc) / (n_items - target * icc) - 1e-9))


@dataclass(frozen=True)
class ItemShortfall:
    """More items needed than the probe has, and what would do instead (numbers in the metric's units)."""

    probe: str
    noun: str  # what the items are: "occupations"
    n_items: int  # the probe's items
    n_needed: int
    power: float
    detectable: float | None  # the smallest effect all the items detect at ``power`` (inf: none; None: unknown)
    repetitions: int | None  # answers per item with which all the items would do (None: no number would)
    icc: float | None  # the intra-item correlation assumed (None: repetitions cannot help)
    icc_limit: float | None  # from this intra-item correlation up no number of repetitions would do
    no_repetitions: str  # why repetitions cannot help ("" where they can)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sentences(self, scale: float = 1.0, fmt: str = ".3g", what: str = "an effect") -> list[str]:
        """What :attr:`text` says, one sentence each; effects (``what``) shown x ``scale`` in ``fmt``."""
        out = [f"{self.probe} has {self.n_items:,} {self.noun}; {self.n_needed:,} would be needed"]
        if self.detectable is not None:
            out.append(
                f"all {self.n_items:,} detect nothing at power {self.power:g}"
                if not math.isfinite(self.detectable)
                else f"all {self.n_items:,} detect {what} of {self.detectable * scale:{fmt}} or more "
                f"at power {self.power:g}"
            )
        if self.no_repetitions:
            out.append(f"repetitions cannot help: {self.no_repetitions}")
        elif self.icc is not None:
            where = f"answers to one {self.noun.rstrip('s')} correlating at {self.icc:g} (assumed)"
            limit = f"; from a correlation of {self.icc_limit:.3g} up no number would" if self.icc_limit else ""
            out.append(
                f"no number of repetitions would do with {where}{limit}"
                if self.repetitions is None
                else f"--repetitions {self.repetitions} would do with {where}, "
                f"{_per_item(self.repetitions, self.icc):.2f} independent answers' worth each{limit}; "
                "at temperature 0 answers repeat and repetitions cannot help"
            )
        return out

    @property
    def text(self) -> str:
        return "; ".join(self.sentences()) + "."


def items_shortfall(
    probe: str,
    n_needed: int | None,
    n_items: int | None,
    *,
    noun: str,
    power: float,
    detectable: Callable[[int], float | None] | None = None,
    no_repetitions: str = "",
    icc: float = ASSUMED_ICC,
    repetitions: int = 1,
) -> ItemShortfall | None:
    """What would do instead of ``n_needed`` items where the probe has only ``n_items`` (None: they suffice,
    or either number is unknown). ``detectable(n)``: the smallest effect ``n`` items detect at ``power``;
    ``no_repetitions``: why repeated answers add nothing ("" where they do); ``repetitions``: the answers
    per item behind ``n_needed``."""
    if n_needed is None or n_items is None or n_needed <= n_items:
        return None
    if no_repetitions:
        reps, used, limit = None, None, None
    else:
        reps, used = repetitions_needed(n_needed, n_items, icc, repetitions), icc
        limit = n_items / (n_needed * repetitions - n_items * (repetitions - 1))
    return ItemShortfall(
        probe,
        noun,
        n_items,
        n_needed,
        power,
        detectable(n_items) if detectable is not None else None,
        reps,
        used,
        limit,
        no_repetitions,
    )


@functools.lru_cache(maxsize=32)
def probe_items(probe: str, form: Any = None) -> int | None:
    """The items a probe has, or with ``form`` (a headline's :class:`~biaslab.planning.forms.PlanForm`) the units
    it plans in (:meth:`~biaslab.planning.forms.PlanForm.available`: occupations, templates); None: its items
    come from a file of the user's, or its data are missing."""
    from biaslab.errors import BiaslabError
    from biaslab.probes import create_probe, get_probe_class

    if get_probe_class(probe).input_option:
        return None
    try:
        items = create_probe(probe).load_items()
    except (BiaslabError, OSError):
        return None
    return len(items) if form is None else int(form.available(items))


def repetitions_blocker(probe: str) -> str:
    """Why repeated answers add nothing to a probe ("" where they can)."""
    from biaslab.probes import get_probe_class
    from biaslab.probing.likelihood import LikelihoodProbe

    if issubclass(get_probe_class(probe), LikelihoodProbe):
        return f"{probe} scores log-likelihoods, identical on every repetition"
    return ""


def headline_shortfall(
    probe: str,
    h: Headline,
    n_needed: int | None,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    icc: float = ASSUMED_ICC,
    n_items: int | None = None,
) -> ItemShortfall | None:
    """:func:`items_shortfall` for a headline planned in its own form (``biaslab plan``, the release gate):
    the probe's own item count unless ``n_items`` is given, the headline's detectable effect."""
    from biaslab.planning.detectable import detectable_effect

    return items_shortfall(
        probe,
        n_needed,
        n_items if n_items is not None else probe_items(probe, h.plan),
        noun=h.plan.noun,
        power=power,
        detectable=lambda n: detectable_effect(h, n, power=power, alpha=alpha),
        no_repetitions=repetitions_blocker(probe),
        icc=icc,
    )
