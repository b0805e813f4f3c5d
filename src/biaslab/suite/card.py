"""The suite's report card (``report.html``): every headline of every run with its interval, its mark and
what it means, grouped by GenderBench's harm groups, the models side by side with paired tests.

* **How to read it**: the mark rule (the mark of the worse end of the 95% interval), what A-D mean, what
  "measured" and "not ruled out at this size" say, and where GenderBench's own rule (the best mark the interval
  touches) is shown (:mod:`biaslab.suite.marks`).
* **Marks at a glance**: one row per headline, one column per model; a card per headline on a phone.
* **One section per harm group** (GenderBench's outcome disparity, stereotypical reasoning and representational
  harms, then the treatment of women and men: the headlines that declare who a difference favours; headlines
  without a group last): a table per model with value, interval, mark, GenderBench's letter, harm, reading, the
  effect the run's size detects and a link to the run's own report; warnings where a size cannot detect a
  meaningful effect.
* **Runs**: items used per run and what they covered (the probe's :meth:`~biaslab.probing.core.Probe.coverage`,
  with the options a named set ran it with), and why, where a probe drew more than ``--limit``; the probes' own
  warnings (e.g. a saturated control); the probes a named set left out, why, and the command that includes each.
* **Paired comparisons** (several models): every headline against the first model, from ``compare``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from biaslab.compare.render import ci_cell, num, pval
from biaslab.io import atomic_write_text
from biaslab.probing.headline import GENDERBENCH_GROUPS, TREATMENT_GROUP
from biaslab.suite.marks import GB_COLUMN, RULE, count_text, gb_cell, mark_cell
from biaslab.suite.marks import legend as mark_legend

OTHER = "Other headlines"


def _link(run: dict[str, Any]) -> Markup:
    return Markup('<a href="{}/report.html">report</a>').format(run["dir"])


def _value(h: dict[str, Any]) -> str:
    return num(h.get("value"))


def _interval(h: dict[str, Any]) -> str:
    if h.get("ci_low") is not None and h.get("ci_high") is not None:
        return ci_cell(h)
    return "too small" if h.get("too_small") else "–"


def _detects(h: dict[str, Any]) -> str:
    effect = h.get("detectable_effect")
    return "–" if effect is None else f"{effect:.3g}"


def _entries(runs: Sequence[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(r, h) for r in runs for h in r.get("headlines", [])]


def group_of(h: dict[str, Any]) -> str:
    g = h.get("group") or ""
    return g if g else OTHER


def group_order(runs: Sequence[dict[str, Any]]) -> list[str]:
    """GenderBench's groups first (in its order), then any other declared group, then the ungrouped."""
    present = {group_of(h) for _, h in _entries(runs)}
    known = [g for g in GENDERBENCH_GROUPS if g in present]
    others = sorted(present - set(GENDERBENCH_GROUPS) - {OTHER})
    treatment = [TREATMENT_GROUP] if any(h.get("favours") for _, h in _entries(runs)) else []
    return known + others + treatment + ([OTHER] if OTHER in present else [])


def _in_group(h: dict[str, Any], group: str) -> bool:
    return bool(h.get("favours")) if group == TREATMENT_GROUP else group_of(h) == group


def _favour_text(h: dict[str, Any]) -> str:
    v = h.get("value")
    if v is None:
        return "–"
    d = float(v) - float(h["unbiased"])
    if d == 0:
        return "neither"
    other = {"men": "women", "women": "men"}.get(h["favours"], f"not {h['favours']}")
    who = h["favours"] if d > 0 else other
    return f"{who}, by {abs(d):.3g}"


def size_card(runs: Sequence[dict[str, Any]], group: str) -> dict[str, Any] | None:
    """The group's size warnings, each once, with the models whose runs it holds for."""
    found: dict[tuple[str, str, str], list[str]] = {}
    if group == TREATMENT_GROUP:  # its headlines are in their own group too, with their warnings
        return None
    for r, h in _entries(runs):
        if _in_group(h, group) and h.get("size_warning"):
            found.setdefault((r["probe"], h["metric"], h["size_warning"]), []).append(r["model"])
    if not found:
        return None
    return {
        "title": "Sizes that cannot detect a meaningful effect",
        "warnings": [f"{p} {m} ({', '.join(models)}): {w}" for (p, m, w), models in found.items()],
    }


