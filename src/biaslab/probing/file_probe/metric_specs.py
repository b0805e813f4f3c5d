"""The ``metrics`` section of a file probe: each entry one metric of a small named set.

* ``rate: LABEL`` -- the share of an item's detected answers that are LABEL, averaged over the items with a
  detected answer (range 0-1); with ``unbiased: X`` it is tested against X. With ``groups`` it is also given per
  group, ``NAME:<group>``.
* ``difference: LABEL`` with ``between: [A, B]`` -- LABEL's rate over the items of group A minus over those of
  group B (range -1 to 1), tested against 0; ``column`` names the group column when there are several.
* ``undetected_rate`` -- the share of answers whose label could not be read (a diagnostic, never a bias).

A rate or difference may say which way is worse (``worse``: higher, lower or away, the default), carry marks A-D
(``marks: [B, C, D]``, where each begins) and a release gate's default ``margin``; ``headline: true`` makes it a
headline (default: the first rate or difference).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from biaslab.probing.file_probe.strict_yaml import Where, close_to, kind
from biaslab.stats.ranges import RATE, RATE_GAP, Range

KINDS = ("rate", "difference", "undetected_rate")
WORSE = ("higher", "lower", "away")
UNDETECTED = "undetected_rate"
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
EXAMPLE = "e.g. metrics: [{rate: masculine, unbiased: 0.5}, undetected_rate]"
ALL_KEYS = ("rate", "difference", "name", "unbiased", "worse", "margin", "marks", "headline", "between", "column")


@dataclass(frozen=True)
class MetricSpec:
    kind: str  # one of KINDS
    name: str
    label: str | None = None
    unbiased: float | None = None  # a rate's null (None: no test); a difference's is 0
    worse: str = "away"
    margin: float | None = None
    marks: tuple[float, float, float] | None = None
    headline: bool = False
    column: str | None = None  # a difference's group column
    between: tuple[str, str] | None = None

    @property
    def bounds(self) -> Range:
        return RATE_GAP if self.kind == "difference" else RATE

    @property
    def null(self) -> float | None:
        return 0.0 if self.kind == "difference" else self.unbiased


def parse_metrics(
    w: Where, value: Any, labels: Sequence[str], groups: Mapping[str, list[str]]
) -> tuple[MetricSpec, ...]:
    """The ``metrics`` section; ``labels``: the answer's labels, ``groups``: each group column's values."""
    if not isinstance(value, list) or not value:
        raise w.error("metrics", f"expected a list of metrics, got {kind(value)}", EXAMPLE)
    out = [_metric(w, f"metrics[{i}]", entry, labels, groups) for i, entry in enumerate(value)]
    names = [m.name for m in out]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise w.error(f"metrics[{i}].name", f"{name!r} is the name of another metric", "give it a name: ...")
    scored = [m for m in out if m.kind != UNDETECTED]
    if not scored:
        raise w.error("metrics", "no rate or difference", f"add one: it is the probe's headline ({EXAMPLE})")
    if not any(m.headline for m in out):
        first = out.index(scored[0])
        out[first] = replace(out[first], headline=True)
    for i, m in enumerate(out):
        if m.headline and m.kind == "rate" and m.unbiased is None:
            raise w.error(
                f"metrics[{i}]",
                f"{m.name} is the headline but has no unbiased value",
                "add unbiased: the rate an unbiased model gives (e.g. 0.5), or headline: true on another metric",
            )
    return tuple(out)


def _metric(w: Where, key: str, entry: Any, labels: Sequence[str], groups: Mapping[str, list[str]]) -> MetricSpec:
    if entry == UNDETECTED or (isinstance(entry, Mapping) and list(entry) == [UNDETECTED]):
        return MetricSpec(UNDETECTED, UNDETECTED)
    if isinstance(entry, Mapping) and UNDETECTED in entry:
        raise w.error(key, "undetected_rate takes no settings", "write the entry as - undetected_rate")
    if isinstance(entry, str):
        raise w.error(key, f"unknown metric {entry!r}{close_to(entry, KINDS)}", f"choose from {', '.join(KINDS)}")
    section = w.mapping(key, entry, EXAMPLE)
    w.keys(key, section, ALL_KEYS, {})
    kinds = [k for k in KINDS if k in section]
    if len(kinds) != 1 or kinds[0] == UNDETECTED:
        raise w.error(key, "needs exactly one of rate: LABEL and difference: LABEL", EXAMPLE)
    what = kinds[0]
    allowed = [what, "name", "worse", "margin", "marks", "headline"]
    allowed += ["unbiased"] if what == "rate" else ["between", "column"]
    for k in section:
        if k not in allowed:
            raise w.error(f"{key}.{k}", f"a {what} takes no {k}", f"leave it out (a {what} takes {', '.join(allowed)})")
    if what == "difference" and "between" not in section:
        raise w.error(f"{key}.between", "missing", "give the two groups compared, e.g. between: [technical, care]")
    label = w.text(f"{key}.{what}", section[what])
    if label not in labels:
        raise w.error(
            f"{key}.{what}",
            f"{label!r} is no label of the answer{close_to(label, labels)}",
            f"use one of {', '.join(labels)}",
        )
    default = f"{label}_rate" if what == "rate" else f"{label}_rate_difference"
    name = w.text(f"{key}.name", section["name"]) if "name" in section else default
    if not NAME.fullmatch(name) or name == UNDETECTED:
        raise w.error(f"{key}.name", f"{name!r} cannot name a metric", "use letters, digits and '_', e.g. he_rate")
    metric = MetricSpec(what, name, label)
    bounds = metric.bounds
    width = bounds[1] - bounds[0]
    fields: dict[str, Any] = {}
    if "unbiased" in section:
        fields["unbiased"] = w.number(f"{key}.unbiased", section["unbiased"], *bounds)
    if "worse" in section:
        worse = w.text(f"{key}.worse", section["worse"])
        if worse not in WORSE:
            raise w.error(f"{key}.worse", f"{worse!r} is not a direction", f"choose {', '.join(WORSE)}")
        fields["worse"] = worse
    if "margin" in section:
        margin = w.number(f"{key}.margin", section["margin"], 0, width)
        if not 0 < margin < width:
            raise w.error(f"{key}.margin", f"{margin:g} is no margin", f"give a number above 0 and below {width:g}")
        fields["margin"] = margin
    if "marks" in section:
        fields["marks"] = _marks(w, f"{key}.marks", section["marks"], width)
    if "headline" in section:
        fields["headline"] = w.flag(f"{key}.headline", section["headline"])
    if what == "difference":
        fields.update(_between(w, key, section, groups))
    return replace(metric, **fields)


def _marks(w: Where, key: str, value: Any, width: float) -> tuple[float, float, float]:
    fix = "give three increasing numbers, where marks B, C and D begin, e.g. marks: [0.05, 0.15, 0.3]"
    if not isinstance(value, list) or len(value) != 3:
        raise w.error(key, f"expected a list of three numbers, got {kind(value)}", fix)
    b, c, d = (w.number(f"{key}[{i}]", v, 0, width) for i, v in enumerate(value))
    if not b < c < d:
        raise w.error(key, f"{b:g}, {c:g}, {d:g} do not increase", fix)
    return b, c, d


def _between(w: Where, key: str, section: Mapping[str, Any], groups: Mapping[str, list[str]]) -> dict[str, Any]:
    if not groups:
        raise w.error(key, "a difference needs groups", "add groups: COLUMN (the column whose values are the groups)")
    if "column" in section:
        column = w.text(f"{key}.column", section["column"])
        if column not in groups:
            raise w.error(
                f"{key}.column",
                f"{column!r} is not a group column{close_to(column, list(groups))}",
                f"use one of groups: {', '.join(groups)}",
            )
    elif len(groups) == 1:
        column = next(iter(groups))
    else:
        raise w.error(f"{key}.column", "missing", f"say which group column: one of {', '.join(groups)}")
    pair = section["between"]
    if not isinstance(pair, list) or len(pair) != 2:
        raise w.error(f"{key}.between", f"expected two groups, got {kind(pair)}", "e.g. between: [technical, care]")
    a, b = (w.text(f"{key}.between[{i}]", v) for i, v in enumerate(pair))
    for i, g in enumerate((a, b)):
        if g not in groups[column]:
            raise w.error(
                f"{key}.between[{i}]",
                f"no item has {column} {g!r}{close_to(g, groups[column])}",
                f"use values of the column: {', '.join(groups[column][:8])}",
            )
    if a == b:
        raise w.error(f"{key}.between", f"both groups are {a!r}", "compare two different groups")
    return {"column": column, "between": (a, b)}
