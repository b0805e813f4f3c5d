"""``biaslab suite``: a set of probes on one or more models, one results.json and one report card."""

from __future__ import annotations

from pathlib import Path

import typer

from biaslab.cli.common import console


def suite(
    model: list[str] | None = typer.Option(None, "--model", "-m", help="Model spec (repeat for several models; "
                                           "default: the embedded model)."),
    probes: list[str] | None = typer.Option(None, "--probes", "-p", help="Probe to run (repeat; default: every "
                                            "probe that can run offline on the model kind)."),
    limit: int | None = typer.Option(None, "--limit", "-n", help="At most this many items per probe (default: "
                                     "each probe's suite size)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output directory: results.json, report.html and runs/."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Response cache directory."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    baseline: Path | None = typer.Option(None, "--baseline", help="A suite folder of the model shipped: gate every "
                                         "model against it (headlines at their default margins, as `biaslab gate` "
                                         "does) in results.json and the card."),
) -> None:
    """Run a set of probes and write one report card (headline metric, CI and a reading per probe and model)."""
    from biaslab.models.registry import DEFAULT_MODEL
    from biaslab.suite.run import run_suite

    con = console()
    models = list(model) if model else [DEFAULT_MODEL]
    res = run_suite(models, list(probes) if probes else None, out, limit=limit, cache_dir=cache_dir, console=con,
                    quiet=quiet, baseline=baseline)
    for r in res["runs"]:
        con.print(f"[bold]{r['model']}[/] {r['probe']}: {r['reading']}")
    for g in res.get("gates", []):
        verdict = "PASS" if g["passed"] else "FAIL"
        con.print(f"[bold]{g['candidate']['model']}[/] against the baseline: {verdict} (biaslab gate for details)")
    con.print(f"wrote {Path(out) / 'results.json'}, {Path(out) / 'report.html'}")
