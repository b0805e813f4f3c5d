"""Multiple-testing families of a comparison, and a verdict per headline metric.

**Families.** Benjamini-Hochberg q values are taken within a family, never across all rows of a
comparison (the many subgroup rows would otherwise swamp the headline):

* ``headlines``: every comparison of a probe's headline metric(s) (``Probe.headlines``);
* ``<probe> subgroups``: the per-group rows (``metric:<group>``) of one probe;
* ``<probe> other metrics``: its remaining overall metrics;
* diagnostics (``Probe.diagnostics``: tie rates, accuracies, undetected rates, unsigned effect sizes)
  belong to no family: no q value, ``diagnostic: true``, shown apart and never flagged as bias.

**Verdicts.** One sentence per headline comparison: how far B lies from A with its interval, which way
from the unbiased value, whether it is significant, and how many units would detect a difference of the
headline's margin at 80% power -- :func:`biaslab.stats.sample_size.normal_n` with the standard error of this
very comparison (the two runs are their own pilot), scaled as ``1/sqrt(n)``; where that is more items than
the probe has, what would do instead (:func:`biaslab.planning.shortfall.items_shortfall`): the difference
all its items detect, or the repetitions per item.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from biaslab.stats import adjust_pvalues

if TYPE_CHECKING:
    from biaslab.compare.run import Run

Z95 = 1.959963984540054
POWER, Z_POWER = 0.8, 0.8416212335729143  # the power of the "you need" lines, and its normal quantile


def _probe_class(probe: str) -> Any:
    from biaslab.probes import PROBES, get_probe_class

    return get_probe_class(probe) if probe in PROBES else None


def family_of(probe: str, metric: str) -> str | None:
    """The family of a metric of a probe (None: a diagnostic)."""
    cls = _probe_class(probe)
    if cls is not None and cls.is_diagnostic(metric):
        return None
    if cls is not None and metric in {h.metric for h in cls.headlines}:
        return "headlines"
    return f"{probe} subgroups" if ":" in metric else f"{probe} other metrics"


def reading_scale(probe: str, metric: str) -> float:
    """The scale a metric is read on: its headline's ``scale`` (100 for a rate read as points), for its
    subgroup rows (``metric:<group>``) too; 1 for a metric that is no headline."""
    cls = _probe_class(probe)
    base = metric.split(":")[0]
    found = next((h for h in cls.headlines if h.metric == base), None) if cls is not None else None
    return float(found.scale) if found is not None else 1.0


def as_read(row: dict[str, Any]) -> dict[str, Any]:
    """A comparison row with its values on the metric's reading scale (``row["scale"]``), as the verdicts
    show them: the table, the forest plots and the verdict lines then agree on one unit per metric."""
    s = float(row.get("scale") or 1.0)
    if s == 1.0:
        return row
    return {**row, **{k: row[k] * s for k in ("a", "b", "diff", "ci_low", "ci_high") if row.get(k) is not None}}


def assign_families(comparisons: list[dict[str, Any]]) -> dict[str, int]:
    """Set ``family``, ``diagnostic`` and the within-family ``q`` of every row; ``{family: rows}``."""
    members: dict[str, list[int]] = {}
    for i, c in enumerate(comparisons):
        fam = family_of(str(c.get("probe")), c["metric"])
        c["family"], c["diagnostic"], c["q"] = fam, fam is None, None
        if fam is not None:
            members.setdefault(fam, []).append(i)
    for idx in members.values():
        for i, q in zip(idx, adjust_pvalues([comparisons[i].get("p") for i in idx], "bh")):
            comparisons[i]["q"] = q
    return {f: len(idx) for f, idx in members.items()}


def _fmt(v: float, fmt: str) -> str:
    return format(v, fmt)


def verdict(h: Any, row: dict[str, Any], probe: str = "", repetitions: int = 1) -> dict[str, Any]:
    """The verdict on one headline row (``h``: the probe's :class:`~biaslab.probing.headline.Headline`);
    ``probe`` and the runs' ``repetitions`` per item tell what would do where the probe has too few items."""
    from biaslab.planning.shortfall import items_shortfall, probe_items, repetitions_blocker
    from biaslab.stats.sample_size import normal_n

    diff, lo, hi, p = row.get("diff"), row.get("ci_low"), row.get("ci_high"), row.get("p")
    s, fmt = h.scale, (".1f" if h.fmt in (".0f", ".0%") else h.fmt)
    out: dict[str, Any] = {"metric": h.metric, "run_a": row["run_a"], "run_b": row["run_b"]}
    if diff is None or not math.isfinite(diff):
        out["text"] = f"{h.metric}: not defined on both runs"
        return out
    harm_a, harm_b = h.harm_of(row["a"]), h.harm_of(row["b"])
    way = "further from" if harm_b > harm_a else "closer to" if harm_b < harm_a else "as far from"
    text = (
        f"{h.metric}: B {'+' if diff >= 0 else '-'}{_fmt(abs(diff) * s, fmt)} vs A "
        f"({_fmt(row['a'] * s, fmt)} -> {_fmt(row['b'] * s, fmt)}), {way} unbiased ({h.unbiased * s:g})"
    )
    if lo is not None and hi is not None:
        text += f" [{_fmt(lo * s, fmt)}, {_fmt(hi * s, fmt)}]"
    else:
        text += f" (no interval: {row.get('reason') or 'too few units'})"
    sig = p is not None and p < 0.05 and lo is not None
    text += ", significant" if sig else ", not significant"
    if p is not None:
        text += f" (p {p:.3g}" + (f", q {row['q']:.3g})" if row.get("q") is not None else ")")
    n = int(row.get("n_shared") or 0)
    if h.margin and lo is not None and hi is not None and n > 1 and hi > lo:
        se = (hi - lo) / (2 * Z95)
        need = normal_n(h.margin, se * math.sqrt(n), power=POWER)
        out["n_needed"] = need
        short = items_shortfall(
            probe,
            need,
            probe_items(probe) if probe else None,
            noun=h.plan.noun,
            power=POWER,
            detectable=lambda k: (Z95 + Z_POWER) * se * math.sqrt(n / k),
            no_repetitions=repetitions_blocker(probe) if probe else "",
            repetitions=repetitions,
        )
        text += f"; to detect a difference of {h.margin * s:g}"
        if short is None:
            text += f" you need ~{need} {h.plan.noun} (these runs share {n})"
        else:  # more than the probe has: say so, and what would do instead
            first, *instead = short.sentences(s, fmt, what="a difference")
            text += f": {first} (these runs share {n}); " + "; ".join(instead)
            out["shortfall"] = short.as_dict()
    out.update(text=text, significant=sig)
    return out


def headline_verdicts(a: Run, b: Run, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One verdict per headline metric the comparison of B with A holds."""
    cls = _probe_class(a.probe)
    if cls is None:
        return []
    by = {r["metric"]: r for r in rows}
    reps = max(int(r.results.parameters.get("repetitions") or 1) for r in (a, b))
    return [verdict(h, by[h.metric], a.probe, reps) for h in cls.headlines if h.metric in by]
