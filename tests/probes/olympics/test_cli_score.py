"""`biaslab olympics score-annotated` / `extract` end to end, through the real CLI (run in process)."""

import csv
import importlib.util
import io
import json
from pathlib import Path

import pytest

from biaslab.probes.olympics.annotated import read_tsv, to_tsv_text
from tests.cli_runner import run_cli
from tests.conftest import requires_data

pytestmark = requires_data

MODEL = "llama3.1-8b"


def biaslab(*args):
    return run_cli(*args)


def shared(kind, model=MODEL):
    from biaslab.data import data_path

    return data_path(f"olympics/annotated/{kind}/{model}.tsv")


def score(spec, und, out, *extra):
    return biaslab(
        "olympics",
        "score-annotated",
        "--specified",
        spec,
        "--underspecified",
        und,
        "--out",
        out,
        "--permutations",
        10_000,
        "--seed",
        0,
        *extra,
    )


def test_score_annotated_writes_results(tmp_path):
    from biaslab.data.registry import sha256_of

    out = tmp_path / "run"
    proc = score(shared("specified"), shared("underspecified"), out)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["schema_version"] == 2 and results["probe"] == "olympics" and results["probe_version"] == "1"
    assert results["model"] == {"name": MODEL, "source": "annotated"}
    assert results["n_items"] == 169 and results["n_attempts"] == 507
    assert results["data"] == {
        str(shared("specified")): sha256_of(shared("specified")),
        str(shared("underspecified")): sha256_of(shared("underspecified")),
    }
    assert results["parameters"]["n_permutations"] == 10_000 and results["parameters"]["seed"] == 0
    m = results["metrics"]
    assert set(m) == {
        "avg_f1",
        "knowledge_based",
        "explicit_share",
        "explicit_score",
        "implicit_share",
        "implicit_score",
    }
    assert round(m["avg_f1"]["value"], 2) == 0.58 and round(m["knowledge_based"]["value"], 2) == -0.05
    assert round(100 * m["explicit_share"]["value"]) == 41 and round(m["explicit_score"]["value"], 2) == 0.06
    assert round(100 * m["implicit_share"]["value"]) == 50 and round(m["implicit_score"]["value"], 2) == 0.11
    for name in ("knowledge_based", "explicit_score", "implicit_score"):
        assert 0 < m[name]["p"] <= 1 and 0 < m[name]["q"] <= 1
    details = results["details"]  # the probe's own tables (results.json schema 2)
    assert round(details["metrics_without_unsure"]["avg_f1"]["value"], 2) == 0.59
    assert {"disciplines", "counts", "metrics_without_unsure"} <= set(details)
    assert details["counts"]["n_explicit"] == 69
    disc = (out / "disciplines.tsv").read_text().splitlines()
    assert disc[0].split("\t")[:2] == ["Discipline", "n_texts"] and len(disc) == 1 + len(details["disciplines"])
    assert (out / "disciplines.md").is_file()
    # the summary is printed
    assert "implicit-ambiguous score" in proc.stdout and "Athletics" in proc.stdout

    # same seed -> same numbers
    proc = score(shared("specified"), shared("underspecified"), tmp_path / "again")
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["metrics"] == results["metrics"]


def _corrupt(tmp_path, name, edit):
    df = read_tsv(shared("specified"))
    edit(df)
    path = tmp_path / name
    path.write_text(to_tsv_text(df, "specified"), encoding="utf-8")
    return path


