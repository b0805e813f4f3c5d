"""The terminal view of a ``biaslab ppi`` result (:func:`biaslab.ppi.analysis.analyse`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from rich.console import JustifyMethod


def _num(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.{digits}f}"


def _ci(d: dict[str, Any]) -> str:
    """``[low, high]``, escaped for Rich."""
    return escape(f"[{_num(d['ci_low'])}, {_num(d['ci_high'])}]")


def _p(p: float | None) -> str:
    if p is None or not math.isfinite(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _n_eff(v: float | None) -> str:
    return "unbounded" if v is None or not math.isfinite(v) else f"{v:.0f}"


def _gain(v: float | None) -> str:
    return "unbounded" if v is None or not math.isfinite(v) else f"{v:+.0f}"


def print_result(res: dict[str, Any], out: Console) -> None:
    level = f"{100 * res['confidence']:g}%"
    name = "PPI++" if res["method"].startswith("PPI++") else "PPI"
    table = Table(
        title=f"Mean human score from a judge · {res['n_pred']} judged items, {res['n_gold']} with human scores",
        title_justify="left",
    )
    table.add_column("estimate of the mean")
    table.add_column("value", justify="right")
    table.add_column(f"{level} CI", justify="right")
    table.add_column("width", justify="right")
    table.add_row(f"judge + humans ({name})", _num(res["estimate"]), _ci(res), _num(res["ci_high"] - res["ci_low"]))
    c = res["classical"]
    table.add_row("humans only", _num(c["estimate"]), _ci(c), _num(c["ci_high"] - c["ci_low"]))
    out.print(table)
    out.print(
        f"width ratio {_num(res['width_ratio'], 2)}; effective sample size {_n_eff(res['effective_n'])} "
        f"human scores ({res['n_gold']} rated, gain {_gain(res['effective_n_gain'])}): "
        f"{res['effective_n_definition']}"
    )
    out.print(
        f"lambda {_num(res['lambda'], 3)}; judge-human Pearson r on the gold items "
        f"{_num(res['gold_judge_r'], 2)}; judge mean {_num(res['judge_mean'])}"
    )
    out.print(f"target: {res['target_description']}")
    out.print(f"method: {res['method']}")
    for role in ("pred", "gold"):
        src = res[role]
        out.print(escape(f"{role.upper()}: {src['source']} ({src['format']}; {src['detail']})"))
    if res["groups"]:
        _print_groups(res, out, level, name)
    for w in res["warnings"]:
        out.print(f"[yellow]warning:[/] {escape(w)}")


def _pm(d: dict[str, Any]) -> str:
    """``estimate ± half-width`` (the t intervals are symmetric)."""
    return f"{_num(d['estimate'])} ± {_num((d['ci_high'] - d['ci_low']) / 2)}"


def _print_groups(res: dict[str, Any], out: Console, level: str, name: str) -> None:
    t = Table(title=f"By {res['by']} (estimate ± half-width of the {level} interval)", title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("group", "left"),
        ("judged", "right"),
        ("gold", "right"),
        (name, "right"),
        ("humans only", "right"),
        ("eff. n", "right"),
    )
    for col, just in columns:
        t.add_column(escape(col), justify=just)
    for g in res["groups"]:
        t.add_row(
            escape(g["group"]),
            str(g["n_pred"]),
            str(g["n_gold"]),
            _pm(g),
            _pm(g["classical"]),
            _n_eff(g["effective_n"]),
        )
    out.print(t)
    if not res["differences"]:
        return
    d = Table(title="Differences a - b (estimate ± half-width of the corrected interval)", title_justify="left")
    for col in ("a - b", name, "p (Holm)", "humans only", "p (Holm)"):
        d.add_column(escape(col), justify="left" if col == "a - b" else "right")
    for row in res["differences"]:
        c = row["classical"]
        d.add_row(escape(f"{row['a']} - {row['b']}"), _pm(row), _p(row["p_holm"]), _pm(c), _p(c["p_holm"]))
    out.print(d)
    out.print(f"correction: {res['correction']}")
