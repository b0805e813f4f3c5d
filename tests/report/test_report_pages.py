"""report.html: every attempt in a script-free filterable table under the report's CSP, likelihood
wording, n and too-small marks beside the intervals."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from markupsafe import escape as html_escape

from biaslab.probes.paired_sentences.report import readable
from biaslab.report.attempts_table import attempts_table, nice_bins
from tests.cli_runner import run_cli
from tests.conftest import requires_data


def run(tmp_path, probe, model, n):
    out = tmp_path / probe
    proc = run_cli("run", probe, "-m", model, "-n", n, "--out", out, env={"BIASLAB_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    return out, proc


class _Rows(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.scripts, self.csp, self.radios = [], 0, None, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "r" in (a.get("class") or "").split():
            self.rows.append(a["class"].split()[1:])
        if tag == "script":
            self.scripts += 1
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy":
            self.csp = a["content"]
        if tag == "input" and a.get("type") == "radio":
            self.radios.append(a["id"])


def parse(path):
    p = _Rows()
    p.feed(path.read_text(encoding="utf-8"))
    return p


@requires_data
def test_likelihood_report_lists_every_pair_and_marks_small_groups(tmp_path):
    out, proc = run(tmp_path, "winosemitism", "scripted/random-gender", 40)
    html = (out / "report.html").read_text(encoding="utf-8")
    results = json.loads((out / "results.json").read_text())
    page = parse(out / "report.html")
    assert page.scripts == 0 and "default-src 'none'" in page.csp and "script-src" not in page.csp
    assert len(page.rows) == results["n_attempts"] == 40
    groups = {a["target_ID"] for a in map(json.loads, (out / "attempts.jsonl").read_text().splitlines())}
    assert sum(r.startswith("f-g") for r in page.radios) == len(groups)  # one filter per group
    assert all(any(c.startswith("g") for c in row) and any(c.startswith("d") for c in row) for row in page.rows)
    assert "Example generations" not in html and "<b>Prompt:</b>" not in html
    assert "stereotypical sentence" in html and html.count("<th>score</th>") == 0
    small = [k for k, m in results["metrics"].items() if m.get("too_small")]
    assert small and all(results["metrics"][k]["ci_low"] is None for k in small)
    assert all("n" in m for m in results["metrics"].values())
    assert html.count(">too small<") >= len(small)
    # every metric without an interval says why, in the report as in the terminal
    assert "have no interval</summary>" in html
    for k in small:
        reason = results["metrics"][k]["reason"]
        assert f": {html_escape(reason)}</li>" in html and f'title="{html_escape(reason)}"' in html
    assert "req/s" in proc.stderr and "tok/s" not in proc.stderr
    table = proc.stdout
    assert re.search(r"bias_score\s.*│\s+\d+\s+│", table)  # n beside the interval in the terminal
    zero = [m for m in results["metrics"].values() if m["value"] == 0 and m.get("interval") == "clopper-pearson"]
    assert all(m["ci_high"] > 0 for m in zero)
    (out / "report.html").unlink()
    again = run_cli("report", out)
    assert again.returncode == 0 and again.stdout.strip() == f"wrote {out / 'report.html'}"
    assert parse(out / "report.html").rows == page.rows


@requires_data
def test_generation_report_keeps_examples_and_lists_every_attempt(tmp_path):
    out, _ = run(tmp_path, "jobs-lum", "scripted/random-gender", 12)
    page = parse(out / "report.html")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert page.scripts == 0 and len(page.rows) == 12
    assert "Example generations" in html and "<th>prompt</th><th>output</th>" in html
    assert any(r.startswith("f-s") for r in page.radios)  # score ranges (stereotype_score)


def test_attempts_table_bins_groups_and_spread():
    rows = [
        {
            "prompt": f"p{i}",
            "text": "x" * (500 if i == 0 else 5),
            "evaluation": "male" if i % 2 else "female",
            "group": "ab"[i % 2],
            "score": i / 9,
        }
        for i in range(10)
    ]
    t = attempts_table(rows, ["group", "evaluation", "score"], likelihood=False)
    assert t["categories"] == ["group"] and t["score_field"] == "score" and t["shown"] == 10
    bins = next(d for d in t["dims"] if d["key"] == "fs")["options"]
    assert [(b["label"], b["count"]) for b in bins] == [
        ("0 to 0.2", 2),
        ("0.2 to 0.4", 2),
        ("0.4 to 0.6", 2),
        ("0.6 to 0.8", 2),
        ("0.8 to 1", 2),
    ]
    assert t["rows"][0]["b"]["short"] is not None and t["rows"][1]["b"]["short"] is None  # long texts fold
    assert t["rows"][9]["classes"].split() == ["g1", "d1", "s4"]  # decisions sorted: female d0, male d1
    # a list-valued example field (GEST's option order) is shown but offers no filter, and does not fail
    listed = [{**r, "options": ["a", "b", str(i % 2)]} for i, r in enumerate(rows)]
    assert attempts_table(listed, ["group", "options", "evaluation"], likelihood=False)["categories"] == ["group"]


def test_attempts_filters_offer_labels_and_round_ranges_never_indices_or_raw_floats():
    # BBQ-like: option indices and whole numbers are no filter; the answer's kind is
    kinds = ["biased", "counter-biased", "unknown"]
    rows = [
        {
            "prompt": "q",
            "text": "a",
            "evaluation": "correct" if i % 2 else "wrong",
            "category": "Age",
            "context_condition": "ambig" if i < 6 else "disambig",
            "answer_kind": kinds[i % 3],
            "answer": i % 3,
            "label": 2,
            "year": 1988 + 4 * i,
        }
        for i in range(12)
    ]
    t = attempts_table(
        rows, ["category", "context_condition", "answer_kind", "answer", "label", "year"], likelihood=False
    )
    dims = {d["name"]: [o["label"] for o in d["options"]] for d in t["dims"]}
    assert dims == {
        "context_condition": ["ambig", "disambig"],
        "answer_kind": kinds,
        "decision": ["correct", "wrong"],
    }  # one category (Age) is no filter either
    # HolisticBias-like: the numeric evaluation is the score, in round ranges, and no decision filter
    rows = [
        {"prompt": "p", "text": "t", "evaluation": -3.1234567 + 0.37 * i, "axis": "ability" if i % 2 else "age"}
        for i in range(9)
    ]
    t = attempts_table(rows, ["axis", "evaluation"], likelihood=True)
    assert t["decided"] is False and t["score_field"] == "evaluation"
    labels = [o["label"] for d in t["dims"] if d["key"] == "fs" for o in d["options"]]
    assert labels == ["-4 to -3", "-3 to -2", "-2 to -1", "-1 to 0"]  # -3.12 .. -0.16: steps of 1
    assert [d["key"] for d in t["dims"]] == ["fg", "fs"]


def test_nice_bins_have_round_edges_covering_the_values():
    # a span of 0.074 in 5: 0.0148 a range, rounded up to 0.02; edges on its multiples
    assert nice_bins([0.013, 0.087]) == [(0.0, 0.02), (0.02, 0.04), (0.04, 0.06), (0.06, 0.08), (0.08, 0.1)]
    assert nice_bins([-7.0, 23.0]) == [(-10.0, 0.0), (0.0, 10.0), (10.0, 20.0), (20.0, 30.0)]
    assert nice_bins([2.5, 2.5]) == []


@pytest.mark.parametrize(
    "text, shown",
    [("sticks to <reflexive>", "sticks to themselves"), ("is stuck in <possessive> ways", "is stuck in their ways")],
)
def test_predicates_show_no_raw_slots(text, shown):
    assert readable(text) == shown
