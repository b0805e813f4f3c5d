"""How a gate's result is shown: the terminal table, a JUnit XML file (one testcase per metric, a failure for
each not shown non-inferior) and a Markdown summary for a pull request."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree as ET

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from biaslab.compare.render import num, pval
from biaslab.io import json_safe
from biaslab.probing.headline import mark_words

HEADER = ["metric", "baseline", "candidate", "diff", "bound", "margin", "p (Holm)", "verdict"]
SHORT = ["metric", "base", "cand", "diff", "bound", "margin", "p Holm", "verdict"]


def _bound(r: dict[str, Any], mode: str, short: bool = False) -> str:
    if r["upper"] is None:
        return ""
    if mode == "equivalence":
        return f"[{num(r['lower'], signed=True)}, {num(r['upper'], signed=True)}]"
    return ("" if short else "< ") + num(r["upper"], signed=True)


def _margin(r: dict[str, Any], mode: str, short: bool = False) -> str:
    text = ("±" if mode == "equivalence" else "") + f"{r['margin']:g}"
    default = r["margin_source"] != "given"
    return text + ("*" if short and default else " (default)" if default else "")


def cells(r: dict[str, Any], mode: str, names: str = "name", short: bool = False) -> list[str]:
    return [
        r[names],
        num(r["baseline"]),
        num(r["candidate"]),
        num(r["diff"], signed=True),
        _bound(r, mode, short),
        _margin(r, mode, short),
        pval(r["p_holm"]) if r["p_holm"] is not None else "",
        r["verdict"],
    ]


def what_diff(result: dict[str, Any]) -> str:
    if result["mode"] == "equivalence":
        return (
            "diff: candidate - baseline; bound: its two-sided "
            f"{1 - 2 * result['alpha']:.0%} interval (both one-sided bounds at alpha)"
        )
    return (
        "diff: harm(candidate) - harm(baseline), harm = distance from unbiased towards worse; "
        f"bound: its one-sided {1 - result['alpha']:.0%} upper bound (the smallest margin that would pass, "
        "before Holm's adjustment)"
    )


def reason_lines(result: dict[str, Any]) -> list[str]:
    out = []
    for r in result["metrics"]:
        if r["verdict"] == "regressed":
            out.append(
                f"{r['name']}: regressed: worse by {num(r['diff'], signed=True)} (at least "
                f"{num(r['lower'], signed=True)}), past the margin {r['margin']:g}"
            )
        elif r["verdict"] == "different":
            out.append(f"{r['name']}: different: moved by {num(r['diff'], signed=True)}, past ±{r['margin']:g}")
        elif r["verdict"] == "inconclusive":
            out.append(f"{r['name']}: inconclusive: {r['settle']['text']}")
        elif r["verdict"] in ("not tested", "too small"):
            out.append(f"{r['name']}: {r['verdict']}: {r['reason'].removeprefix('too small: ')}")
    return out


def requirement_lines(result: dict[str, Any]) -> list[str]:
    """A line per absolute requirement on the candidate (``--require``, ``--min-mark``)."""
    out = []
    for c in result.get("requirements", []):
        shown = mark_words(c["mark"], c.get("mark_genderbench_rule")) if c.get("mark") else _value(c)
        line = f"{c['name']} {c['require']}: {c['status']} ({shown})"
        out.append(line + (f": {c['reason']}" if c["reason"] and c["status"] != "met" else ""))
    return out


def _value(c: dict[str, Any]) -> str:
    if c.get("value") is None:
        return "no value"
    lo, hi = c.get("ci_low"), c.get("ci_high")
    return f"{c['value']:.3g}" + (f" [{lo:.3g}, {hi:.3g}]" if lo is not None and hi is not None else "")


def note_lines(result: dict[str, Any]) -> list[str]:
    """What a reader should know of a metric whatever its verdict (a bias that changed direction)."""
    return [f"{r['name']}: note: {r['note']}" for r in result["metrics"] if r.get("note")]


def print_gate(result: dict[str, Any], console: Console) -> None:
    b, c = result["baseline"], result["candidate"]
    console.print(escape(f"baseline:  {b['label']}\ncandidate: {c['label']}"), soft_wrap=True)
    for probe, d in result["probes"].items():
        console.print(escape(f"{probe}: {d['note']}"), soft_wrap=True)
    names = "metric" if b["kind"] == "run" else "name"
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
    for i, h in enumerate(SHORT):
        t.add_column(h, justify="left" if i in (0, 7) else "right", overflow="fold", no_wrap=i > 0)
    for r in result["metrics"]:
        style = "green" if r["verdict"] in ("non-inferior", "equivalent") else "red"
        row = cells(r, result["mode"], names, short=True)
        t.add_row(*[escape(x) for x in row[:-1]], f"[{style}]{escape(row[-1])}[/]")
    console.print(t)
    if any(r["margin_source"] != "given" for r in result["metrics"]):
        console.print("* the probe's default margin")
    console.print(escape(what_diff(result)), soft_wrap=True)
    console.print(
        escape(f"{result['adjustment']}, alpha {result['alpha']:g}; {result['resamples']} bootstrap resamples"),
        soft_wrap=True,
    )
    for line in result["notes"] + note_lines(result) + reason_lines(result) + requirement_lines(result):
        console.print(escape(line), soft_wrap=True)
    word = "non-inferior" if result["mode"] == "non-inferiority" else "equivalent"
    if result["passed"]:
        console.print(f"[bold green]PASS[/]: every metric shown {word}")
    else:
        bad = [r["name"] for r in result["metrics"] if r["verdict"] not in ("non-inferior", "equivalent")]
        bad += [f"{c['name']} {c['require']}" for c in result.get("requirements", []) if c["status"] != "met"]
        console.print(
            f"[bold red]FAIL[/]: {len(bad)} of {len(result['metrics']) + len(result.get('requirements', []))} "
            f"not shown {word} or met: " + escape(", ".join(bad))
        )


def junit_xml(result: dict[str, Any]) -> str:
    """One ``<testcase>`` per metric (classname ``biaslab.gate.<probe>``), a ``<failure>`` for each not shown
    non-inferior (equivalent), its type the verdict."""
    rows = result["metrics"]
    failures = [r for r in rows if r["verdict"] not in ("non-inferior", "equivalent")]
    suites = ET.Element(
        "testsuites", name="biaslab gate", tests=str(len(rows)), failures=str(len(failures)), errors="0"
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"biaslab gate ({result['mode']})",
        tests=str(len(rows)),
        failures=str(len(failures)),
        errors="0",
        skipped="0",
    )
    props = ET.SubElement(suite, "properties")
    for k, v in (
        ("baseline", result["baseline"]["label"]),
        ("candidate", result["candidate"]["label"]),
        ("alpha", f"{result['alpha']:g}"),
        ("adjustment", result["adjustment"]),
    ):
        ET.SubElement(props, "property", name=k, value=str(v))
    reasons = dict(
        zip(
            [r["name"] for r in rows if r["verdict"] not in ("non-inferior", "equivalent")],
            reason_lines(result),
            strict=True,
        )
    )
    for r in rows:
        case = ET.SubElement(suite, "testcase", classname=f"biaslab.gate.{r['probe']}", name=r["metric"], time="0")
        detail = (
            f"{r['metric']}: baseline {num(r['baseline'])}, candidate {num(r['candidate'])}, diff "
            f"{num(r['diff'], signed=True)}, bound {_bound(r, result['mode'])}, margin "
            f"{_margin(r, result['mode'])}, Holm p {pval(r['p_holm']) if r['p_holm'] is not None else 'n/a'}"
            f"; {r['design'] or 'not tested'}"
        )
        if r["name"] in reasons:
            failure = ET.SubElement(case, "failure", message=reasons[r["name"]], type=r["verdict"])
            failure.text = detail
        else:
            ET.SubElement(case, "system-out").text = detail
    checks = result.get("requirements", [])
    for c, line in zip(checks, requirement_lines(result), strict=True):
        case = ET.SubElement(
            suite, "testcase", classname="biaslab.gate.requirements", name=f"{c['name']} {c['require']}", time="0"
        )
        if c["status"] != "met":
            ET.SubElement(case, "failure", message=line, type=c["status"]).text = line
        else:
            ET.SubElement(case, "system-out").text = line
    n_failed = len(failures) + sum(c["status"] != "met" for c in checks)
    for element in (suites, suite):
        element.set("tests", str(len(rows) + len(checks)))
        element.set("failures", str(n_failed))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(result: dict[str, Any]) -> str:
    word = "non-inferior" if result["mode"] == "non-inferiority" else "equivalent"
    checks = result.get("requirements", [])
    n_bad = sum(r["verdict"] not in ("non-inferior", "equivalent") for r in result["metrics"])
    n_bad += sum(c["status"] != "met" for c in checks)
    head = (
        f"✅ PASS: every metric shown {word}"
        if result["passed"]
        else f"❌ FAIL: {n_bad} of {len(result['metrics']) + len(checks)} metric(s) not shown {word} or met"
    )
    lines = [
        f"## biaslab gate: {head}",
        "",
        f"Baseline **{_md(result['baseline']['label'])}**, candidate **{_md(result['candidate']['label'])}**.",
        "",
    ]
    lines += [f"- {_md(p)}: {_md(d['note'])}" for p, d in result["probes"].items()]
    lines += ["", "| " + " | ".join(HEADER) + " |", "|---|" + "---:|" * 6 + "---|"]
    for r in result["metrics"]:
        row = cells(r, result["mode"])
        mark = "✅" if r["verdict"] in ("non-inferior", "equivalent") else "❌"
        lines.append("| " + " | ".join(_md(x) for x in row[:-1]) + f" | {mark} {row[-1]} |")
    lines += ["", f"{_md(what_diff(result))}. {result['adjustment']}, alpha {result['alpha']:g}."]
    extra = result["notes"] + note_lines(result) + reason_lines(result) + requirement_lines(result)
    if extra:
        lines += [""] + [f"- {_md(x)}" for x in extra]
    lines += ["", f"<sub>{_md(result['method'])}</sub>", ""]
    return "\n".join(lines)


def card_section(gates: list[dict[str, Any]]) -> dict[str, Any]:
    """The suite report card's section for ``biaslab suite --baseline``: one card per model gated."""
    cards = []
    for g in gates:
        word = "PASS: every metric shown non-inferior" if g["passed"] else "FAIL: " + "; ".join(reason_lines(g))
        cards.append(
            {
                "title": f"{g['candidate']['label']} against {g['baseline']['label']}",
                "header": HEADER,
                "numeric": [1, 2, 3, 4, 5, 6],
                "rows": [cells(r, g["mode"]) for r in g["metrics"]],
                "note": "; ".join([*(f"{p}: {d['note']}" for p, d in g["probes"].items()), word]),
            }
        )
    intro = (
        (
            f"{what_diff(gates[0])}. {gates[0]['adjustment']}, alpha {gates[0]['alpha']:g}. The same test as "
            "`biaslab gate`: exit status and JUnit output there."
        )
        if gates
        else ""
    )
    return {"title": "Release gate against the baseline suite", "cards": cards, "intro": intro}


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(json_safe(result), indent=2, ensure_ascii=False) + "\n"
