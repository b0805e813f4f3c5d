"""Benchmark comparison (the WinoSemitism paper's Fig. 2): two benchmarks scored on the same models.

If two benchmarks measure the same thing, a model's score on one should predict its score on the
other. For runs of benchmark A and benchmark B (one results.json per model and benchmark), this
puts each model's scores side by side and gives Pearson's r between them over models, overall
(``bias_score``) and per group (``bias_score:<group>``, groups that every run reports), with a 95%
interval and a p value both from Fisher's z (so the interval excludes 0 exactly when p < 0.05;
fewer than 4 models or r = 1 give no interval, with the reason). Models are matched by the model
name recorded in results.json.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from biaslab.compare.runs import escape_markup, render_table
from biaslab.errors import ConfigError
from biaslab.io import atomic_write_text
from biaslab.probing.results import read_results
from biaslab.probing.schema import RunResults
from biaslab.stats.correlation import pearson_inference

MIN_MODELS = 3


def model_name(results: RunResults, path: Path) -> str:
    m = results.model
    return str(m.get("model") or m.get("name") or Path(path).name)


def benchmark_label(results: RunResults) -> str:
    """The probe name; for the ``pairs`` probe, the pairs file's name."""
    params = results.parameters
    if results.probe == "pairs" and params.get("pairs"):
        return f"pairs:{Path(str(params['pairs'])).stem}"
    return results.probe


def load_runs(paths: Sequence[Path]) -> list[tuple[Path, RunResults]]:
    return [(Path(p), read_results(Path(p))) for p in paths]


def split_two_benchmarks(runs: list[tuple[Path, RunResults]], metric: str = "bias_score") -> tuple[list, list] | None:
    """Runs of exactly two benchmarks on the same set of (2+) models, all reporting ``metric``
    -> (A runs, B runs); else None."""
    if not all(metric in r.metrics for _, r in runs):
        return None
    labels = list(dict.fromkeys(benchmark_label(r) for _, r in runs))
    if len(labels) != 2:
        return None
    a = [(p, r) for p, r in runs if benchmark_label(r) == labels[0]]
    b = [(p, r) for p, r in runs if benchmark_label(r) == labels[1]]
    if {model_name(r, p) for p, r in a} != {model_name(r, p) for p, r in b} or len(a) < 2:
        return None
    return a, b


def _by_model(runs: list[tuple[Path, RunResults]], side: str) -> dict[str, RunResults]:
    out: dict[str, RunResults] = {}
    for p, r in runs:
        name = model_name(r, p)
        if name in out:
            raise ConfigError(f"model {name!r} appears twice among the {side} runs ({p}); give one run per model")
        out[name] = r
    return out


