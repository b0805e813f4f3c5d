"""A gated metric's verdict from its Holm-adjusted p value (:mod:`biaslab.gate.decide`), and for an inconclusive
one how many items would settle it."""

from __future__ import annotations

import math
from typing import Any

from biaslab.stats import noninferiority as ni


def verdict(r: dict[str, Any], *, alpha: float, m: int, power: float, equivalence_mode: bool) -> None:
    r["settle"] = None
    if r.get("too_small"):
        r["verdict"] = "too small"
        return
    if r["p"] is None:
        r["verdict"] = "not tested"
        return
    if r.get("agree") and r["p_holm"] > alpha:
        _agreement_too_small(r, alpha / m)
        return
    margin, diff, noun = r["margin"], r["diff"], r["noun"]
    per = " per run" if r["design"] == "unpaired" else ""
    if equivalence_mode:
        if r["p_holm"] <= alpha:
            r["verdict"] = "equivalent"
        elif r["lower"] >= margin or r["upper"] <= -margin:
            r["verdict"] = "different"
        else:
            r["verdict"] = "inconclusive"
            settle(
                r,
                abs(diff),
                margin,
                alpha / m,
                power,
                "equivalent" if abs(diff) < margin else "different by the margin or more",
                noun,
                per,
            )
        return
    if r["p_holm"] <= alpha:
        r["verdict"] = "non-inferior"
    elif r["lower"] is not None and r["lower"] >= margin:
        r["verdict"] = "regressed"
    else:
        r["verdict"] = "inconclusive"
        settle(
            r,
            diff,
            margin,
            alpha / m,
            power,
            "non-inferior" if diff < margin else "worse by the margin or more",
            noun,
            per,
        )


def settle(
    r: dict[str, Any], diff: float, margin: float, level: float, power: float, outcome: str, noun: str, per: str
) -> None:
    n = ni.items_to_settle(diff, r["se"], r["n"], margin, alpha=level, power=power)
    if n is None:
        r["settle"] = {
            "n": None,
            "more": None,
            "text": "no number of items settles it: the difference sits on the margin",
        }
        return
    more = max(0, n - r["n"])
    short = _shortfall(r["probe"], n, noun, power)
    r["settle"] = {
        "n": n,
        "more": more,
        "assumes": "new items like these (their clusters included), the "
        "difference as observed, its standard error scaled as 1/sqrt(n), one-sided level alpha / margins",
        "text": f"about {n} {noun}{per} in all ({more} more) would show it {outcome} with power "
        f"{power:g}, if the difference stays at {diff:+.3g}" + (f"; but {short.text}" if short else ""),
    }
    if short is not None:
        r["settle"]["shortfall"] = short.as_dict()


def _shortfall(probe: str, n: int, noun: str, power: float) -> Any:
    """Where the probe has fewer items than ``n``: that, and the repetitions that would do instead
    (:func:`biaslab.planning.shortfall.items_shortfall`)."""
    from biaslab.planning.shortfall import items_shortfall, probe_items, repetitions_blocker

    return items_shortfall(
        probe, n, probe_items(probe), noun=noun, power=power, no_repetitions=repetitions_blocker(probe)
    )


def _agreement_too_small(r: dict[str, Any], level: float) -> None:
    """Runs that agree on every unit, too few of them for the bound (:mod:`biaslab.gate.units`) to pass."""
    agree = r["agree"]
    share = min(1.0, r["margin"] / agree["width"])
    need = math.ceil(math.log(level) / math.log1p(-share)) if share < 1 else 1
    r["verdict"] = "too small"
    r["reason"] = (
        f"too small: the runs agree on all {agree['k']} {agree['unit']}, with no spread to test; agreement on "
        f"{need} {agree['unit']} would show it (p = (1 - {r['margin']:g} / {agree['width']:.3g})^k below {level:.2g})"
    )
    r["settle"] = {"n": need, "more": max(0, need - agree["k"]), "text": r["reason"]}
