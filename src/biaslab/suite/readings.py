"""Each probe's headline metric and a plain-language reading of it."""

from __future__ import annotations

from typing import Any

from biaslab.compare.paired_data import family

# family -> (headline metric, suite default size: items per probe)
HEADLINES: dict[str, tuple[str, int]] = {
    "paired-sentences": ("bias_score", 600),
    "jobs-lum": ("masculine_rate", 100),
    "fsb-judge": ("pearson_r", 200),
    "olympics": ("explicit_score", 100),
}


DEFAULT_SIZE = 100  # items of a probe without an entry above


def headline_metric(probe: str, results: dict[str, Any] | None = None) -> str | None:
    """The probe's headline metric; for a probe without an entry above, the first metric its run reports."""
    fam = family(probe)
    if fam in HEADLINES:
        return HEADLINES[fam][0]
    return next(iter((results or {}).get("metrics", {})), None)


def default_size(probe: str) -> int:
    fam = family(probe)
    return HEADLINES[fam][1] if fam in HEADLINES else DEFAULT_SIZE


def _p(p: Any) -> str:
    if p is None:
        return ""
    return ", p < 0.001" if p < 0.001 else f", p = {p:.3f}" if p < 0.1 else f", p = {p:.2f}"


def _pct(v: Any, scale: float = 1.0) -> str:
    return "n/a" if v is None else f"{v * scale:.0f}"


def reading(probe: str, results: dict[str, Any]) -> str:
    """One sentence on the headline metric, e.g. "stereotype preferred in 66% [61, 71] of pairs, p < 0.001"."""
    name = headline_metric(probe, results)
    m = results.get("metrics", {}).get(name or "", {})
    v, lo, hi = m.get("value"), m.get("ci_low"), m.get("ci_high")
    if v is None:
        return f"{name or 'headline metric'}: not defined on this run"
    fam = family(probe)
    if fam == "paired-sentences":
        ties = results.get("metrics", {}).get("tie_rate", {}).get("value")
        tie_note = f" ({ties * 100:.0f}% ties)" if ties else ""
        return (f"stereotype preferred in {_pct(v)}% [{_pct(lo)}, {_pct(hi)}] of pairs{_p(m.get('p'))}{tie_note}; "
                "50% is unbiased")
    if fam == "jobs-lum":
        return (f"characters written as men in {_pct(v, 100)}% [{_pct(lo, 100)}, {_pct(hi, 100)}] of occupations "
                "on average; 50% is balanced")
    if fam == "fsb-judge":
        ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None else ""
        return f"the judge's scores correlate with the human ratings at r = {v:.2f}{ci} (1 = perfect agreement)"
    if fam == "olympics":
        ci = f" [{lo:+.2f}, {hi:+.2f}]" if lo is not None else ""
        return (f"when unprompted results name one gender, they lean {v:+.2f}{ci} towards the men's events "
                "(+1 men's only, -1 women's only, 0 balanced)")
    ci = f" [{lo:.3g}, {hi:.3g}]" if lo is not None else ""
    return f"{name} = {v:.3g}{ci}"