def _headline_cell(probe: str, metric: str, harm: str) -> Markup:
    out = Markup("<b>{}</b> {}").format(probe, metric)
    return out + (Markup('<br><span class="harm">{}</span>').format(harm) if harm else Markup())


def group_card(model: str, runs: Sequence[dict[str, Any]], group: str) -> dict[str, Any] | None:
    """A model's headlines of one group: the headline (probe, metric, harm), value, interval, mark, GenderBench's
    letter, who a difference favours (the treatment group), reading, units, detectable effect, the run's link."""
    rows = []
    for r, h in _entries([r for r in runs if r["model"] == model]):
        if not _in_group(h, group):
            continue
        row = [_headline_cell(r["probe"], h["metric"], h.get("harm") or ""), _value(h), _interval(h)]
        row += [mark_cell(h), gb_cell(h)]
        if group == TREATMENT_GROUP:
            row.append(_favour_text(h))
        rows.append([*row, h["reading"], "–" if h.get("n") is None else str(h["n"]), _detects(h), _link(r)])
    if not rows:
        return None
    header = ["headline", "value", "95% CI", "mark", GB_COLUMN]
    header += ["favours"] if group == TREATMENT_GROUP else []
    header += ["reading", "n", "detects (80% power)", "run"]
    return {
        "title": model,
        "header": header,
        "numeric": [1, 2],
        "wide": [3, len(header) - 4],  # on a phone: the mark and the reading each on a line of their own,
        "last": [4],  # and GenderBench's letter last, beside n, detects and run
        "reflow": True,
        "rows": rows,
        "note": "n: the units of the headline's interval (its plan counts them); detects: the smallest "
        "effect on the metric, away from unbiased, that a run of this size finds with 80% power.",
    }


def glance_card(suite: dict[str, Any]) -> dict[str, Any]:
    """One row per headline under its harm group's name, one column per model: the mark and what it is
    (measured or not ruled out at this size), then value and interval. On a phone each row is a card."""
    models = suite["models"]
    keys: list[tuple[str, str, str, str]] = []
    cells: dict[tuple[str, str, str], Markup] = {}
    for r, h in _entries(suite["runs"]):
        key = (group_of(h), r["probe"], h["metric"], h.get("harm") or "")
        if key not in keys:
            keys.append(key)
        value = Markup('<br><span class="val">{} {}</span>').format(_value(h), _interval(h))
        cells[(r["model"], r["probe"], h["metric"])] = mark_cell(h) + (value if h.get("value") is not None else "")
    order = {g: i for i, g in enumerate(group_order(suite["runs"]))}
    keys.sort(key=lambda k: order.get(k[0], len(order)))
    rows: list[Any] = []  # a group's name (a row of its own, where there are several groups), then its headlines
    titled = len({k[0] for k in keys}) > 1
    for i, (g, p, m, harm) in enumerate(keys):
        if titled and (i == 0 or keys[i - 1][0] != g):
            rows.append(g)
        rows.append([_headline_cell(p, m, harm), *[cells.get((model, p, m), "not run") for model in models]])
    return {
        "title": "",
        "header": ["headline", *models],
        "wide": list(range(1, len(models) + 1)),
        "reflow": True,
        "rows": rows,
        "note": "Each cell: the mark (solid: measured; dashed: not ruled out at this size, with the marks the "
        "interval could be), then the value and its 95% interval. Hover a mark for how it follows from the "
        "interval and GenderBench's letter. " + count_text(h for _, h in _entries(suite["runs"])),
    }


def covered(run: dict[str, Any]) -> str:
    """What a run's items covered, and the options a named set ran it with."""
    flags = " ".join(f"-P {k}={v}" for k, v in (run.get("options") or {}).items())
    return (run.get("covers") or "") + (f" (run with {flags})" if flags else "")