def _write_frame(df, path):
    """Write any frame as TSV (csv module, like the public files), whatever its columns."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t", lineterminator="\n")
    writer.writerow(list(df.columns))
    writer.writerows(df.itertuples(index=False, name=None))
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


def _missing_column(tmp_path):
    df = read_tsv(shared("specified")).drop(columns=["real_s"])
    return _write_frame(df, tmp_path / "missing_column.tsv"), "real_s"


def _bad_noc(tmp_path):
    def edit(df):
        df.loc[4, "gen_s"] = "ZZZ"

    return _corrupt(tmp_path, "bad_noc.tsv", edit), "row 5"


def _bad_real_noc(tmp_path):
    def edit(df):
        df.loc[9, "real_b"] = "usa"

    return _corrupt(tmp_path, "bad_real_noc.tsv", edit), "row 10"


def _bad_year(tmp_path):
    def edit(df):
        df.loc[2, "Year"] = "2024"

    return _corrupt(tmp_path, "bad_year.tsv", edit), "row 3"


def _bad_status(tmp_path):
    def edit(df):
        df.loc[7, "status"] = "ok"

    return _corrupt(tmp_path, "bad_status.tsv", edit), "row 8"


def _bad_gender(tmp_path):
    def edit(df):
        df.loc[0, "Gender"] = "Mixed"

    return _corrupt(tmp_path, "bad_gender.tsv", edit), "row 1"


def _malformed(tmp_path):
    lines = Path(shared("specified")).read_text(encoding="utf-8").split("\n")
    lines.insert(1, "Swimming\tSummer\t1988\ttoo few fields")
    path = tmp_path / "malformed.tsv"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path, "line 2"


def _bad_quote(tmp_path):
    text = Path(shared("specified")).read_text(encoding="utf-8")
    path = tmp_path / "bad_quote.tsv"
    path.write_text(
        text + 'Rowing\tSummer\t1988\tEights\tMen\tGDR\tUSA\tFRG\tGDR\t\t\taccepted\t"unterminated\n', encoding="utf-8"
    )
    return path, "line"


def _binary(tmp_path):
    path = tmp_path / "binary.tsv"
    path.write_bytes(b"Discipline\tSeason\n\xff\xfe\x00\x01\n")
    return path, "line 2"


@pytest.mark.parametrize(
    "make",
    [_missing_column, _bad_noc, _bad_real_noc, _bad_year, _bad_status, _bad_gender, _malformed, _bad_quote, _binary],
)
def test_bad_input_fails_cleanly_and_keeps_earlier_results(tmp_path, make):
    bad, where = make(tmp_path)
    out = tmp_path / "out"
    # no results at all when the first run fails
    proc = score(bad, shared("underspecified"), out)
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error:") and bad.name in err and where in err, err
    assert not (out / "results.json").exists() and not (out / "disciplines.tsv").exists()

    # earlier results are not overwritten
    ok = score(shared("specified"), shared("underspecified"), out)
    assert ok.returncode == 0, ok.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    proc = score(bad, shared("underspecified"), out)
    assert proc.returncode != 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_bad_underspecified_file_and_bad_flags(tmp_path):
    df = read_tsv(shared("underspecified"))
    df.loc[3, "gen_f_b"] = "GER, XXX"
    bad = tmp_path / "und.tsv"
    bad.write_text(to_tsv_text(df, "underspecified"), encoding="utf-8")
    proc = score(shared("specified"), bad, tmp_path / "o")
    assert proc.returncode != 0 and "und.tsv, row 4" in proc.stderr and "gen_f_b" in proc.stderr
    # swapped files: the specified file lacks the underspecified columns
    proc = score(shared("underspecified"), shared("specified"), tmp_path / "o")
    assert proc.returncode != 0 and "missing column" in proc.stderr and "Traceback" not in proc.stderr
    proc = biaslab(
        "olympics",
        "score-annotated",
        "--specified",
        shared("specified"),
        "--underspecified",
        shared("underspecified"),
        "--out",
        tmp_path / "o",
        "--permutations",
        0,
    )
    assert proc.returncode != 0 and "--permutations" in proc.stderr
    proc = score(tmp_path / "nope.tsv", shared("underspecified"), tmp_path / "o")
    assert proc.returncode != 0 and "nope.tsv does not exist" in proc.stderr
    assert not (tmp_path / "o").exists()


HAS_EXTRACT = importlib.util.find_spec("biaslab.probes.olympics.extract") is not None


@pytest.mark.skipif(not HAS_EXTRACT, reason="biaslab.probes.olympics.extract not available")
@pytest.mark.parametrize("kind", ["specified", "underspecified"])
def test_extract_command(tmp_path, kind):
    df = read_tsv(shared(kind, "gpt-4o-mini"))
    gen = [c for c in df.columns if c.startswith("gen_")]
    df.loc[0, gen[0]] = "NOT A NOC"  # gen_* are ignored (overwritten) on input
    df.loc[1, "status"] = ""  # not annotated yet
    src = tmp_path / "in.tsv"
    src.write_text(to_tsv_text(df, kind), encoding="utf-8")
    out = tmp_path / "extracted.tsv"
    proc = biaslab("olympics", "extract", "--in", src, "--out", out)
    assert proc.returncode == 0, proc.stderr
    got = read_tsv(out)
    assert len(got) == len(df) and {"flags", "unmapped"} <= set(got.columns)
    assert got["text"].tolist() == df["text"].tolist()
    assert f"{len(df)} rows" in proc.stdout and "flagged" in proc.stdout and "unmapped" in proc.stdout


def test_extract_rejects_bad_input(tmp_path):
    df = read_tsv(shared("specified", "gpt-4o-mini")).drop(columns=["text"])
    src = _write_frame(df, tmp_path / "notext.tsv")
    out = tmp_path / "x.tsv"
    proc = biaslab("olympics", "extract", "--in", src, "--out", out)
    assert proc.returncode != 0 and "notext.tsv" in proc.stderr and "text" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not out.exists()


def test_score_annotated_never_replaces_a_model_run_without_overwrite(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    model_run = json.dumps({"probe": "olympics", "model": {"model": "he", "backend": "scripted"}})
    (out / "results.json").write_text(model_run)
    refused = score(shared("specified"), shared("underspecified"), out, "--permutations", 10)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "already holds a finished run (olympics); give another --out, or add --overwrite" in refused.stderr
    assert (out / "results.json").read_text() == model_run  # untouched
    for extra in (("--overwrite",), ()):  # replaced when asked; then the scoring itself is refreshed
        proc = score(shared("specified"), shared("underspecified"), out, "--permutations", 10, *extra)
        assert proc.returncode == 0, proc.stderr
        assert json.loads((out / "results.json").read_text())["model"]["source"] == "annotated"
