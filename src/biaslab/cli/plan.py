"""``biaslab plan``: how many items a probe needs to detect an effect on its headline metric."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from biaslab.cli.common import console
from biaslab.planning.shortfall import ASSUMED_ICC


def plan(
    probe: str = typer.Argument(
        ...,
        help="The probe to plan (any probe `biaslab probes` lists, e.g. winosemitism, jobs-lum, crows-pairs, "
        "or file:PATH for a probe defined by a YAML file).",
    ),
    effect: float | None = typer.Option(
        None,
        "--effect",
        help="The effect to detect, in the headline metric's units "
        "(bias-score points for paired-sentence probes, a rate for jobs-lum, r for "
        "fsb-judge; `biaslab probes --json` gives each headline's unit). Default: "
        "the headline's release-gate margin (else where its mark B begins).",
    ),
    metric: str | None = typer.Option(
        None, "--metric", help="Plan another of the probe's headline metrics (default: its first)."
    ),
    power: float = typer.Option(0.8, "--power", help="The chance of detecting the effect."),
    alpha: float = typer.Option(0.05, "--alpha", help="The two-sided significance level."),
    pilot: Path | None = typer.Option(
        None, "--pilot", help="A finished run of the probe: plan from its per-item values and cluster structure."
    ),
    icc: float = typer.Option(
        ASSUMED_ICC,
        "--icc",
        help="Where more items are needed than the probe has: the correlation assumed between answers to one "
        "item, for the repetitions that would do instead (0: every answer independent).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
) -> None:
    """Items needed to detect an effect E with the given power (closed form, or from a pilot run)."""
    from biaslab.planning.plan import plan as make_plan

    res = make_plan(probe, effect, power=power, alpha=alpha, pilot=pilot, metric=metric, icc=icc)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    key = "n_pairs" if "n_pairs" in res else "n_items"
    con = console()
    count = res[key] if res[key] is not None else "no number of"
    chosen = " (the headline's default effect; --effect to choose)" if res.get("effect_default") else ""
    con.print(
        f"[bold]{count}[/] {res['counts']} to detect {res['metric']} {res['unbiased']:g} {res['effect']:+g} "
        f"with power {power:g} at alpha {alpha:g}{chosen}"
    )
    con.print(f"method: {res['method']}")
    if res.get("design_effect_planned") is not None:
        con.print(
            f"design effect of predicate clusters at the planned {res[key]} pairs: "
            f"{res['design_effect_planned']:.2f} (the pilot's: {res['design_effect']:.2f}); "
            f"{res['n_independent']} independent pairs would do"
        )
    elif "design_effect" in res:
        con.print(
            f"design effect of predicate clusters in the pilot: {res['design_effect']:.2f}; "
            f"{res['n_independent']} independent pairs would do"
        )
    if res.get("n_predicates_needed"):
        con.print(
            f"add predicates: {res['n_predicates_needed']} in all (the pilot has {res['n_predicates_pilot']}), "
            f"{res['n_pairs_with_more_predicates']} pairs"
        )
    for a in res["assumptions"]:
        con.print(f"  - {a}")
    if res.get("shortfall_text"):
        first, *instead = res["shortfall_text"]
        con.print(f"[bold]{first}[/]; instead:")
        for line in instead:
            con.print(f"  - {line}")
