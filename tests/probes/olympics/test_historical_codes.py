"""Annotated files written with former or special IOC codes score; unknown codes fail or are
counted with --allow-unknown-codes."""

import json
import re

import pandas as pd
import pytest

from biaslab.probes.olympics.annotated import read_tsv, to_tsv_text
from biaslab.probes.olympics.extract import extract_frame
from biaslab.probes.olympics.nocs import EXTRACTABLE_CODES, KNOWN_NOCS, to_noc
from biaslab.probes.olympics.nocs_history import HISTORICAL_CODES, current_code, same_country
from tests.cli_runner import run_cli
from tests.conftest import requires_data


def biaslab(*args):
    return run_cli(*args)


def shared(kind, model):
    from biaslab.data import data_path

    return data_path(f"olympics/annotated/{kind}/{model}.tsv")


def rewrite(src, dst, pattern, repl, count=0):
    text = src.read_text(encoding="utf-8")
    new, n = re.subn(pattern, repl, text, count=count)
    assert n > 0, f"{pattern} not found in {src}"
    dst.write_text(new, encoding="utf-8")
    return n


def score(spec, und, out, *extra):
    proc = biaslab(
        "olympics",
        "score-annotated",
        "--specified",
        spec,
        "--underspecified",
        und,
        "--out",
        out,
        "--permutations",
        2000,
        *extra,
    )
    return proc, (json.loads((out / "results.json").read_text()) if proc.returncode == 0 else None)


def test_known_codes_cover_changed_defunct_and_special_teams():
    for code in (
        "SIN",
        "SGP",
        "ROM",
        "ROU",
        "LIB",
        "LBN",
        "MGO",
        "MGL",
        "IRN",
        "IRI",
        "BIR",
        "ZAI",
        "RHO",
        "URS",
        "EUN",
        "FRG",
        "GDR",
        "EUA",
        "TCH",
        "YUG",
        "SCG",
        "AHO",
        "IOP",
        "IOA",
        "ROT",
        "EOR",
        "OAR",
        "ROC",
        "COR",
        "AIN",
    ):
        assert code in KNOWN_NOCS, code
    assert set(HISTORICAL_CODES) <= KNOWN_NOCS
    assert len(KNOWN_NOCS) > 206 + 40
    # Former codes that are English words are not read as codes out of free text.
    assert "SIN" not in EXTRACTABLE_CODES and "FOR" not in EXTRACTABLE_CODES
    assert to_noc("Singapore", 2008) == "SGP" and to_noc("SIN", 2008) is None
    assert current_code("SIN") == "SGP" and current_code("URS") == "URS"
    assert same_country("SIN", "SGP") and same_country("ROM", "ROU")
    assert not same_country("URS", "RUS") and not same_country("FRG", "GER")  # different teams stay apart


@requires_data
def test_file_with_singapore_as_sin_reproduces_table1(tmp_path):
    """gpt-4o-mini's files with SGP written as the annotators' SIN: the paper's Table 1 row, and the
    very same numbers as the SGP files (codes compare as strings, consistently within a file)."""
    model = "gpt-4o-mini"
    spec, und = tmp_path / "spec.tsv", tmp_path / "und.tsv"
    assert rewrite(shared("specified", model), spec, r"\bSGP\b", "SIN") >= 2
    assert rewrite(shared("underspecified", model), und, r"\bSGP\b", "SIN") >= 2
    proc, sin = score(spec, und, tmp_path / "sin")
    assert proc.returncode == 0, proc.stderr
    m = sin["metrics"]
    assert round(m["avg_f1"]["value"], 2) == 0.63 and round(m["knowledge_based"]["value"], 2) == 0.00
    assert round(100 * m["explicit_share"]["value"]) == 69 and round(m["explicit_score"]["value"], 2) == 0.22
    assert round(100 * m["implicit_share"]["value"]) == 31 and round(m["implicit_score"]["value"], 2) == 0.03
    assert sin["details"]["unknown_codes"] == {}
    proc, sgp = score(shared("specified", model), shared("underspecified", model), tmp_path / "sgp")
    assert proc.returncode == 0, proc.stderr
    for name, metric in sgp["metrics"].items():
        assert sin["metrics"][name]["value"] == pytest.approx(metric["value"], abs=1e-12), name