def _correlation(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Pearson's r over models, interval and p value from Fisher's z
    (:func:`biaslab.stats.correlation.pearson_inference`); ``reason`` where there is no interval."""
    res = pearson_inference(x, y, label="models")
    out = {"r": res["value"], "ci_low": res["ci_low"], "ci_high": res["ci_high"], "p": res["p"], "n_models": res["n"]}
    if res.get("reason"):
        out["reason"] = res["reason"]
    return out


def _value(results: RunResults, name: str) -> float | None:
    v = results.metric(name).get("value")
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def compare_benchmarks(
    a_runs: list[tuple[Path, RunResults]],
    b_runs: list[tuple[Path, RunResults]],
    *,
    metric: str = "bias_score",
) -> dict[str, Any]:
    la = list(dict.fromkeys(benchmark_label(r) for _, r in a_runs))
    lb = list(dict.fromkeys(benchmark_label(r) for _, r in b_runs))
    A, B = _by_model(a_runs, "first"), _by_model(b_runs, "second")
    models = [m for m in A if m in B]
    if len(models) < MIN_MODELS:
        raise ConfigError(
            f"the two benchmarks share {len(models)} model(s) ({', '.join(models) or 'none'}); "
            f"a correlation over models needs at least {MIN_MODELS} models scored on both"
        )
    missing = [m for m in models if _value(A[m], metric) is None or _value(B[m], metric) is None]
    if missing:
        raise ConfigError(
            f"metric {metric!r} is missing from the runs of {', '.join(missing)}; choose a metric every "
            "run reports (--metric)"
        )
    prefix = metric + ":"
    groups = [n[len(prefix) :] for n in A[models[0]].metrics if n.startswith(prefix)]
    groups = [
        g
        for g in groups
        if all(_value(A[m], prefix + g) is not None and _value(B[m], prefix + g) is not None for m in models)
    ]
    rows: list[dict[str, Any]] = []
    for m in models:
        ma, mb = A[m].metric(metric), B[m].metric(metric)
        rows.append(
            {
                "model": m,
                "a": ma.get("value"),
                "a_ci": [ma.get("ci_low"), ma.get("ci_high")],
                "b": mb.get("value"),
                "b_ci": [mb.get("ci_low"), mb.get("ci_high")],
                "groups": {g: [_value(A[m], prefix + g), _value(B[m], prefix + g)] for g in groups},
            }
        )
    x = np.array([r["a"] for r in rows], dtype=float)
    y = np.array([r["b"] for r in rows], dtype=float)
    per_group = {}
    for g in groups:
        gx = np.array([r["groups"][g][0] for r in rows], dtype=float)
        gy = np.array([r["groups"][g][1] for r in rows], dtype=float)
        per_group[g] = _correlation(gx, gy)
    return {
        "benchmark_a": " + ".join(la),
        "benchmark_b": " + ".join(lb),
        "metric": metric,
        "models": rows,
        "overall": _correlation(x, y),
        "groups": per_group,
        "only_a": [m for m in A if m not in B],
        "only_b": [m for m in B if m not in A],
    }


def scatter_figures(cmp: dict[str, Any]) -> list[dict[str, Any]]:
    """The overall scatter and, when there are groups, one small scatter per group."""
    from biaslab.report.plots import fig_to_base64, new_figure

    def draw(ax, xs, ys, labels, title):
        ax.scatter(xs, ys, s=28, color="#3b6ea8")
        for x, y, lab in zip(xs, ys, labels):
            if labels:
                ax.annotate(lab, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        lo = min(min(xs), min(ys))
        hi = max(max(xs), max(ys))
        ax.plot([lo, hi], [lo, hi], ls="--", lw=0.8, color="#999999")
        ax.set_title(title, fontsize=9)

    a, b = cmp["benchmark_a"], cmp["benchmark_b"]
    o = cmp["overall"]
    fig, ax = new_figure(6.0, 5.0)
    draw(
        ax,
        [r["a"] for r in cmp["models"]],
        [r["b"] for r in cmp["models"]],
        [r["model"] for r in cmp["models"]],
        f"{cmp['metric']}: r = {_r(o)}",
    )
    ax.set_xlabel(a)
    ax.set_ylabel(b)
    figs = [
        {
            "title": f"{a} vs {b}, per model",
            "png_base64": fig_to_base64(fig),
            "caption": "One point per model; the dashed line is y = x (the same score on both benchmarks).",
        }
    ]
    groups = list(cmp["groups"])
    if groups:
        cols = min(3, len(groups))
        nrows = math.ceil(len(groups) / cols)
        fig, ax0 = new_figure(3.2 * cols, 2.8 * nrows)
        fig.delaxes(ax0)
        for i, g in enumerate(groups):
            ax = fig.add_subplot(nrows, cols, i + 1)
            draw(
                ax,
                [r["groups"][g][0] for r in cmp["models"]],
                [r["groups"][g][1] for r in cmp["models"]],
                [],
                f"{g}: r = {_r(cmp['groups'][g])}",
            )
        figs.append(
            {"title": "Per group", "png_base64": fig_to_base64(fig), "caption": f"x: {a}, y: {b}; one point per model."}
        )
    return figs


def _r(e: dict[str, Any]) -> str:
    if e.get("r") is None:
        return "n/a"
    ci = f" [{e['ci_low']:.2f}, {e['ci_high']:.2f}]" if e.get("ci_low") is not None else ""
    return f"{e['r']:.2f}{ci}"


def table_rows(cmp: dict[str, Any]) -> tuple[list[str], list[list[str]], list[str], list[list[str]]]:
    """(per-model header, rows, correlation header, rows) for the terminal and the report."""

    def v(x: Any, ci: Sequence[Any]) -> str:
        if x is None:
            return "n/a"
        return f"{x:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci and ci[0] is not None else "")

    head = ["model", cmp["benchmark_a"], cmp["benchmark_b"], "difference"]
    rows = [[r["model"], v(r["a"], r["a_ci"]), v(r["b"], r["b_ci"]), f"{r['b'] - r['a']:+.2f}"] for r in cmp["models"]]
    chead = ["scope", "models", "Pearson r [95% CI]", "p"]
    crows = [["overall", str(cmp["overall"]["n_models"]), _r(cmp["overall"]), _p(cmp["overall"]["p"])]]
    crows += [[g, str(e["n_models"]), _r(e), _p(e["p"])] for g, e in cmp["groups"].items()]
    return head, rows, chead, crows


def _p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def compare_two_benchmarks(
    a_dirs: list[Path],
    b_dirs: list[Path] | None = None,
    *,
    metric: str = "bias_score",
    out: Path | None = None,
    console: Console | None = None,
) -> dict[str, Any]:
    """Runs of two benchmarks on the same models: scores side by side, Pearson r overall and per
    group with a bootstrap CI over models, scatter plots in the HTML report (``--out x.html``).

    With ``b_dirs`` None, ``a_dirs`` must hold runs of exactly two benchmarks on the same models.
    """
    runs = load_runs(a_dirs)
    if b_dirs is None:
        split = split_two_benchmarks(runs, metric)
        if split is None:
            raise ConfigError(
                "a benchmark comparison needs runs of exactly two benchmarks on the same models "
                "(or give the second benchmark's runs with --against)"
            )
        a_runs, b_runs = split
    else:
        a_runs, b_runs = runs, load_runs(b_dirs)
    cmp = compare_benchmarks(a_runs, b_runs, metric=metric)
    head, rows, chead, crows = table_rows(cmp)
    con = console or Console()
    t = Table(title=f"{cmp['metric']}: {cmp['benchmark_a']} vs {cmp['benchmark_b']}")
    for h in head:
        t.add_column(h, justify="left" if h == "model" else "right")
    for r in rows:
        t.add_row(*[escape_markup(c) for c in r])
    con.print(t)
    c = Table(title="Pearson r between the benchmarks over models (95% bootstrap CI over models)")
    for h in chead:
        c.add_column(h, justify="left" if h == "scope" else "right")
    for r in crows:
        c.add_row(*[escape_markup(x) for x in r])
    con.print(c)
    for side, names in (("first", cmp["only_a"]), ("second", cmp["only_b"])):
        if names:
            con.print(f"note: only in the {side} benchmark's runs (left out): {', '.join(names)}")
    if out is not None:
        out = Path(out)
        if out.suffix.lower() in (".html", ".htm"):
            from biaslab.report.tables import write_tables_page

            write_tables_page(
                out,
                f"Benchmark comparison: {cmp['benchmark_a']} vs {cmp['benchmark_b']}",
                [
                    {"title": "Scores per model", "header": head, "rows": rows},
                    {
                        "title": "Correlation between the benchmarks",
                        "header": chead,
                        "rows": crows,
                        "note": "Pearson r over models; 95% percentile bootstrap CI with models resampled.",
                    },
                ],
                scatter_figures(cmp),
                [f"metric {cmp['metric']}; {len(rows)} models"],
            )
        else:
            atomic_write_text(
                out,
                render_table(head, rows, out.suffix.lower()) + "\n" + render_table(chead, crows, out.suffix.lower()),
            )
    return cmp