def with_code(text: str) -> Markup:
    """``text`` with its `backquoted` commands as code."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backquote: the text as it is
        return Markup("{}").format(text)
    return Markup("").join(Markup("<code>{}</code>").format(p) if i % 2 else p for i, p in enumerate(parts))


def runs_cards(suite: dict[str, Any]) -> list[dict[str, Any]]:
    cards = []
    for model in suite["models"]:
        rows, warnings = [], []
        for r in (r for r in suite["runs"] if r["model"] == model):
            used = f"{r['n_items']}" + (f" (asked {r['size_asked']})" if r.get("size_asked") is not None else "")
            rows.append(
                [
                    r["probe"],
                    r.get("title") or "",
                    used,
                    covered(r),
                    r.get("selection_note") or "",
                    "reused" if r.get("reused") else str(r.get("model_calls", "")),
                    _link(r),
                ]
            )
            warnings += [f"{r['probe']}: {w}" for w in r.get("warnings") or []]
        for m in (m for m in suite.get("missing") or [] if m["model"] == model):  # a partial suite's runs to do
            rows.append([m["probe"], "", "–", "", "", "not run (the suite was stopped before it)", ""])
        cards.append(
            {
                "title": model,
                "header": [
                    "probe",
                    "what it is",
                    "items",
                    "what they covered",
                    "why more than asked",
                    "model calls",
                    "run",
                ],
                "numeric": [2, 5],
                "rows": rows,
                "warnings": warnings,
            }
        )
    if suite.get("skipped"):
        bullets = [with_code(f"{k}: {v}") for k, v in suite["skipped"].items()]
        cards.append({"title": "Left out, and how to include them", "bullets": bullets})
    return cards


def comparison_cards(suite: dict[str, Any]) -> list[dict[str, Any]]:
    from biaslab.compare.forest import forest_plots

    heads = {(r["probe"], h["metric"]) for r, h in _entries(suite["runs"])}
    cards = []
    for cmp in suite["comparisons"]:
        head = [c for c in cmp["comparisons"] if (cmp["probe"], c["metric"]) in heads]
        rows = [
            [
                c["metric"],
                c["run_b"],
                num(c["a"]),
                num(c["b"]),
                num(c["diff"], signed=True),
                ci_cell(c),
                pval(c["p"]),
                pval(c["q"]),
                c["test"],
            ]
            for c in head
        ]
        cards.append(
            {
                "title": f"{cmp['probe']}: every model against {suite['models'][0]}",
                "header": ["metric", "model (B)", "A", "B", "B - A", "95% CI", "p", "q", "test"],
                "numeric": [2, 3, 4, 5, 6, 7],
                "rows": rows,
                "svgs": forest_plots(head, several_pairs=True),
                "note": "; ".join(p["note"] for p in cmp["pairs"])
                + ("" if rows else "; no headline metric is defined on every run"),
            }
        )
    return cards


def card_sections(suite: dict[str, Any], base: Path | None = None) -> list[dict[str, Any]]:
    """The card's sections; ``base``: the suite's folder (the runs' results, for the per-language section)."""
    runs = suite["runs"]
    groups = group_order(runs)
    legend: list[Any] = mark_legend()
    legend += [f"{g}: {GENDERBENCH_GROUPS[g]}" for g in groups if g in GENDERBENCH_GROUPS]
    if TREATMENT_GROUP in groups:
        legend.append(
            f"{TREATMENT_GROUP}: GenderBench's view of the headlines that compare women and men, with "
            "who a difference favours (also shown in their own group)"
        )
    sections = [
        {"title": "How to read this card", "intro": RULE, "cards": [{"bullets": legend}]},
        {"title": "Marks at a glance", "cards": [glance_card(suite)]},
    ]
    for g in groups:
        cards = [c for c in [size_card(runs, g), *(group_card(m, runs, g) for m in suite["models"])] if c]
        intro = GENDERBENCH_GROUPS.get(g, "")
        if g == OTHER:
            intro = "Headlines of probes outside GenderBench's harm groups." if len(groups) > 1 else ""
        sections.append({"title": g if len(groups) > 1 or g != OTHER else "Headlines", "intro": intro, "cards": cards})
    if base is not None:
        from biaslab.suite.languages import language_section

        per_language = language_section(suite, base)
        if per_language:
            sections.append(per_language)
    sections.append(
        {
            "title": "Runs",
            "intro": "Each run's own report has every metric, its tests and examples.",
            "cards": runs_cards(suite),
        }
    )
    if suite["comparisons"]:
        sections.append(
            {
                "title": "Paired comparisons of the headline metrics",
                "cards": comparison_cards(suite),
                "intro": "Each model against the first on the items both runs share; q values: "
                "Benjamini-Hochberg within each probe's comparisons."
                + (" Partial suite: only the probes finished on every model." if suite.get("partial") else ""),
            }
        )
    if suite.get("gates"):
        from biaslab.gate.render import card_section

        sections.append(card_section(suite["gates"]))
    elif suite.get("gates_skipped"):
        sections.append(
            {"title": "Release gate against the baseline suite", "intro": suite["gates_skipped"], "cards": []}
        )
    return sections


def partial_banner(suite: dict[str, Any]) -> str | None:
    """The line at the top of a partial suite's card (stopped before its end), else None."""
    if not suite.get("partial"):
        return None
    from biaslab.suite.partial import progress_text

    return f"Partial: {progress_text(suite)}; run the same command again to finish."


def is_gender_card(suite: dict[str, Any]) -> bool:
    """A card of the gender set, or of probes every one of which has a headline in a GenderBench group."""
    if "gender" in (suite.get("asked") or []):
        return True
    probes = {r["probe"] for r in suite["runs"]}
    grouped = {r["probe"] for r, h in _entries(suite["runs"]) if h.get("group") in GENDERBENCH_GROUPS}
    return bool(probes) and probes == grouped


def meta_lines(suite: dict[str, Any]) -> list[str]:
    size = (
        f"--limit {suite['limit']}: at most {suite['limit']} items a probe unless its design needs more (see Runs)"
        if suite.get("limit")
        else "each probe's suite size"
    )
    lines = [f"{len(suite['models'])} model(s), {len(suite['probes'])} probe(s); sizes: {size}."]
    if suite.get("asked"):
        lines.append("Asked for: " + ", ".join(suite["asked"]) + ".")
    return lines + settings_lines(suite)


def settings_lines(suite: dict[str, Any]) -> list[str]:
    """The decoding parameters and the system prompt the suite gave every run, and the runs it did not reach."""
    from biaslab.probing.system_prompt import describe

    lines: list[str] = []
    if suite.get("generation"):
        given = ", ".join(f"{k} {v}" for k, v in suite["generation"].items())
        lines.append(f"Decoding for every generation probe: {given}.")
    shown = describe(suite.get("system_prompt"))
    if shown:
        missed = sorted({r["probe"] for r in suite["runs"] if r.get("system_prompt_requests") == 0})
        note = f"; not applied to {', '.join(missed)} (no chat in their requests)" if missed else ""
        lines.append(f"System prompt first in every chat request: {shown}{note}.")
    return lines


def render_card(
    title: str, sections: Sequence[dict[str, Any]], meta: Sequence[str] = (), banner: str | None = None
) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    from biaslab.report.style import REFLOW

    env = Environment(loader=PackageLoader("biaslab.suite", "templates"), autoescape=select_autoescape(["j2"]))
    return env.get_template("card.html.j2").render(
        title=title, sections=list(sections), meta=list(meta), banner=banner, reflow_css=REFLOW
    )


def write_card(suite: dict[str, Any], path: Path) -> Path:
    title = "Gender report card" if is_gender_card(suite) else "Bias report card"
    html = render_card(title, card_sections(suite, Path(path).parent), meta_lines(suite), partial_banner(suite))
    atomic_write_text(Path(path), html)
    return Path(path)
