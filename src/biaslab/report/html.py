"""Render a run's report.html from its written results and attempts (never from live state),
so any run can be re-reported later without a model: ``biaslab report DIR``
(:func:`biaslab.app.results.rebuild_report`). The probe is passed in, never built here from its name."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from biaslab.io import atomic_write_text
from biaslab.probing.core import Probe
from biaslab.probing.likelihood import LikelihoodProbe
from biaslab.probing.schema import RunResults
from biaslab.report.attempts_table import attempts_table
from biaslab.report.style import CSS


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _tag(value: Any, key: str = "") -> str:
    """Compact display of an attempt field in the report's tags."""
    if value is None or value == "":
        return "undetected" if key == "evaluation" else "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def ci_text(m: dict[str, Any], digits: int = 3) -> str:
    """A metric's interval for a table cell: "[lo, hi]", "[lo, hi] exact", or why there is none."""
    if m.get("too_small"):
        return "too small"
    if m.get("degenerate"):
        return "no variation"
    if m.get("ci_low") is None:
        return "n/a"
    exact = " exact" if m.get("interval") == "clopper-pearson" else ""
    return f"[{_fmt(m['ci_low'], digits)}, {_fmt(m['ci_high'], digits)}]{exact}"


# report.html runs no script; inline styles and data: images only (the attempts table filters with CSS)
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def breakable(name: str) -> Markup:
    """``name`` escaped, with a line break allowed after each ``_`` and ``:`` (metric names wrap between their
    words, never inside one)."""
    return Markup(re.sub(r"([_:])", r"\1<wbr>", str(escape(name))))


def _env() -> Environment:
    env = Environment(loader=PackageLoader("biaslab.report", "templates"), autoescape=select_autoescape(["html", "j2"]))
    env.filters["fmt"] = _fmt
    env.filters["tag"] = _tag
    env.filters["ci"] = ci_text
    env.filters["breakable"] = breakable
    return env


def pick_examples(rows: list[dict[str, Any]], n: int = 8, seed: int = 0) -> list[dict[str, Any]]:
    """A reproducible sample of attempts, spread over evaluations."""
    rng = random.Random(seed)
    by_eval: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_eval.setdefault(str(r.get("evaluation")), []).append(r)
    picked: list[dict[str, Any]] = []
    groups = [rng.sample(v, len(v)) for _, v in sorted(by_eval.items())]
    while len(picked) < n and any(groups):
        for g in groups:
            if g and len(picked) < n:
                picked.append(g.pop())
    return picked


FOLD_METRICS = 16  # a run with more metrics shows those by group or category (name:group) folded


def _pairs_file(results: RunResults) -> dict[str, str] | None:
    """The pairs file a paired-sentence run scored (``-P pairs=`` / ``--pairs``), as its parameters record it."""
    path = results.parameters.get("pairs")
    if not isinstance(path, str) or not path:
        return None
    return {"name": Path(path).name, "path": path, "sha256": str(results.parameters.get("pairs_sha256") or "")}


def system_prompt_line(results: RunResults) -> str | None:
    """The report's line on the run's ``--system-prompt``: its start, length and sha256, and the requests it
    reached; None without one."""
    from biaslab.probing.system_prompt import describe

    shown = describe(results.parameters.get("system_prompt"))
    if shown is None:
        return None
    n = results.run.system_prompt_requests
    if n == 0:
        return f"{shown}; not applied: no request of this run has a chat (plain-text log-likelihoods or completions)"
    return f"{shown}; first in every chat request" + (f" ({n:,} requests)" if n else "")


def render_report(results: RunResults, rows: list[dict[str, Any]], probe: Probe) -> str:
    metrics = []
    for name, m in results.metric_dicts().items():
        doc = probe.metric_docs.get(name)
        metrics.append({"p": None, "q": None, "n": None, **m, "name": name, "doc": doc})
    fold = len(metrics) > FOLD_METRICS and any(":" in m["name"] for m in metrics)
    extra_sections = probe.report_sections(results, rows)
    likelihood = isinstance(probe, LikelihoodProbe)
    pairs = _pairs_file(results)
    title = probe.title or probe.name
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            csp=CSP,
            css=CSS,
            likelihood=likelihood,
            attempts=attempts_table(rows, probe.example_fields(), likelihood=likelihood),
            r=results,
            title=f"{title}: {pairs['name']}" if pairs else title,
            pairs_file=pairs,
            system_prompt=system_prompt_line(results),
            main_metrics=[m for m in metrics if not (fold and ":" in m["name"])],
            more_metrics=[m for m in metrics if fold and ":" in m["name"]],
            has_q=any("q" in m for m in results.metric_dicts().values()),
            has_small=any(m.get("too_small") for m in metrics),
            no_interval=[(m["name"], m["reason"]) for m in metrics if m.get("ci_low") is None and m.get("reason")],
            figures=probe.figures(results, rows),
            examples=pick_examples(rows),
            example_fields=probe.example_fields(),
            sections=extra_sections,
            params_json=json.dumps(results.parameters, indent=1),
            run_json=json.dumps(results.run.model_dump(mode="json")),
            headlines=[
                {"reading": reading, "mark": h.mark(results.metric(h.metric))}
                for h, reading in zip(probe.headlines, probe.readings(results), strict=False)
            ],
        )
    )


def write_report(out_dir: Path, results: RunResults, rows: list[dict[str, Any]], probe: Probe) -> Path:
    path = Path(out_dir) / "report.html"
    atomic_write_text(path, render_report(results, rows, probe))
    return path
