"""The margins of a gate: ``--margin METRIC=DELTA`` parsed and checked against the probes' headlines, and the
probes' default margins (:attr:`biaslab.probing.headline.Headline.margin`) for every headline not given one.

A metric can be gated when its probe declares which way it is worse: a headline metric (``bias_score``) or a
headline's per-group form present in both runs (``bias_score:Jewish`` follows ``bias_score``). For suites a
name carries its probe (``winosemitism:bias_score``); a name without one applies to every probe of the suites
that has that metric. Every headline of every gated probe is gated: with the margin given, else its default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from biaslab.errors import ConfigError
from biaslab.probing.headline import Headline


@dataclass(frozen=True)
class MarginSpec:
    probe: str
    metric: str  # as results.json names it
    margin: float  # in the metric's units
    headline: Headline  # the declaration it follows (for <metric>:<group>, its headline's)
    given: bool  # from --margin; False: the probe's default

    @property
    def name(self) -> str:
        return f"{self.probe}:{self.metric}"


def parse_margins(texts: list[str]) -> dict[str, float]:
    """``["bias_score=3", ...]`` as ``{"bias_score": 3.0}``; a one-line error for a malformed one."""
    out: dict[str, float] = {}
    for text in texts:
        name, sep, value = text.rpartition("=")
        name = name.strip()
        if not sep or not name:
            raise ConfigError(
                f"--margin {text!r} is not METRIC=DELTA; e.g. --margin bias_score=3 "
                "(suites: --margin winosemitism:bias_score=3)"
            )
        try:
            delta = float(value)
        except ValueError:
            raise ConfigError(
                f"--margin {text!r}: {value!r} is not a number; give the margin in the metric's "
                "units, e.g. bias_score=3"
            ) from None
        if not math.isfinite(delta) or delta <= 0:
            raise ConfigError(f"--margin {text!r}: the margin must be a positive number in the metric's units")
        if name in out:
            raise ConfigError(f"--margin {name} is given twice; give each metric one margin")
        out[name] = delta
    return out


def check_against_range(name: str, delta: float, h: Headline) -> None:
    """A margin no smaller than the whole range of a bounded metric would pass any candidate: a one-line error
    (a margin on the wrong scale, e.g. 30 on a rate between 0 and 1 meant as 30 points)."""
    if h.bounds is None:
        return
    lo, hi = h.bounds
    width = hi - lo
    if delta >= width:
        scaled = f"; {delta:g} points are {delta / 100:g} on this scale" if width <= 1 < delta <= 100 else ""
        raise ConfigError(
            f"--margin {name}={delta:g} is not below the metric's whole range ({lo:g} to {hi:g}), so any candidate "
            f"would pass; give it in the metric's units ({h.unit}){scaled}"
        )


def headlines_of(probe: str) -> tuple[Headline, ...]:
    from biaslab.probes import get_probe_class

    return tuple(get_probe_class(probe).headlines)


def _follows(probe: str, metric: str, shared: set[str]) -> Headline | None:
    """The headline a metric follows, or None when it cannot be gated."""
    for h in headlines_of(probe):
        if metric == h.metric or (metric.startswith(h.metric + ":") and metric in shared):
            return h
    return None


def _gateable(probe: str, shared: set[str]) -> str:
    names = []
    for h in headlines_of(probe):
        groups = sorted(m for m in shared if m.startswith(h.metric + ":"))
        names.append(h.metric + (f" (or {h.metric}:<group>, e.g. {groups[0]})" if groups else ""))
    return ", ".join(names) or "none (the probe declares no headline metric)"


def resolve(
    given: Mapping[str, float], shared: Mapping[str, set[str]], *, suites: bool
) -> tuple[list[MarginSpec], list[str]]:
    """The margins to test (``shared``: probe -> the metric names both runs of the probe report, in the probes'
    order) and notes on headlines left out. Unknown metric: a one-line :class:`ConfigError`."""
    probes = list(shared)
    chosen: dict[tuple[str, str], MarginSpec] = {}
    for name, delta in given.items():
        head, sep, rest = name.partition(":")
        targets = [(head, rest)] if sep and head in shared else [(p, name) for p in probes]
        hits = [(p, m, h) for p, m in targets if (h := _follows(p, m, shared[p])) is not None]
        if not hits:
            known = "; ".join(f"{p}: {_gateable(p, shared[p])}" for p, _ in targets)
            hint = "; in suites name the probe too, e.g. winosemitism:bias_score" if suites and not sep else ""
            raise ConfigError(f"--margin {name}: unknown metric; metrics that can be gated: {known}{hint}")
        for p, m, h in hits:
            check_against_range(name, delta, h)
            chosen[(p, m)] = MarginSpec(p, m, delta, h, True)
    notes = []
    for p in probes:
        for h in headlines_of(p):
            if (p, h.metric) in chosen:
                continue
            if h.margin is None:
                notes.append(
                    f"{p}:{h.metric} not gated: the probe declares no default margin; give "
                    f"--margin {p}:{h.metric}=DELTA"
                )
            else:
                chosen[(p, h.metric)] = MarginSpec(p, h.metric, h.margin, h, False)
    order = {p: i for i, p in enumerate(probes)}
    specs = sorted(
        chosen.values(),
        key=lambda s: (
            order[s.probe],
            headlines_of(s.probe).index(s.headline),
            s.metric != s.headline.metric,
            s.metric,
        ),
    )
    return specs, notes
