"""``biaslab probes``: one line per probe that fits the terminal (80 columns: name, kind, what it measures, whether
it can run here), ``--long`` for each probe's headline metrics and options, ``--json`` for every declaration and
every reason a probe cannot run here."""

from __future__ import annotations

import shutil
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from biaslab.cli.common import console

HEADER = ("probe", "kind", "what it measures", "runs here")
GAP = "  "
LONG_STATUS = 20  # a longer reason is cut (--json has it whole)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def short_lines(rows: list[dict[str, Any]], width: int) -> list[str]:
    """The listing: a header, one line per probe and a footer, none longer than ``width`` (at least 60) where the
    names fit; the "what it measures" column takes the room the others leave."""
    width = max(width, 60)
    status = [_cut("yes" if r["here"]["can_run"] else f"no: {r['here']['why_not']}", LONG_STATUS) for r in rows]
    name_w = max(len(HEADER[0]), *(len(r["name"]) for r in rows))
    kind_w = max(len(HEADER[1]), *(len(r["kind"]) for r in rows))
    status_w = max(len(HEADER[3]), *map(len, status))
    what_w = max(width - name_w - kind_w - status_w - 3 * len(GAP), 12)

    def line(name: str, kind: str, what: str, here: str) -> str:
        cells = [name.ljust(name_w), kind.ljust(kind_w), _cut(what, what_w).ljust(what_w), here]
        return GAP.join(cells).rstrip()

    out = [line(*HEADER)]
    out += [line(r["name"], r["kind"], r["summary"] or r["title"], s) for r, s in zip(rows, status)]
    able = sum(r["here"]["can_run"] for r in rows)
    out.append("")
    why = "; why not, in full: biaslab probes --json" if able < len(rows) else ""
    out.append(f"{able} of {len(rows)} probes can run here{why}")
    fetch = [f for r in rows for why in r["here"]["reasons"] for f in why.get("fetchable", [])]
    if fetch:
        from biaslab.data.availability import fetch_command

        folders = dict.fromkeys(f.rpartition("/")[0] or f for f in fetch)  # a folder fetches every file in it
        texts = [f"missing data: {fetch_command(names)}" for names in (dict.fromkeys(fetch), folders)]
        fits = [t for t in texts if len(t) <= width]
        out.append(fits[0] if fits else "missing data: biaslab data --fetch (every file; --json names each probe's)")
    out.append("headline metrics and options (-P key=value): biaslab probes --long")
    return [_cut(x, width) for x in out]


def probes(
    long: bool = typer.Option(
        False, "--long", "-l", help="A table of every probe's headline metrics and options (wide)."
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Every probe's declarations as JSON: headline metric(s) with unit, unbiased value and direction, "
        "metrics, options, pairing, data files, and whether it can run here (each reason it cannot, with the "
        "files missing, where biaslab looked and the command that fetches them).",
    ),
) -> None:
    """List the probes, one line each: kind, what it measures, and whether it can run here (its data is in
    BIASLAB_DATA_DIR or the download cache, it needs no file of yours, the packages it needs are installed) or
    why not. Options are given as `biaslab run PROBE -P key=value`."""
    import json

    from biaslab.app.catalog import catalog
    from biaslab.app.readiness import backends_here, readiness

    backends = backends_here()
    rows = [{**p, "here": readiness(p["name"], backends)} for p in catalog()]
    if as_json:
        print(json.dumps(rows, indent=2))
    elif long:
        _long_table(rows)
    else:
        print("\n".join(short_lines(rows, shutil.get_terminal_size((80, 24)).columns)))


def _long_table(rows: list[dict[str, Any]]) -> None:
    table = Table(title="Probes (each card: README.md beside the probe; --json for everything)")
    for col in ("probe", "what it is", "headline (unbiased, worse)", "options (-P key=value)"):
        table.add_column(col)
    for p in rows:
        heads = "\n".join(f"{h['metric']} ({h['unbiased']:g}, {h['worse']})" for h in p["headlines"])
        opts = "\n".join(
            k
            + (f" ({o['flag']})" if o.get("flag") else "")
            + f": {o['help']}"
            + (f" ({o['range']})" if o.get("range") else "")
            for k, o in p["options"].items()
        )
        source = "" if p["source"] == "built-in" else f"\n[dim]from {escape(p['source'])}[/]"
        why = p["here"]["reasons"]
        here = f"\n[yellow]cannot run here: {escape(why[0]['detail'])}[/]" if why else ""
        table.add_row(p["name"], escape(p["title"]) + source + here, heads or "-", escape(opts) or "-")
    console().print(table)