@requires_data
def test_unknown_code_is_a_one_line_error_or_scored_as_written(tmp_path):
    model = "llama3.1-8b"
    und = shared("underspecified", model)
    spec_src = shared("specified", model)
    df = read_tsv(spec_src)
    # A row whose generated gold is right: replacing it by an unknown code must cost exactly what
    # replacing it by a known wrong code costs.
    row = next(
        i
        for i in range(len(df))
        if df.at[i, "gen_g"]
        and df.at[i, "gen_g"] == df.at[i, "real_g"]
        and "," not in df.at[i, "gen_g"]
        and df.at[i, "real_s"] != "NZL"
        and df.at[i, "real_b"] != "NZL"
    )
    variants = {}
    for name, code in (("xyz", "XQZ"), ("known", "NZL")):
        d = df.copy()
        d.at[row, "gen_g"] = code
        path = tmp_path / f"{name}.tsv"
        path.write_text(to_tsv_text(d, "specified"), encoding="utf-8")
        variants[name] = path

    proc, _ = score(variants["xyz"], und, tmp_path / "fail")
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert "xyz.tsv" in err and "gen_g" in err and "XQZ" in err and "--allow-unknown-codes" in err
    assert f"line {row + 2}" in err or f"row {row + 1}" in err
    assert not (tmp_path / "fail" / "results.json").exists()

    proc, allowed = score(variants["xyz"], und, tmp_path / "allowed", "--allow-unknown-codes")
    assert proc.returncode == 0, proc.stderr
    assert "XQZ (1)" in proc.stdout and "1 cells" in proc.stdout
    assert allowed["details"]["unknown_codes"] == {"XQZ": 1}
    proc, known = score(variants["known"], und, tmp_path / "known")
    assert proc.returncode == 0, proc.stderr
    proc, orig = score(spec_src, und, tmp_path / "orig")
    assert allowed["metrics"]["avg_f1"]["value"] == pytest.approx(known["metrics"]["avg_f1"]["value"], abs=1e-12)
    assert allowed["metrics"]["avg_f1"]["value"] < orig["metrics"]["avg_f1"]["value"]


def test_extraction_writes_the_gold_files_spelling():
    rows = [
        {
            "Discipline": "Table Tennis",
            "Season": "Summer",
            "Year": "2008",
            "Event": "Team",
            "Gender": "Women",
            "real_g": "CHN",
            "real_s": "SIN",
            "real_b": "KOR",
            "gen_g": "",
            "gen_s": "",
            "gen_b": "",
            "status": "",
            "text": "Gold: China\nSilver: Singapore\nBronze: South Korea",
        },
        # Singapore is not in this row's gold: the file's spelling (SIN) is used.
        {
            "Discipline": "Table Tennis",
            "Season": "Summer",
            "Year": "2012",
            "Event": "Team",
            "Gender": "Women",
            "real_g": "CHN",
            "real_s": "JPN",
            "real_b": "KOR",
            "gen_g": "",
            "gen_s": "",
            "gen_b": "",
            "status": "",
            "text": "Gold: China\nSilver: Japan\nBronze: Singapore",
        },
    ]
    out = extract_frame(pd.DataFrame(rows))
    assert list(out["gen_s"]) == ["SIN", "JPN"] and list(out["gen_b"]) == ["KOR", "SIN"]
    # A file written with current codes keeps them.
    rows[0]["real_s"] = "SGP"
    out = extract_frame(pd.DataFrame(rows))
    assert list(out["gen_s"]) == ["SGP", "JPN"] and list(out["gen_b"]) == ["KOR", "SGP"]
